package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/**
 * Ties the random oracles do not draw, on every CPU backend and training dtype: dot products of 0 and -0 (equal,
 * so the lowest slot wins whatever sign the sum takes), a document whose every token scores -Infinity, masked
 * tokens that hold NaN, and a backward repeated or after close.
 */
class HostileTrainingTiesTest {
  private static final String[] BACKENDS = {"reference", "scalar", "vector"};
  private static final DType[] TYPES = {DType.FLOAT32, DType.FLOAT16, DType.BFLOAT16};

  private static TokenBatch batch(DType type, float[] values, int length, int dim) {
    return type == DType.FLOAT32 ? TokenBatch.ofFloats(values, 1, length, dim)
        : TokenBatch.ofHalfs(type, type.narrow(values), 1, length, dim);
  }

  @Test
  void signedZeroAndMinusInfinityTiesGoToTheLowestSlot() {
    float[] zeros = {-0f, -0f, 0f, 0f, 1f, -1f, -1f, 1f, 0f, -0f};
    float[] minusInfinity = {Float.NEGATIVE_INFINITY, 0f, Float.NEGATIVE_INFINITY, 0f};
    for (String backend : BACKENDS) {
      try (MaxSim m = MaxSim.builder().backend(backend).build()) {
        for (DType type : TYPES) {
          String where = backend + " " + type;
          for (float sign : new float[] {1f, -1f}) {
            TrainingScores ts = m.scoresForTraining(batch(type, new float[] {sign, sign}, 1, 2),
                batch(type, zeros, 5, 2));
            assertEquals(0f, ts.scores()[0], where);
            assertEquals(0, ts.argmax(0, 0), where + " query sign " + sign);
            assertArrayEquals(new float[] {sign, sign, 0, 0, 0, 0, 0, 0, 0, 0},
                ts.backward(new float[] {1f}).documents().toFloatArray(), where);
          }
          TrainingScores ts = m.scoresForTraining(batch(type, new float[] {1f, 0f}, 1, 2),
              batch(type, minusInfinity, 2, 2));
          assertEquals(Float.NEGATIVE_INFINITY, ts.scores()[0], where);
          assertEquals(0, ts.argmax(0, 0), where);
          assertArrayEquals(new float[] {1, 0, 0, 0}, ts.backward(new float[] {1f}).documents().toFloatArray(),
              where);
        }
      }
    }
  }

  @Test
  void maskedTokensHoldingNaNGetExactlyZeroAndABackwardRepeatsOrSaysTheInstanceIsClosed() {
    for (String backend : BACKENDS) {
      for (DType type : TYPES) {
        String where = backend + " " + type;
        TokenBatch q = batch(type, new float[] {1f, 2f, Float.NaN, 1f}, 2, 2).withMask(new boolean[] {true, false});
        TokenBatch d = batch(type, new float[] {Float.NaN, Float.NaN, 3f, 1f, 3f, 1f}, 3, 2)
            .withMask(new boolean[] {false, true, true});
        TrainingScores ts;
        try (MaxSim m = MaxSim.builder().backend(backend).build()) {
          ts = m.scoresForTraining(q, d);
          assertEquals(5f, ts.scores()[0], where);
          assertEquals(1, ts.argmax(0, 0), where + ": the tie 3,1 = 3,1 goes to slot 1");
          assertEquals(-1, ts.argmax(0, 1), where + ": a masked query token has no winner");
          Gradients g = ts.backward(new float[] {2f});
          assertArrayEquals(new float[] {6, 2, 0, 0}, g.queries().toFloatArray(), where);
          assertArrayEquals(new float[] {0, 0, 2, 4, 0, 0}, g.documents().toFloatArray(), where);
          Gradients again = ts.backward(new float[] {2f});
          assertArrayEquals(g.queries().toFloatArray(), again.queries().toFloatArray(), where);
          assertArrayEquals(g.documents().toFloatArray(), again.documents().toFloatArray(), where);
        }
        TrainingScores closed = ts;
        IllegalStateException e = assertThrows(IllegalStateException.class,
            () -> closed.backward(new float[] {1f}));
        assertEquals("MaxSim is closed", e.getMessage(), where);
      }
    }
  }
}
