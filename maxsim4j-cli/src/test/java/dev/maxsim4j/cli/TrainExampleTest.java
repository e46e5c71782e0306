package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.MaxSim;
import org.junit.jupiter.api.Test;

/**
 * The training example: the fused path's loss curve equals the naive grid path's, the loss falls, and a bad
 * value is one line.
 */
class TrainExampleTest {
  @Test
  void fusedAndNaiveLossCurvesMatchStepForStep() {
    try (MaxSim maxSim = MaxSim.builder().backend("cpu").threads(2).build()) {
      double[] fused = new double[8];
      double[] naive = new double[8];
      float lr = TrainExample.DEFAULT_LR;
      TrainExample.train(maxSim, false, 8, 8, 7, lr, (step, loss) -> fused[step - 1] = loss);
      TrainExample.train(maxSim, true, 8, 8, 7, lr, (step, loss) -> naive[step - 1] = loss);
      for (int s = 0; s < fused.length; s++) {
        assertEquals(naive[s], fused[s], 1e-4 * Math.max(1, Math.abs(naive[s])), "step " + (s + 1));
      }
      // the example shows learning: it starts near chance, ln 8, which a task solved at step 0 did not
      assertTrue(Math.abs(fused[0] - Math.log(8)) < 0.5, "the first loss: " + fused[0]);
      assertTrue(fused[fused.length - 1] < fused[0] / 2, "the loss falls: " + fused[0] + " -> "
          + fused[fused.length - 1]);
    }
  }

  @Test
  void trainExampleTakesOnlyAFinitePositiveLearningRate() {
    assertUsage(CliRun.of("train-example", "--lr", "abc"), "--lr = 'abc'; expected a number");
    for (String lr : new String[] {"NaN", "-1", "0", "Infinity"}) {
      assertUsage(CliRun.of("train-example", "--lr", lr, "--steps", "1"), "expected a finite number > 0");
    }
  }

  /** A learning rate that makes the loss NaN printed a curve of NaN and succeeded; it fails, saying why. */
  @Test
  void aDivergedRunFailsNamingTheStepAndTheLearningRate() {
    CliRun r = CliRun.of("train-example", "--lr", "3e38", "--steps", "3", "--batch", "2");
    assertEquals(1, r.status(), r.out() + r.err());
    assertEquals(1, r.err().lines().count(), r.err());
    assertTrue(r.err().contains("training diverged at --lr 3.0E38; expected a smaller --lr"), r.err());
    assertTrue(r.out().contains("step   1"), r.out());
  }

  /** The run stops at the first loss that is not finite, however many steps were asked for, each printed as it ends. */
  @Test
  void aDivergedRunStopsAtItsFirstNonFiniteLoss() {
    CliRun r = CliRun.of("train-example", "--lr", "3e38", "--steps", "2000000000", "--batch", "2");
    assertEquals(1, r.status(), r.out() + r.err());
    assertTrue(r.err().contains("training diverged"), r.err());
    long printed = r.out().lines().filter(l -> l.startsWith("step ")).count();
    assertTrue(printed >= 1 && printed <= 5, r.out());
  }

  private static void assertUsage(CliRun r, String fragment) {
    assertEquals(2, r.status(), r.err());
    assertEquals(1, r.err().lines().count(), r.err());
    assertTrue(r.err().contains(fragment), r.err());
  }
}
