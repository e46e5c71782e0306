package dev.maxsim4j.internal;

import dev.maxsim4j.DType;
import java.util.Arrays;

/**
 * The codecs of the quantized token types: how a stored byte (or bit) becomes a value, and how a float token
 * becomes bytes plus a scale. {@link #E4M3} is the one table of fp8 values: a kernel that decodes by moving bits
 * instead (the CPU's Dequantizer, the CUDA kernels) must give these values bit for bit.
 */
public final class Quantization {
  /** The value of every e4m3fn byte; {@code 0x7f} and {@code 0xff} are NaN. */
  public static final float[] E4M3 = new float[256];

  /** The largest finite e4m3fn value. */
  public static final float E4M3_MAX = 448f;

  static {
    for (int b = 0; b < 256; b++) {
      int exponent = (b >>> 3) & 0xf;
      int mantissa = b & 0x7;
      double magnitude = exponent == 0
          ? mantissa * Math.scalb(1.0, -9) // subnormal: m/8 x 2^-6
          : (8 + mantissa) * Math.scalb(1.0, exponent - 10); // (1 + m/8) x 2^(e-7)
      float value = (float) magnitude;
      if ((b & 0x7f) == 0x7f) {
        value = Float.NaN;
      }
      E4M3[b] = (b & 0x80) != 0 ? -value : value;
    }
  }

  private Quantization() {}

  /**
   * The value of e4m3fn code {@code code} from its bits, equal to {@link #E4M3}'s entry bit for bit: for a code read
   * from mapped memory, where a load that faults (its file cut short) leaves a pending error and a stale register,
   * which as the table's index (its bounds check proved away) would read wild memory and crash the JVM.
   */
  public static float e4m3(byte code) {
    int sign = (code & 0x80) << 24;
    if ((code & 0x7f) == 0x7f) {
      return Float.intBitsToFloat(sign | 0x7fc00000);
    }
    // exponent and mantissa moved into fp32's fields read as fp32 are the value times 2^-120 (subnormals too)
    return Float.intBitsToFloat(sign | (code & 0x7f) << 20) * 0x1p120f;
  }

  /** A token's stored bytes and scale, as {@link #quantize} makes them. */
  public record Quantized(byte[] data, float[] scales) {}

  /**
   * Quantizes {@code tokens} (every stored token, valid or not) to {@code type}: per token, the scale that
   * keeps the largest magnitude representable (absmax / 127 for int8, absmax / 448 for fp8, values rounded
   * to nearest even) or, for one bit, the mean magnitude (the scale that minimises the squared error given
   * the signs; never 0 for a token that is not all zeros). A token of zeros gets scale 1 (int8, fp8) or 0 (binary):
   * it stays exactly zero. A slot no score reads (masked, or padding past its row) that the type cannot store (NaN,
   * an infinity, a scale past fp32's largest value) is stored as zeros.
   *
   * @throws IllegalArgumentException when a valid token holds NaN or an infinity
   */
  public static Quantized quantize(Tokens tokens, DType type) {
    int dim = tokens.dim;
    int n = tokens.storedTokens;
    int tokenBytes = Math.toIntExact(type.bytesPerToken(dim));
    byte[] out = new byte[Math.multiplyExact(n, tokenBytes)];
    float[] scales = new float[n];
    float[] row = new float[n == 0 ? 0 : dim]; // a batch of no token may have any d: stage none
    // a quantized token is read exactly, scale x q in float64: its fp32 product overflows for a large scale where
    // the value, and so its requantization, is finite
    double[] exact = tokens.dtype.isQuantized() ? new double[row.length] : null;
    boolean[] scored = scoredSlots(tokens);
    for (int t = 0; t < n; t++) {
      if (exact == null) {
        tokens.copyTokens(t, 1, row, 0);
      } else {
        for (int k = 0; k < dim; k++) {
          exact[k] = tokens.value(t, k);
        }
      }
      double absMax = 0;
      double absSum = 0;
      boolean storable = true;
      for (int k = 0; k < dim && storable; k++) {
        double v = exact == null ? row[k] : exact[k];
        storable = Double.isFinite(v);
        if (!storable && (scored == null || scored[t])) {
          throw new IllegalArgumentException("stored token " + t + " holds " + (float) v + " at dimension " + k
              + "; expected finite values to quantize");
        }
        absMax = Math.max(absMax, Math.abs(v));
        absSum += Math.abs(v);
      }
      double magnitude = type == DType.BINARY ? absSum / dim : absMax / top(type);
      if (scored != null && !scored[t] && (!storable || magnitude > Float.MAX_VALUE)) {
        // a slot no score reads whose values the type cannot store (NaN, infinities, a scale past fp32's): zeros
        absMax = absSum = 0;
        Arrays.fill(row, 0f);
        if (exact != null) {
          Arrays.fill(exact, 0);
        }
      }
      int base = t * tokenBytes;
      switch (type) {
        case INT8 -> {
          float scale = fitScale(t, absMax, top(type), type);
          for (int k = 0; k < dim; k++) {
            double code = exact == null ? (double) row[k] / scale : exact[k] / scale;
            out[base + k] = (byte) Math.max(-127, Math.min(127, Math.rint(code)));
          }
          scales[t] = scale;
        }
        case FLOAT8_E4M3 -> {
          float scale = fitScale(t, absMax, top(type), type);
          for (int k = 0; k < dim; k++) {
            out[base + k] = encodeE4m3(exact == null ? (double) row[k] / scale : exact[k] / scale);
          }
          scales[t] = scale;
        }
        case BINARY -> {
          for (int k = 0; k < dim; k++) {
            if ((exact == null ? row[k] : exact[k]) >= 0) {
              out[base + (k >>> 3)] |= (byte) (0x80 >>> (k & 7));
            }
          }
          scales[t] = fitScale(t, absSum / dim, top(type), type);
        }
        default -> throw new IllegalArgumentException("type " + type
            + " is not a quantized type; expected INT8, FLOAT8_E4M3 or BINARY");
      }
    }
    return new Quantized(out, scales);
  }

