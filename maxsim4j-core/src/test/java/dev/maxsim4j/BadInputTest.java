package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Every bad input is an IllegalArgumentException naming the argument, what it saw and what it expected. */
class BadInputTest {
  private final TokenBatch q = TokenBatch.ofFloats(new float[2 * 3 * 4], 2, 3, 4);
  private final TokenBatch d = TokenBatch.ofFloats(new float[6 * 5 * 4], 6, 5, 4);

  private static void rejects(Executable call, String... fragments) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    for (String f : fragments) {
      assertTrue(e.getMessage().contains(f), "message '" + e.getMessage() + "' should contain '" + f + "'");
    }
  }

  @Test
  void dimensionMismatch() {
    TokenBatch d8 = TokenBatch.ofFloats(new float[8], 1, 1, 8);
    try (MaxSim m = MaxSim.create()) {
      rejects(() -> m.scores(q, d8), "d mismatch", "queries [2, 3, 4]", "d=4", "d=8");
      rejects(() -> m.topK(q, d8, 1), "d mismatch");
    }
  }

  @Test
  void dataLengthDoesNotMatchShape() {
    rejects(() -> TokenBatch.ofFloats(new float[10], 2, 3, 4), "data holds 10 elements", "expected 24", "[2, 3, 4]");
    rejects(() -> TokenBatch.ofHalfs(DType.BFLOAT16, new short[5], 1, 1, 4), "bits holds 5", "expected 4");
    rejects(() -> TokenBatch.ofHalfs(DType.FLOAT32, new short[4], 1, 1, 4), "FLOAT32");
    rejects(() -> TokenBatch.ofFloats(new float[0], 1, 0, 0), "dim=0", "dim >= 1");
    rejects(() -> TokenBatch.ofFloats(new float[0], -1, 2, 3), "n=-1");
  }

  @Test
  void maskShape() {
    rejects(() -> q.withMask(new boolean[5]), "mask has length 5", "expected 6", "N*L = 2*3");
    rejects(() -> q.withMask(new boolean[][] {{true, true, true}}), "mask has shape [1]", "expected [2][3]");
    rejects(() -> q.withMask(new boolean[][] {{true, true, true}, {true}}), "mask[1] has length 1", "expected 3");
    TokenBatch packed = TokenBatch.packedFloats(new float[12], new int[] {0, 1, 3}, 4);
    rejects(() -> packed.withMask(new boolean[2]), "mask has length 2", "expected 3", "T");
    rejects(() -> packed.withMask(new boolean[][] {{true}}), "padded");
  }

  @Test
  void lengths() {
    rejects(() -> q.withLengths(new int[] {1, -1}), "lengths[1] = -1", "0 <= length <= 3");
    rejects(() -> q.withLengths(new int[] {4, 1}), "lengths[0] = 4", "<= 3");
    rejects(() -> q.withLengths(new int[] {1}), "lengths has length 1", "expected 2");
  }

  @Test
  void offsets() {
    rejects(() -> TokenBatch.packedFloats(new float[12], new int[] {0, 2, 1, 3}, 4), "offsets not monotone",
        "offsets[2] = 1 < offsets[1] = 2");
    rejects(() -> TokenBatch.packedFloats(new float[12], new int[] {0, 1, 2}, 4), "offsets end at 2", "expected T = 3");
    rejects(() -> TokenBatch.packedFloats(new float[12], new int[] {1, 3}, 4), "offsets[0] = 1", "expected 0");
    rejects(() -> TokenBatch.packedFloats(new float[12], new int[0], 4), "offsets is empty");
    rejects(() -> TokenBatch.packedFloats(new float[13], new int[] {0, 3}, 4), "not a multiple of dim 4");
  }

  @Test
  void kAndCandidates() {
    try (MaxSim m = MaxSim.create()) {
      rejects(() -> m.topK(q, d, 0), "k = 0", "k >= 1");
      rejects(() -> m.topK(q, d, -3), "k = -3");
      rejects(() -> m.candidates(q, d, 2), "candidates K mismatch", "6 rows", "B*K = 2*2 = 4");
      rejects(() -> m.candidates(q, d, 0), "candidatesPerQuery = 0");
      rejects(() -> m.pairwise(q, d), "pairwise", "B=2", "has 6");
    }
  }

  @Test
  void backwardShape() {
    try (MaxSim m = MaxSim.create()) {
      TrainingScores ts = m.scoresForTraining(q, d);
      rejects(() -> ts.backward(new float[3]), "dScores has length 3", "expected 12");
      rejects(() -> ts.backward(new float[2][5]), "dScores[0] has length 5", "expected 6");
      rejects(() -> ts.backward(new float[][] {new float[6], null}), "dScores[1] is null", "expected 6");
      rejects(() -> Loss.contrastive(1f).evaluate(new float[][] {new float[2], null}), "scores[1] is null");
      // queries of no slots: no slot to ask for, not an empty range
      TrainingScores none = m.scoresForTraining(TokenBatch.ofFloats(new float[0], 2, 0, 4), d);
      rejects(() -> none.argmax(0, 0), "querySlot = 0; expected none: no querySlot exists here");
    }
  }

  @Test
  void raggedNestedArrays() {
    rejects(() -> TokenBatch.of(new float[][][] {{{1, 2}}, {{1, 2, 3}}}), "rows[1][0] has dimension 3", "expected 2");
    rejects(() -> TokenBatch.of(new float[][][] {{{1, 2}}, null}), "rows[1] is null");
  }

  @Test
  void unknownBackendAndThreads() {
    rejects(() -> MaxSim.builder().backend("gpu-please").build(), "backend 'gpu-please'", "expected one of");
    rejects(() -> MaxSim.builder().threads(0), "threads = 0");
  }

  @Test
  void useAfterCloseIsIllegalState() {
    MaxSim m = MaxSim.create();
    m.close();
    assertThrows(IllegalStateException.class, () -> m.scores(q, d));
    m.close(); // idempotent
  }
}
