package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * Pairs of finite tokens whose exact MaxSim is an ordinary number but whose float64 sums, rounded at each step,
 * leave a remainder past fp32's largest value: products near 2^250 cancel, and the bits float64 drops while
 * adding them (2^130 beside 2^250, or two roundings of the same int8 x int8 product taken in different orders) come
 * back as the result. The reference scored such pairs -Infinity or Infinity, and the fast CPU backends, which hand
 * pairs whose fp32 sums may overflow (or whose score came out infinite) to the reference, scored the same: the
 * "does not stick at an infinity where the exact score is finite" of MaxSim's contract did not hold. Every CPU
 * backend now scores the exact value.
 */
class HostileFloat64CancellationTest {
  private static final String[] BACKENDS = {"reference", "scalar", "vector"};

  private static void assertEveryBackend(float want, TokenBatch q, TokenBatch d, String what) {
    for (String name : BACKENDS) {
      try (MaxSim m = MaxSim.builder().backend(name).threads(1).build()) {
        assertEquals(want, m.scores(q, d)[0][0], 0f, name + ": " + what + " scores()");
        assertEquals(want, m.topK(q, d, 1).scores()[0][0], 0f, name + ": " + what + " topK()");
        if (!q.dtype().isQuantized()) {
          assertEquals(want, m.scoresForTraining(q, d).scores()[0], 0f, name + ": " + what + " training forward");
        }
      }
    }
  }

  /** One dot product 2^250 + 2^130 - 2^250 - 2^130: float64 keeps 2^250 of the first sum, and ends at -2^130. */
  @Test
  void aDotProductWhoseFloat64SumsDropBitsScoresExactly() {
    float big = 0x1p125f;
    float small = 0x1p65f;
    TokenBatch q = TokenBatch.ofFloats(new float[] {big, small, -big, -small}, 1, 1, 4);
    TokenBatch d = TokenBatch.ofFloats(new float[] {big, small, big, small}, 1, 1, 4);
    assertEveryBackend(0f, q, d, "exact dot product 0");
  }

  /**
   * The sum over query tokens: maxima 2^250, 2^197 + 2^174, -2^250 and -(2^197 + 2^174) sum to 0, where float64's
   * first addition rounds up by 2^174 and leaves 2^197 - 2^174 at the end.
   */
  @Test
  void aSumOfMaximaWhoseFloat64AdditionsRoundScoresExactly() {
    float big = 0x1p125f;
    float mid = 0x1p72f + 0x1p49f;
    TokenBatch q = TokenBatch.ofFloats(new float[] {big, mid, -big, -mid}, 1, 4, 1);
    TokenBatch d = TokenBatch.ofFloats(new float[] {big}, 1, 1, 1);
    assertEveryBackend(0f, q, d, "exact sum 0");
  }

  /**
   * int8 tokens of huge scales whose stored values cancel (127 - 126 - 1): the exact dot product is 0, but float64
   * rounds each product scale x code x scale' on its own, and round(127 x) - round(126 x) - round(x) is an ulp of
   * 127 x, about 4e47 at these scales (the case a random hostile fuzz found, with 1-bit documents). The fast backends
   * scored 0 here, from the stored values' integer dot product; the reference Infinity or -Infinity.
   */
  @Test
  void quantizedTokensWhoseStoredValuesCancelScoreZero() {
    float[][] scales = {{3e36f, 1.1e25f}, {3e36f, 1e25f}, {3e36f, 2.9e36f}, {1.1e25f, 3e36f}};
    for (float[] s : scales) {
      TokenBatch q = TokenBatch.ofBytes(DType.INT8, new byte[] {127, -126, -1}, new float[] {s[0]}, 1, 1, 3);
      TokenBatch d = TokenBatch.ofBytes(DType.INT8, new byte[] {1, 1, 1}, new float[] {s[1]}, 1, 1, 3);
      assertEveryBackend(0f, q, d, "int8 x int8, scales " + s[0] + " x " + s[1]);
      TokenBatch bits = TokenBatch.ofBytes(DType.BINARY, new byte[] {(byte) 0xe0}, new float[] {s[1]}, 1, 1, 3);
      assertEveryBackend(0f, q, bits, "int8 x 1-bit, scales " + s[0] + " x " + s[1]);
    }
  }
}
