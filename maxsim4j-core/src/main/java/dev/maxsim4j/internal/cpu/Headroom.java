package dev.maxsim4j.internal.cpu;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.Quantization;

/**
 * Keeps the dot products of a scaled pair inside fp32's range, where the products of the values themselves are:
 * the kernels multiply the staged values of both sides (a quantized side's stored values) and apply queryScale x
 * documentScale after. A float token of huge values met by stored values up to 448 could pass fp32's range where its
 * products with the tiny scaled values they stand for do not, and fp32 partial sums near that range cancel what
 * float64 keeps: such a token's pairs are scored exactly, as unscaled pairs whose partial sums may overflow are
 * ({@link #mayOverflow}). A token of tiny values met by e4m3's fractional stored values (down to 2^-9) could round
 * its products in fp32's subnormal range, losing bits (or the whole product) that a large scale would then bring
 * back into the score: such a token is divided by a power of two 2^e (exact; e negative) and its scale multiplied by
 * 2^e. Tokens whose |values| sum, times the largest value the other side stages, lies between 2^-64 and a quarter of
 * fp32's largest are left as they are, so ordinary inputs keep every bit.
 */
final class Headroom {
  private static final double LIMIT = Float.MAX_VALUE / 4.0;
  /** Below this bound a token is scaled up to a bound in [1, 2): its largest products stay far above subnormal. */
  private static final double SMALL = 0x1p-64;

  private Headroom() {}

  /** The largest |stored value| a quantized type stages: int8 128, e4m3 448, 1-bit 1. */
  static double largestStored(DType type) {
    return switch (type) {
      case INT8 -> 128;
      case FLOAT8_E4M3 -> Quantization.E4M3_MAX;
      case BINARY -> 1;
      default -> throw new IllegalArgumentException(type + " is not quantized");
    };
  }

  /**
   * The power of two a token is divided by: {@code values[from + i * stride]} for i in [0, n), whose products
   * meet values of at most {@code largest}; 1 where none is needed or the sum is NaN. Below 1 (down to fp32's
   * smallest, 2^-149) for a token of tiny values; infinite where its products may pass fp32's range, a token
   * {@link #divide} leaves as it is and sends to the exact path.
   */
  static float divisor(float[] values, int from, int n, int stride, double largest) {
    double sum = 0;
    for (int i = 0; i < n; i++) {
      sum += Math.abs(values[from + i * stride]);
    }
    double bound = sum * largest;
    if (bound > 0 && bound < SMALL) {
      return Math.scalb(1f, Math.getExponent(bound)); // bound >= 2^-149, the smallest nonzero |value|
    }
    return bound > LIMIT ? Float.POSITIVE_INFINITY : 1f; // 1: NaN or in range, nothing to do
  }

  /**
   * Whether an unscaled fp32 dot product of a query token whose |values| sum to {@code querySum} and a document token
   * of |values| up to {@code documentLargest}, its partial sums bounded by their product, may pass fp32's range part
   * way: a partial sum past -3.4e38 stays -infinity, so that token would drop out of the max where its exact value
   * may win (the kernels score such pairs exactly). False where either is NaN: the score is NaN anyway.
   */
  static boolean mayOverflow(double querySum, double documentLargest) {
    return querySum * documentLargest > Float.MAX_VALUE / 2.0;
  }

  /** The largest finite |value| an unscaled document of {@code type} holds: fp16's 65504, else fp32's largest. */
  static double largestFinite(DType type) {
    return type == DType.FLOAT16 ? 65504 : Float.MAX_VALUE;
  }

  /** The largest sum of |values| of {@code tokens} tokens of {@code dim} values from {@code values[0]}, in float64. */
  static double largestAbsSum(float[] values, int tokens, int dim) {
    double largest = 0;
    for (int t = 0; t < tokens; t++) {
      double sum = 0;
      for (int k = 0; k < dim; k++) {
        sum += Math.abs(values[t * dim + k]);
      }
      largest = Math.max(largest, sum);
    }
    return largest;
  }

  /**
   * The smallest |value| whose products with every nonzero stored value of {@code other} stay exact or normal:
   * e4m3's codes reach 2^-9, so a float value below 2^-117 may meet one in fp32's subnormal range, losing bits
   * that a large scale would bring back into the score (int8's and one bit's codes are integers, whose products
   * with a subnormal value are exact): 0 where no value is too small.
   */
  static float exactFrom(DType other) {
    return other == DType.FLOAT8_E4M3 ? 0x1p-117f : 0f;
  }

  /**
   * Divides {@code values[from + i * stride]}, i in [0, n), by {@code divisor}, a power of two of at most 1: exact.
   * Returns whether the token's pairs are scored exactly ({@link ReferenceKernel#maxSim}) instead: where the
   * divisor is above 1 (the token is then left as it is), or where a nonzero value lies below {@code exactFrom}
   * ({@link #exactFrom}) after the division: its bits (or all of it) are lost, and a document that zeroes the
   * token's large values leaves only these. A division, not a product with the inverse: the inverse of a divisor
   * below 2^-127 is not a float.
   */
  static boolean divide(float[] values, int from, int n, int stride, float divisor, float exactFrom) {
    if (divisor > 1f) {
      return true;
    }
    if (divisor == 1f && exactFrom == 0f) {
      return false; // nothing to divide, and no value too small for its products
    }
    boolean lost = false;
    for (int i = 0; i < n; i++) {
      float v = values[from + i * stride];
      float w = v / divisor;
      values[from + i * stride] = w;
      lost |= v != 0f && Math.abs(w) < exactFrom;
    }
    return lost;
  }
}
