package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.MaxSim;
import org.junit.jupiter.api.Test;

/** The training example: the fused path's loss curve equals the naive grid path's, and the loss falls. */
class TrainExampleTest {
  @Test
  void fusedAndNaiveLossCurvesMatchStepForStep() {
    try (MaxSim maxSim = MaxSim.builder().backend("cpu").threads(2).build()) {
      double[] fused = TrainExample.train(maxSim, false, 8, 8, 7, 0.5f);
      double[] naive = TrainExample.train(maxSim, true, 8, 8, 7, 0.5f);
      for (int s = 0; s < fused.length; s++) {
        assertEquals(naive[s], fused[s], 1e-4 * Math.max(1, Math.abs(naive[s])), "step " + (s + 1));
      }
      assertTrue(fused[fused.length - 1] < fused[0], "the loss falls: " + fused[0] + " -> " + fused[fused.length - 1]);
    }
  }
}
