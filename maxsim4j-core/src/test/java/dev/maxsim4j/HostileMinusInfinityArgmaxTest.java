package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * A valid query token whose product with every valid document token is -inf keeps the document's first valid token
 * as its argmax (the lowest index among equal maxima) on every CPU backend, as CudaTrainingTest checks on the GPU:
 * short and long documents (the vector kernel's blocks and its long-document path), first tokens masked.
 */
class HostileMinusInfinityArgmaxTest {

  @Test
  void everyProductMinusInfinityKeepsTheFirstValidToken() {
    RandomBatches r = new RandomBatches();
    int dim = 33;
    for (int ld : new int[] {1, 7, 300, 2000}) {
      int nq = 2, lq = 5, nd = 4;
      float[] q = r.floats(nq * lq * dim);
      float[] d = r.floats(nd * ld * dim);
      for (int i = 0; i < nq * lq; i++) {
        q[i * dim] = i % 2 == 0 ? 1e20f : 0f;
      }
      for (int t = 0; t < nd * ld; t++) {
        d[t * dim] = -1e20f;
      }
      boolean[] mask = new boolean[nd * ld];
      for (int j = 0; j < nd; j++) {
        for (int t = 0; t < ld; t++) {
          mask[j * ld + t] = t >= Math.min(ld - 1, j); // document j: its first j tokens masked, one left at least
        }
      }
      TokenBatch qb = TokenBatch.ofFloats(q, nq, lq, dim);
      TokenBatch db = TokenBatch.ofFloats(d, nd, ld, dim).withMask(mask);
      for (String backend : new String[] {"reference", "scalar", "vector"}) {
        try (MaxSim m = MaxSim.builder().backend(backend).threads(2).build()) {
          TrainingScores s = m.scoresForTraining(qb, db);
          for (int p = 0; p < nq * nd; p++) {
            for (int slot = 0; slot < lq; slot++) {
              if (((p / nd) * lq + slot) % 2 == 0) {
                assertEquals(Math.min(ld - 1, p % nd), s.argmax(p, slot), backend + " Ld=" + ld + " pair " + p
                    + " slot " + slot + " (" + r + ")");
              }
            }
          }
        }
      }
    }
  }
}
