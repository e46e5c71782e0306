package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A dot product whose fp32 partial sum passes -3.4e38 stays at -infinity whatever comes after, so its token fell
 * out of the max while another token's finite (lower) value won: the score, the top-k and the argmax were those of
 * the wrong token, silently (-3e38 for an exact -2e38). Such a pair must score as the float64 reference does, on
 * every CPU backend, whatever the documents' storage.
 */
class HostilePartialSumOverflowTest {
  /** Token 0: exact dot product -2e38, but -2e38 - 2e38 passes fp32's range first; token 1: -3e38, no overflow. */
  private static final float[] DOCUMENT = {-2e38f, -2e38f, 1e38f, 1e38f, -3e38f, 0, 0, 0};

  @Test
  void aTokenWhosePartialSumOverflowedKeepsItsExactMax() {
    MemorySegment f32 = Arena.ofAuto().allocate(4L * DOCUMENT.length);
    MemorySegment.copy(DOCUMENT, 0, f32, ValueLayout.JAVA_FLOAT_UNALIGNED, 0, DOCUMENT.length);
    short[] bits = DType.BFLOAT16.narrow(DOCUMENT);
    MemorySegment bf16 = Arena.ofAuto().allocate(2L * bits.length);
    MemorySegment.copy(bits, 0, bf16, ValueLayout.JAVA_SHORT_UNALIGNED, 0, bits.length);
    List<TokenBatch> documents = List.of(TokenBatch.ofFloats(DOCUMENT, 1, 2, 4),
        TokenBatch.ofHalfs(DType.BFLOAT16, bits, 1, 2, 4), TokenBatch.fromMemorySegment(f32, DType.FLOAT32, 1, 2, 4),
        TokenBatch.fromMemorySegment(bf16, DType.BFLOAT16, 1, 2, 4));
    try (MaxSim reference = MaxSim.builder().backend("reference").threads(1).build();
        MaxSim scalar = MaxSim.builder().backend("scalar").threads(1).build();
        MaxSim vector = MaxSim.builder().backend("vector").threads(1).build()) {
      for (TokenBatch d : documents) {
        // one query token of ones among zero tokens (which score 0 on both document tokens), in every block of lanes
        for (int lq : new int[] {1, 5, 17, 33, 70}) {
          for (int p : new int[] {0, lq / 2, lq - 1}) {
            float[] values = new float[lq * 4];
            Arrays.fill(values, p * 4, p * 4 + 4, 1f);
            TokenBatch q = TokenBatch.ofFloats(values, 1, lq, 4);
            float exact = reference.scores(q, d)[0][0];
            assertEquals(-2e38f, exact, 1e36f, "the reference");
            for (MaxSim m : List.of(scalar, vector)) {
              String where = m.backendName() + ", " + d + ", query token " + p + " of " + lq;
              assertEquals(exact, m.scores(q, d)[0][0], where + ": scores");
              assertEquals(exact, m.topK(q, d, 1).scores()[0][0], where + ": topK");
              TrainingScores t = m.scoresForTraining(q, d);
              assertEquals(exact, t.scores()[0], where + ": training scores");
              assertEquals(0, t.argmax(0, p), where + ": argmax");
            }
          }
        }
      }
    }
  }

  /**
   * Whether a pair was scored exactly depended on the other queries of its call where a document held an infinity:
   * a query whose values sum to at most 0.5 skipped the scan alone, but beside a larger query it met the infinity as
   * the document's largest value and was scored in float64, its fp32 bits lost.
   */
  @Test
  void aDocumentHoldingAnInfinityScoresTheSameBitsWhateverElseTheCallHolds() {
    java.util.Random random = new java.util.Random(7);
    int n = 64;
    float[] values = new float[n * 2 * 4];
    for (int j = 0; j < n; j++) {
      values[j * 8] = Float.NEGATIVE_INFINITY; // token 0 scores -infinity against a positive query: out of the max
      for (int k = 0; k < 4; k++) {
        values[j * 8 + 4 + k] = random.nextFloat();
      }
    }
    TokenBatch documents = TokenBatch.ofFloats(values, n, 2, 4);
    float[] small = {0.1f, 0.11f, 0.13f, 0.15f};
    float[] both = {0.1f, 0.11f, 0.13f, 0.15f, 1, 1, 1, 1};
    for (String backend : List.of("scalar", "vector")) {
      try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
        float[] alone = m.scores(TokenBatch.ofFloats(small, 1, 1, 4), documents)[0];
        float[] beside = m.scores(TokenBatch.ofFloats(both, 2, 1, 4), documents)[0];
        for (int j = 0; j < n; j++) {
          assertEquals(alone[j], beside[j], backend + ", document " + j + ": alone and beside a larger query");
        }
      }
    }
  }
}
