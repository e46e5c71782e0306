package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * A float token whose values span more than fp32's range of normal values (one near its largest, one tiny) met by
 * quantized tokens: the kernels' headroom divides it by a power of two, which flushed the tiny value to 0, and a
 * document zeroing the large dimension (or cancelling it) left only that value, so the fast backends scored 0 where
 * the exact score is 1.8e-13. Likewise a float token of values near fp32's largest, whose fp32 partial sums cancel
 * what float64 keeps (the fp32 query of the same values was scored exactly, its compressed twin 0). Every CPU backend
 * must score as the float64 reference, on every entry point. Found by hostile tests.
 */
class HostileHeadroomTinyPartsTest {
  private static final String[] FAST = {"scalar", "vector"};

  private static void assertAsReference(TokenBatch q, TokenBatch d, String where) {
    float[][] expected;
    try (MaxSim reference = MaxSim.builder().backend("reference").build()) {
      expected = reference.scores(q, d);
    }
    for (float[] row : expected) {
      for (float e : row) {
        assertTrue(e != 0f && Float.isFinite(e), where + ": the exact score " + e + " should be finite and nonzero");
      }
    }
    for (String backend : FAST) {
      try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
        float[][] got = m.scores(q, d);
        // candidates of one query: all documents; of several: each query meets the whole batch as its own copy
        float[][] candidates = q.size() == 1 ? m.candidates(q, d, d.size()) : null;
        TopK top = m.topK(q, d, d.size());
        for (int i = 0; i < expected.length; i++) {
          for (int j = 0; j < expected[i].length; j++) {
            float tol = Math.abs(expected[i][j]) * 1e-5f;
            String at = backend + " " + where + " [" + i + "][" + j + "]";
            assertEquals(expected[i][j], got[i][j], tol, at);
            if (candidates != null) {
              assertEquals(expected[i][j], candidates[i][j], tol, at + " candidates");
            }
            assertEquals(expected[i][top.indices()[i][j]], top.scores()[i][j], tol, at + " top-k");
          }
        }
        if (q.size() == d.size()) {
          float[] pairs = m.pairwise(q, d);
          for (int i = 0; i < pairs.length; i++) {
            float tol = Math.abs(expected[i][i]) * 1e-5f;
            assertEquals(expected[i][i], pairs[i], tol, backend + " " + where + " pairwise");
          }
        }
      }
    }
  }

  @Test
  void aFloatQueryTokenOfHugeAndTinyValuesAgainstQuantizedDocuments() {
    // |3e38| needs headroom against stored values; the document's zero (or its cancelling bits) leaves MIN_VALUE
    TokenBatch q = TokenBatch.ofFloats(new float[] {3e38f, Float.MIN_VALUE, 0f}, 1, 1, 3);
    assertAsReference(q, TokenBatch.ofBytes(DType.INT8, new byte[] {0, 127, 0}, new float[] {1e30f}, 1, 1, 3),
        "int8");
    assertAsReference(q, TokenBatch.ofBytes(DType.FLOAT8_E4M3, new byte[] {0, 0x7e, 0}, new float[] {1e30f}, 1, 1,
        3), "e4m3");
    // a normal but tiny value keeps only some of its bits after the division: 0.3% off, not an fp32 rounding
    assertAsReference(TokenBatch.ofFloats(new float[] {3e38f, 1e-40f, 0f}, 1, 1, 3),
        TokenBatch.ofBytes(DType.INT8, new byte[] {0, 127, 0}, new float[] {1e30f}, 1, 1, 3), "int8 1e-40");
    TokenBatch cancelling = TokenBatch.ofFloats(new float[] {3e38f, -3e38f, Float.MIN_VALUE}, 1, 1, 3);
    assertAsReference(cancelling, TokenBatch.ofBytes(DType.BINARY, new byte[] {(byte) 0xe0}, new float[] {1e30f}, 1,
        1, 3), "1-bit");
  }

  @Test
  void aFloatDocumentTokenOfHugeAndTinyValuesAgainstQuantizedQueries() {
    TokenBatch d = TokenBatch.ofFloats(new float[] {3e38f, Float.MIN_VALUE, 0f, 1f, 0f, 0f}, 2, 1, 3)
        .withMask(new boolean[] {true, false});
    TokenBatch twoTokens = TokenBatch.ofFloats(new float[] {3e38f, Float.MIN_VALUE, 0f, -1f, 0f, 0f}, 1, 2, 3);
    TokenBatch int8 = TokenBatch.ofBytes(DType.INT8, new byte[] {0, 127, 0, 0, 127, 0}, new float[] {1e30f, 2e30f},
        2, 1, 3);
    assertAsReference(int8, d, "int8 queries");
    // a document of two tokens: the second (much lower) must not win the max
    assertAsReference(int8, twoTokens, "int8 queries, two document tokens");
  }

  @Test
  void aFloatTokenWhosePartialSumsCancelNearFp32sLargest() {
    // against -1 in every dimension the exact dot product is -1e19; fp32 partial sums of 3e38 lose it
    TokenBatch huge = TokenBatch.ofFloats(new float[] {1e19f, -3e38f, 3e38f}, 1, 1, 3);
    byte e4m3MinusOne = (byte) 0xb8;
    TokenBatch int8 = TokenBatch.ofBytes(DType.INT8, new byte[] {-1, -1, -1}, null, 1, 1, 3);
    TokenBatch e4m3 = TokenBatch.ofBytes(DType.FLOAT8_E4M3, new byte[] {e4m3MinusOne, e4m3MinusOne, e4m3MinusOne},
        null, 1, 1, 3);
    TokenBatch bits = TokenBatch.ofBytes(DType.BINARY, new byte[] {0}, null, 1, 1, 3);
    for (TokenBatch compressed : new TokenBatch[] {int8, e4m3, bits}) {
      String type = compressed.dtype().toString();
      assertAsReference(huge, compressed, type + " documents");
      assertAsReference(compressed, huge, type + " queries");
    }
  }
}
