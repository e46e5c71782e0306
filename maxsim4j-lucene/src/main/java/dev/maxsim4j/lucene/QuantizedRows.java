package dev.maxsim4j.lucene;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import java.util.Arrays;
import org.apache.lucene.util.BytesRef;

/**
 * The stored bytes of one row of a quantized batch, recovered from its dequantized values and its scales
 * (the public API gives values and scales, not bytes): each value divided by its token's scale is within
 * rounding of the stored q, so the nearest int8, e4m3 or sign is q itself.
 */
final class QuantizedRows {
  /** The non-negative e4m3fn values in code order 0x00..0x7e (ascending), for the nearest-code search. */
  private static final double[] E4M3_POSITIVE = new double[0x7f];

  static {
    for (int b = 0; b < 0x7f; b++) {
      int exponent = (b >>> 3) & 0xf;
      int mantissa = b & 0x7;
      E4M3_POSITIVE[b] = exponent == 0 ? mantissa * Math.scalb(1.0, -9) : (8 + mantissa) * Math.scalb(1.0, exponent - 10);
    }
  }

  private QuantizedRows() {}

  /** The stored value ({@link QuantizedLateInteractionField}'s layout) of the valid tokens of one-row {@code row}. */
  static BytesRef encode(TokenBatch row) {
    DType type = row.dtype();
    int dim = row.dim();
    int tokenBytes = (int) type.bytesPerToken(dim);
    float[] allScales = row.scales();
    int slots = row.isPacked() ? row.length(0) : row.maxLength();
    byte[] data = new byte[Math.multiplyExact(row.validTokens(0), tokenBytes)];
    float[] scales = new float[row.validTokens(0)];
    int out = 0;
    for (int t = 0; t < slots; t++) {
      if (!row.isValid(0, t)) {
        continue;
      }
      // one row: its slot t is stored token t, packed or padded
      float s = allScales[t];
      scales[out] = s;
      for (int k = 0; k < dim; k++) {
        double q = s == 0 ? 0 : row.get(0, t, k) / (double) s;
        int at = out * tokenBytes;
        switch (type) {
          case INT8 -> data[at + k] = (byte) Math.round(q);
          case FLOAT8_E4M3 -> data[at + k] = e4m3(q);
          case BINARY -> {
            if (s == 0 || q > 0) {
              data[at + k / 8] |= (byte) (0x80 >>> (k % 8));
            }
          }
          default -> throw new IllegalStateException(type + " is not quantized");
        }
      }
      out++;
    }
    return QuantizedLateInteractionField.encode(type, data, scales, scales.length, dim);
  }

  /** The e4m3fn code nearest to {@code q} (NaN for NaN). */
  private static byte e4m3(double q) {
    if (Double.isNaN(q)) {
      return 0x7f;
    }
    double m = Math.abs(q);
    int i = Arrays.binarySearch(E4M3_POSITIVE, m);
    int code;
    if (i >= 0) {
      code = i;
    } else {
      int above = Math.min(-i - 1, E4M3_POSITIVE.length - 1);
      int below = Math.max(above - 1, 0);
      code = m - E4M3_POSITIVE[below] <= E4M3_POSITIVE[above] - m ? below : above;
    }
    return (byte) (q < 0 || (q == 0 && 1 / q < 0) ? code | 0x80 : code);
  }
}
