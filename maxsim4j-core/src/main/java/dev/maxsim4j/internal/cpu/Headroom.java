package dev.maxsim4j.internal.cpu;

import dev.maxsim4j.DType;

/**
 * Keeps the dot products of a scaled pair inside fp32 where the products of the values themselves are: the
 * kernels multiply the staged values of both sides (a quantized side's stored values) and apply queryScale x
 * documentScale after, so a float token of huge values met by stored values up to 448 could overflow where its
 * products with the tiny scaled values they stand for do not. Such a token is divided by a power of two 2^e
 * (exact) and its scale multiplied by 2^e. Tokens whose |values| sum, times the largest value the other side
 * stages, stays under a quarter of fp32's largest are left as they are, so ordinary inputs keep every bit.
 */
final class Headroom {
  private static final double LIMIT = Float.MAX_VALUE / 4.0;

  private Headroom() {}

  /** The largest |stored value| a quantized type stages: int8 128, e4m3 448, 1-bit 1. */
  static double largestStored(DType type) {
    return switch (type) {
      case INT8 -> 128;
      case FLOAT8_E4M3 -> 448;
      case BINARY -> 1;
      default -> throw new IllegalArgumentException(type + " is not quantized");
    };
  }

  /**
   * The power of two a token is divided by: {@code values[from + i * stride]} for i in [0, n), whose products
   * meet values of at most {@code largest}; 1 where none is needed, or where a value is not finite (an infinity
   * stays one, as given).
   */
  static float divisor(float[] values, int from, int n, int stride, double largest) {
    double sum = 0;
    for (int i = 0; i < n; i++) {
      sum += Math.abs(values[from + i * stride]);
    }
    double bound = sum * largest;
    if (!(bound > LIMIT) || Double.isInfinite(sum)) {
      return 1f; // NaN or in range: nothing to do
    }
    return Math.scalb(1f, Math.getExponent(bound / LIMIT) + 1);
  }

  /**
   * Divides {@code values[from + i * stride]}, i in [0, n), by {@code divisor}, a power of two: exact but for
   * values it takes below fp32's normal range, far below the token's largest.
   */
  static void divide(float[] values, int from, int n, int stride, float divisor) {
    float inverse = 1f / divisor;
    for (int i = 0; i < n; i++) {
      values[from + i * stride] *= inverse;
    }
  }
}
