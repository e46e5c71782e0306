package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * e4m3's NaN codes (0x7f, 0xff) in a valid token make the score NaN, in a masked token change nothing, on every CPU
 * backend, deterministically: the random batches never draw a NaN code, so only the fuzz test met them, now and
 * then. The code sits among the first dimensions of d = 32, which the vector kernel expands a vector at a time
 * (not in the scalar tail), and, with scales whose products fall below fp32's smallest normal, on the path that
 * scores such pairs one at a time.
 */
class StrongerFp8NanCodeTest {
  private static final int D = 32;
  private static final int L = 4;

  /** Two documents of L e4m3 tokens, token 1 of each holding {@code code} at dimension 3; the second masks it. */
  private static TokenBatch documents(byte code, float scale) {
    byte[] b = new byte[2 * L * D];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) (0x30 + (i * 7) % 0x30); // finite codes 0x30 .. 0x5f: 0.125 .. 15
      if ((i / D) % 2 == 0) {
        b[i] |= (byte) 0x80; // even tokens negative
      }
    }
    b[(0 * L + 1) * D + 3] = code;
    b[(1 * L + 1) * D + 3] = code;
    float[] scales = new float[2 * L];
    Arrays.fill(scales, scale);
    boolean[] mask = new boolean[2 * L];
    Arrays.fill(mask, true);
    mask[L + 1] = false;
    return TokenBatch.ofBytes(DType.FLOAT8_E4M3, b, scales, 2, L, D).withMask(mask);
  }

  private static TokenBatch int8Query(float scale) {
    byte[] b = new byte[2 * D];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) (i % 5 - 2 + (i % 3 == 0 ? 1 : 0));
    }
    float[] scales = {scale, scale};
    return TokenBatch.ofBytes(DType.INT8, b, scales, 1, 2, D);
  }

  private static TokenBatch floatQuery() {
    float[] f = new float[2 * D];
    for (int i = 0; i < f.length; i++) {
      f[i] = (i % 7 - 3) * 0.25f;
    }
    return TokenBatch.ofFloats(f, 1, 2, D);
  }

  @ParameterizedTest
  @ValueSource(ints = {0x7f, 0xff})
  void nanCodeInAValidDocumentTokenMakesTheScoreNaNOnEveryPath(int code) {
    // float queries against e4m3 documents of scale 0.5; int8 queries and documents whose scales multiply to 1e-60
    TokenBatch[][] calls = {
        {floatQuery(), documents((byte) code, 0.5f), documents((byte) 0x38, 0.5f)},
        {int8Query(1e-30f), documents((byte) code, 1e-30f), documents((byte) 0x38, 1e-30f)},
    };
    for (String backend : new String[] {"reference", "scalar", "vector"}) {
      try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
        for (TokenBatch[] call : calls) {
          TokenBatch q = call[0];
          TokenBatch d = call[1];
          String where = backend + " " + q.dtype() + " x e4m3 code 0x" + Integer.toHexString(code);
          float[] scores = m.scores(q, d)[0];
          assertTrue(Float.isNaN(scores[0]), where + ": a NaN code in a valid token, got " + scores[0]);
          assertFalse(Float.isNaN(scores[1]), where + ": a NaN code in a masked token");
          // the second document with a finite code (1.0) where the masked NaN code was
          assertEquals(m.scores(q, call[2])[0][1], scores[1], 0f, where + ": the masked NaN code changes nothing");
          assertTrue(Float.isNaN(m.candidates(q, d, 2)[0][0]), where + " candidates");
          assertEquals(0, m.topK(q, d, 2).indices()[0][0], where + ": NaN ranks first");
        }
      }
    }
  }
}
