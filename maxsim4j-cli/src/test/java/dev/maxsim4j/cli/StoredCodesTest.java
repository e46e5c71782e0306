package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The bytes recovered from a quantized batch decode to exactly its values, over every magnitude. */
class StoredCodesTest {
  @Test
  void recoveredBytesDecodeToTheSameValues() {
    SplittableRandom rnd = new SplittableRandom();
    double[] magnitudes = {1e-40, 1e-38, 1e-30, 1e-6, 1, 1e6, 1e30, 3e38};
    for (DType dtype : new DType[] {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
      for (int d : new int[] {1, 3, 33, 127, 513}) {
        int tokens = 2 * magnitudes.length + 2;
        float[] x = new float[tokens * d];
        for (int t = 0; t < tokens - 2; t++) {
          double m = magnitudes[t % magnitudes.length];
          for (int k = 0; k < d; k++) {
            // a token of one magnitude, some of its values far smaller (rounded to zero codes)
            double v = m * rnd.nextGaussian() * (rnd.nextInt(5) == 0 ? 1e-3 : 1);
            x[t * d + k] = (float) Math.max(-3.4e38, Math.min(3.4e38, v));
          }
        }
        x[(tokens - 1) * d] = -0f; // the last token all zeros but one negative zero; the one before all zeros
        TokenBatch q = TokenBatch.ofFloats(x, 1, tokens, d).quantize(dtype);
        byte[] codes = new byte[(int) (tokens * dtype.bytesPerToken(d))];
        StoredCodes.copy(q, MemorySegment.ofArray(codes), 0);
        TokenBatch back = TokenBatch.ofBytes(dtype, codes, q.scales(), 1, tokens, d);
        assertArrayEquals(q.toFloatArray(), back.toFloatArray(), 0f, dtype + " d=" + d);
      }
    }
  }
}
