package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Over candidates, a contrastive loss that names no positives takes each query's first candidate (column 0). */
class HostileCandidateContrastiveTest {
  @Test
  void noPositivesMeansTheFirstCandidate() {
    RandomBatches r = new RandomBatches();
    for (String backend : HostileTrainingTest.BACKENDS) {
      try (MaxSim m = MaxSim.builder().backend(backend).threads(2).build()) {
        // B < K (the diagonal would have fit, silently elsewhere) and B > K (the diagonal was refused)
        for (int[] bk : new int[][] {{2, 3}, {5, 2}, {1, 1}}) {
          int b = bk[0];
          int k = bk[1];
          TokenBatch q = r.padded(DType.FLOAT32, b, 3, 5, 1);
          TokenBatch d = r.padded(DType.FLOAT32, b * k, 4, 5, 1);
          String where = backend + " B=" + b + " K=" + k;
          TrainingStep got = m.lossCandidates(q, d, k, Loss.contrastive(0.5f));
          TrainingStep first = m.lossCandidates(q, d, k, Loss.contrastive(new int[b], 0.5f));
          assertEquals(first.loss(), got.loss(), 0.0, where);
          assertArrayEquals(first.gradients().queries().toFloatArray(), got.gradients().queries().toFloatArray(),
              where + " dQ");
          assertArrayEquals(first.gradients().documents().toFloatArray(),
              got.gradients().documents().toFloatArray(), where + " dD");
        }
      }
    }
  }
}
