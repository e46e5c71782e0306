package dev.maxsim4j.cli;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The stored bytes of a quantized batch, recovered from its values and scales through the public API (which
 * hands out values, not bytes): every stored value is scale x q rounded to fp32, and q is far enough from its
 * neighbours that dividing by the scale and rounding to the nearest code gives q back. Each slice is decoded
 * again and compared, so a byte that does not give the same value is an error, never a silent change.
 */
public final class StoredCodes {
  private StoredCodes() {}

  /**
   * Writes the bytes of every stored token of {@code q} (padding and masked tokens included, in storage
   * order) to {@code out} from byte {@code at}.
   */
  public static void copy(TokenBatch q, MemorySegment out, long at) {
    DType dtype = q.dtype();
    int d = q.dim();
    float[] values = q.toFloatArray();
    float[] scales = q.scales();
    int tokens = scales.length;
    if ((long) tokens * d != values.length) {
      throw new IllegalStateException(q + " holds " + values.length + " values and " + tokens + " scales; expected "
          + d + " values per scale");
    }
    int width = (int) dtype.bytesPerToken(d);
    byte[] codes = new byte[Math.toIntExact((long) tokens * width)];
    for (int t = 0; t < tokens; t++) {
      float s = scales[t];
      for (int k = 0; k < d; k++) {
        float v = values[t * d + k];
        switch (dtype) {
          case INT8 -> codes[t * width + k] = s == 0 ? 0
              : (byte) Math.max(-128, Math.min(127, Math.rint(v / (double) s)));
          case FLOAT8_E4M3 -> codes[t * width + k] = e4m3(s == 0 ? Math.copySign(0.0, v) : v / (double) s);
          case BINARY -> {
            if (Math.copySign(1f, v) * Math.copySign(1f, s) > 0) {
              codes[t * width + k / 8] |= (byte) (0x80 >>> (k % 8));
            }
          }
          default -> throw new IllegalArgumentException(dtype + " is not a quantized type");
        }
      }
    }
    float[] again = decode(dtype, codes, scales, tokens, d);
    for (int x = 0; x < values.length; x++) {
      if (Float.floatToIntBits(again[x]) != Float.floatToIntBits(values[x]) && !(again[x] == values[x])) {
        throw new IllegalStateException("quantized value " + values[x] + " at token " + x / d + ", dimension "
            + x % d + " has no " + dtype + " code at scale " + scales[x / d] + " (decodes to " + again[x] + ")");
      }
    }
    MemorySegment.copy(codes, 0, out, ValueLayout.JAVA_BYTE, at, codes.length);
  }

  /** The e4m3fn byte nearest to {@code x} (finite, within the range the quantizer produces). */
  private static byte e4m3(double x) {
    double a = Math.abs(x);
    int code;
    if (a < 0x1p-6) {
      code = (int) Math.rint(a * 0x1p9); // subnormal: m x 2^-9; m = 8 is the smallest normal, 0x08
    } else {
      int e = Math.getExponent(a);
      // a mantissa that rounds up to 8 carries into the exponent field, as the encoding does
      code = ((e + 7) << 3) + (int) Math.rint((Math.scalb(a, -e) - 1) * 8);
    }
    code = Math.min(code, 0x7e);
    return (byte) (Math.copySign(1.0, x) < 0 ? code | 0x80 : code);
  }

  private static float[] decode(DType dtype, byte[] codes, float[] scales, int tokens, int d) {
    return TokenBatch.ofBytes(dtype, codes, scales, 1, tokens, d).toFloatArray();
  }
}