  /** The largest code a scale maps the largest magnitude to (one bit: 1, the scale being the mean magnitude). */
  private static float top(DType type) {
    return switch (type) {
      case INT8 -> 127;
      case FLOAT8_E4M3 -> E4M3_MAX;
      default -> 1;
    };
  }

  /**
   * Per stored token, whether a score reads it (valid in its row), or null where every stored token is valid.
   */
  private static boolean[] scoredSlots(Tokens tokens) {
    if (tokens.mask == null && tokens.rowsCoverStorage) {
      return null;
    }
    boolean[] scored = new boolean[tokens.storedTokens];
    for (int r = 0; r < tokens.rows; r++) {
      for (int t = 0; t < tokens.rowLength[r]; t++) {
        scored[tokens.rowStart[r] + t] = tokens.isValid(r, t);
      }
    }
    return scored;
  }

  /**
   * As {@link #fitScale(double, float)} for stored token {@code token}, or for one bit its mean magnitude
   * {@code magnitude} as the scale; a scale past fp32's largest (only a quantized token of a huge scale needs one)
   * is refused by name rather than clipped to it, which would change the values.
   */
  private static float fitScale(int token, double magnitude, float top, DType type) {
    boolean binary = type == DType.BINARY;
    if (magnitude / top > Float.MAX_VALUE) {
      String held = binary ? "a mean magnitude of " : "magnitudes up to ";
      String allowed = binary ? "a mean magnitude of at most " : "magnitudes up to ";
      throw new IllegalArgumentException("stored token " + token + " holds " + held + magnitude + ", whose "
          + type + " scale " + magnitude / top + " passes fp32's largest value; expected " + allowed
          + (double) top * Float.MAX_VALUE + " to quantize to " + type);
    }
    return binary ? meanScale(magnitude) : fitScale(magnitude, top);
  }

  /**
   * One bit's scale: the mean magnitude in fp32, the smallest subnormal where that rounds to 0 for a token that is
   * not all zeros (it would vanish).
   */
  static float meanScale(double mean) {
    float scale = (float) mean;
    return scale == 0 && mean > 0 ? Float.MIN_VALUE : scale;
  }

  /**
   * The fp32 scale that maps the largest code {@code top} to {@code absMax} (1 for a token of zeros), moved by
   * an ulp where rounding it to fp32 would break that: a subnormal {@code absMax / top} rounded down would clip
   * the largest values (or vanish to 0 and zero the token), one rounded up near fp32's limit would dequantize
   * the largest code to infinity. A normal scale is left as rounded: half an ulp never moves a code.
   */
  static float fitScale(double absMax, float top) {
    if (absMax == 0) {
      return 1f;
    }
    float scale = (float) (absMax / top);
    if (scale < Float.MIN_NORMAL && (double) scale * top < absMax) {
      scale = Math.nextUp(scale);
    }
    // only a scale rounded up: the largest value of a requantized token may lie past fp32's largest itself
    if (Float.isInfinite(scale * top) && (double) scale * top > absMax) {
      scale = Math.nextDown(scale);
    }
    return scale;
  }

  /**
   * The e4m3fn byte nearest to {@code x} (ties to the even code), saturating at +-448; NaN gives {@code 0x7f}. A
   * double, so that a quotient is rounded once, here, and not first to the float nearest to it (which may be a
   * midpoint between two codes).
   */
  public static byte encodeE4m3(double x) {
    if (Double.isNaN(x)) {
      return 0x7f;
    }
    int sign = (int) (Double.doubleToRawLongBits(x) >>> 56) & 0x80;
    double a = Math.abs(x);
    if (a >= E4M3_MAX) {
      return (byte) (sign | 0x7e);
    }
    if (a < 0x1p-6) {
      // subnormal: m x 2^-9, m = 8 being the smallest normal, whose code is 8 too (scaling by 2^9 is exact)
      return (byte) (sign | (int) Math.rint(a * 512));
    }
    int e = Math.getExponent(a);
    // the mantissa rounded to 3 bits, ties to even; 16 carries into the next exponent, as the code does
    int m = (int) Math.rint(Math.scalb(a, 3 - e));
    return (byte) (sign | (((e + 7) << 3) + m - 8));
  }
}
