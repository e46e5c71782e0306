package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
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

  /**
   * An empty side's rule comes before NaN's, as the contract states: NaN in a query against a document of no valid
   * token scores -1e9, and a query of no valid token against a document holding NaN scores +0, on every call.
   */
  @Test
  void anEmptySidesRuleComesBeforeNaN() {
    TokenBatch nanQuery = TokenBatch.ofFloats(new float[] {Float.NaN, 1f}, 1, 1, 2);
    TokenBatch emptyQuery = nanQuery.withMask(new boolean[] {false});
    TokenBatch nanDoc = TokenBatch.ofFloats(new float[] {1f, Float.NaN}, 1, 1, 2);
    TokenBatch emptyDoc = TokenBatch.ofFloats(new float[] {1f, 1f}, 1, 1, 2).withMask(new boolean[] {false});
    for (String backend : new String[] {"reference", "scalar", "vector"}) {
      try (MaxSim m = MaxSim.builder().backend(backend).threads(2).build()) {
        assertEquals(MaxSim.EMPTY_DOCUMENT_SCORE, m.scores(nanQuery, emptyDoc)[0][0], backend);
        assertEquals(MaxSim.EMPTY_DOCUMENT_SCORE, m.pairwise(nanQuery, emptyDoc)[0], backend);
        assertEquals(MaxSim.EMPTY_DOCUMENT_SCORE, m.topK(nanQuery, emptyDoc, 1).scores()[0][0], backend);
        assertEquals(0, Float.floatToRawIntBits(m.scores(emptyQuery, nanDoc)[0][0]), backend);
        assertEquals(0, Float.floatToRawIntBits(m.pairwise(emptyQuery, nanDoc)[0]), backend);
        assertEquals(0, Float.floatToRawIntBits(m.topK(emptyQuery, nanDoc, 1).scores()[0][0]), backend);
      }
    }
  }

  /**
   * Gradients, fixed dimensional encodings and projections hold Float.NaN's bits too: a query token holding one
   * NaN payload and a document token another once gave the same loss step's query gradient either payload, as the
   * JIT ordered the sums (about 1 call in 2 after compilation), and a backward's bits differed from run to run.
   */
  @Test
  void gradientsEncodingsAndProjectionsKeepOneNaNBitPattern() {
    TokenBatch q = TokenBatch.ofFloats(new float[] {1f, Float.intBitsToFloat(0x7fd00000)}, 1, 1, 2);
    TokenBatch d = TokenBatch.ofFloats(new float[] {1f, 1f, Float.intBitsToFloat(0xffe00000), 2f}, 2, 1, 2);
    FixedDimensionalEncoder fde = FixedDimensionalEncoder.builder(2).simHashBits(1).repetitions(2).seed(3).build();
    float[] x = {Float.intBitsToFloat(0x7fd00000), 1f, 2f, Float.intBitsToFloat(0xffe00000)};
    float[] w = {1f, 2f, 3f, 4f};
    int nan = Float.floatToRawIntBits(Float.NaN);
    for (String backend : new String[] {"reference", "scalar", "vector"}) {
      try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
        for (int call = 0; call < 4 * CALLS; call++) {
          String where = backend + " call " + call;
          List<float[]> outputs = new ArrayList<>();
          TrainingStep step = m.lossAllPairs(q, d, Loss.contrastive(1f));
          outputs.add(step.gradients().queries().toFloatArray());
          outputs.add(step.gradients().documents().toFloatArray());
          TrainingScores forward = m.scoresForTraining(q, d);
          Gradients g = forward.backward(new float[] {1f, 1f}, GradientPrecision.FLOAT32);
          outputs.add(g.queries().toFloatArray());
          outputs.add(g.documents().toFloatArray());
          outputs.add(m.project(x, 2, 2, w, 2));
          outputs.add(m.projectionGradient(x, 2, 2, w, 2));
          if (call % 16 == 0) {
            outputs.add(m.encodeQueries(fde, d)[1]);
            outputs.add(m.encodeDocuments(fde, d)[1]);
            outputs.add(fde.encodeQueries(d)[1]);
            outputs.add(fde.encodeDocuments(d)[1]);
          }
          for (int o = 0; o < outputs.size(); o++) {
            boolean held = false;
            for (float v : outputs.get(o)) {
              if (v != v) {
                held = true;
                assertEquals(nan, Float.floatToRawIntBits(v), where + ", output " + o);
              }
            }
            assertTrue(held, where + ", output " + o + " holds a NaN");
          }
        }
      }
    }
  }

  /**
   * A score that rounds to zero is +0 on every backend: products too small for fp32 that are all negative summed to
   * a tiny negative float64 in the reference, which rounds to -0, where the fp32 kernels' sums start from +0 and
   * end there; top-k then ordered the same documents otherwise on the two.
   */
  @Test
  void aScoreThatRoundsToZeroIsPositiveZeroOnEveryBackend() {
    TokenBatch q = TokenBatch.ofFloats(new float[] {1e-30f, 1e-30f, 2e-30f, 0f}, 1, 2, 2);
    TokenBatch d = TokenBatch.ofFloats(new float[] {-1e-30f, -3e-30f, -2e-30f, -1e-30f, 1e-30f, 1e-30f,
        -1e-30f, 0f}, 2, 2, 2);
    TokenBatch scaled = d.quantize(DType.INT8);
    for (String backend : new String[] {"reference", "scalar", "vector"}) {
      try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
        for (int call = 0; call < 200; call++) {
          for (TokenBatch docs : new TokenBatch[] {d, scaled}) {
            String where = backend + " " + docs.dtype() + " call " + call;
            assertEquals(0, Float.floatToRawIntBits(m.scores(q, docs)[0][0]), where + " scores");
            assertEquals(0, Float.floatToRawIntBits(m.topK(q, docs, 2).scores()[0][1]), where + " topK");
            assertEquals(0, Float.floatToRawIntBits(m.candidates(q, docs, 2)[0][0]), where + " candidates");
          }
          assertEquals(0, Float.floatToRawIntBits(m.scoresForTraining(q, d).scores()[0]), backend + " training");
        }
      }
    }
  }
}
