package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * A NaN score comes back as {@link Float#NaN}'s bits on every call and every CPU backend: a document whose first
 * token holds a stored NaN (a positive quiet NaN) and whose second token's products are +inf and -inf (a NaN the
 * hardware makes, negative on x86), summed in whichever order the JIT-compiled kernel chose, once left the same
 * call's score with either sign. Repeated until the kernels are compiled; scores, pairwise, top-k, the training
 * forward and a loss step (its scores, and its loss as {@link Double#NaN}). CudaParityTest checks the same on the GPU.
 */
class HostileNaNBitsTest {
  private static final int CALLS = 3000;

  @Test
  void aNaNScoreKeepsOneBitPatternOnEveryCallAndBackend() {
    TokenBatch q = TokenBatch.ofFloats(new float[] {1f, 0f, 1f, 1f}, 1, 2, 2);
    TokenBatch d = TokenBatch.ofFloats(new float[] {Float.NaN, 1f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY,
        0.5f, 0.5f, 0.25f, 0.25f}, 2, 2, 2);
    TokenBatch first = TokenBatch.ofFloats(new float[] {Float.NaN, 1f, Float.POSITIVE_INFINITY,
        Float.NEGATIVE_INFINITY}, 1, 2, 2);
    int nan = Float.floatToRawIntBits(Float.NaN);
    for (String backend : new String[] {"reference", "scalar", "vector"}) {
      try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
        for (int call = 0; call < CALLS; call++) {
          String where = backend + " call " + call;
          assertEquals(nan, Float.floatToRawIntBits(m.scores(q, d)[0][0]), where + " scores");
          assertEquals(nan, Float.floatToRawIntBits(m.pairwise(q, first)[0]), where + " pairwise");
          assertEquals(nan, Float.floatToRawIntBits(m.topK(q, d, 1).scores()[0][0]), where + " topK");
          if (call % 100 == 0) {
            assertEquals(nan, Float.floatToRawIntBits(m.scoresForTraining(q, d).scores()[0]), where + " training");
            TrainingStep step = m.lossCandidates(q, d, 2, Loss.contrastive(1f));
            assertEquals(nan, Float.floatToRawIntBits(step.scores()[0][0]), where + " loss step's score");
            assertEquals(Double.doubleToRawLongBits(Double.NaN), Double.doubleToRawLongBits(step.loss()),
                where + " loss");
          }
        }
      }
    }
  }
}
