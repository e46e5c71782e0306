package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Float values below about 2^-117 against fp8 e4m3 tokens of a huge scale: the kernels multiply the float values
 * by the stored codes (down to 2^-9) and apply the scales after, so a product below fp32's normal range was rounded
 * (or flushed to 0) before the scale brought it back into range: scalar and vector scored 0 where the exact score,
 * the float value times the dequantized code, is 2.7e-10. Every CPU backend must score as the float64 reference.
 * Found by a hostile test.
 */
class HostileFp8SubnormalProductsTest {
  private static final String[] FAST = {"scalar", "vector"};

  private static void assertAsReference(TokenBatch q, TokenBatch d, String where) {
    float expected;
    try (MaxSim reference = MaxSim.builder().backend("reference").build()) {
      expected = reference.scores(q, d)[0][0];
    }
    assertTrue(Float.isFinite(expected) && Math.abs(expected) >= Float.MIN_NORMAL, where + ": " + expected);
    for (String backend : FAST) {
      try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
        float tol = Math.abs(expected) * 1e-5f;
        assertEquals(expected, m.scores(q, d)[0][0], tol, backend + " " + where);
        assertEquals(expected, m.pairwise(q, d)[0], tol, backend + " " + where + " pairwise");
        assertEquals(expected, m.candidates(q, d, 1)[0][0], tol, backend + " " + where + " candidates");
        assertEquals(expected, m.topK(q, d, 1).scores()[0][0], tol, backend + " " + where + " top-k");
      }
    }
  }

  @Test
  void tinyFloatValuesAgainstSmallFp8CodesOfAHugeScale() {
    // 2^-60 keeps the token out of the tiny-token headroom; MIN_VALUE x 2^-9 (code 0x01) is below fp32's smallest
    float[] q = {0x1p-60f, Float.MIN_VALUE, 0f};
    byte[] codes = {0, 0x01, 0};
    assertAsReference(TokenBatch.ofFloats(q, 1, 1, 3),
        TokenBatch.ofBytes(DType.FLOAT8_E4M3, codes, new float[] {1e38f}, 1, 1, 3), "fp32 x e4m3");
    // code 0x30 is 0.5: 1e-40 x 0.5 keeps only some bits as a subnormal
    assertAsReference(TokenBatch.ofFloats(new float[] {0x1p-60f, 1e-40f, 0f}, 1, 1, 3),
        TokenBatch.ofBytes(DType.FLOAT8_E4M3, new byte[] {0, 0x30, 0}, new float[] {1e38f}, 1, 1, 3),
        "fp32 1e-40 x e4m3 0.5");
    short[] bf16 = DType.BFLOAT16.narrow(new float[] {0x1p-60f, 1e-40f, 0f});
    assertAsReference(TokenBatch.ofHalfs(DType.BFLOAT16, bf16, 1, 1, 3),
        TokenBatch.ofBytes(DType.FLOAT8_E4M3, codes, new float[] {1e38f}, 1, 1, 3), "bf16 x e4m3");
    // and the other way round: e4m3 queries against a float document
    assertAsReference(TokenBatch.ofBytes(DType.FLOAT8_E4M3, codes, new float[] {1e38f}, 1, 1, 3),
        TokenBatch.ofFloats(q, 1, 1, 3), "e4m3 x fp32");
  }
}
