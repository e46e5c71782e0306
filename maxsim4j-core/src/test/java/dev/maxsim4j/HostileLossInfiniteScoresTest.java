package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * Loss documents that a row holding an infinite score yields a NaN loss and NaN gradients for that row, not the
 * limit the formula tends to. A hostile tester found each loss giving something else: contrastive over {@code
 * [+Inf, 1]} against column 1 gave loss +Infinity and gradients {@code [NaN, -1]}, over {@code [-Inf, 1]} against
 * column 1 loss 0 and zero gradients; KL gave {@code [NaN, -0.73]}; margin-MSE gave loss +Infinity and gradients
 * of +-Infinity. Rows of finite scores beside such a row keep their own finite gradients.
 */
class HostileLossInfiniteScoresTest {
  private static final float INF = Float.POSITIVE_INFINITY;

  private static Loss[] losses(int rows) {
    return new Loss[] {Loss.contrastive(new int[rows], 1f), Loss.contrastive(filled(rows, 1), 0.05f),
        Loss.klDistillation(new float[][] {{1f, 2f}, {0.5f, -1f}}, 1f),
        Loss.klDistillation(new float[][] {{Float.NEGATIVE_INFINITY, 2f}, {0.5f, -1f}}, 2f),
        Loss.marginMse(new float[] {1f, 0.25f})};
  }

  private static int[] filled(int n, int v) {
    int[] a = new int[n];
    Arrays.fill(a, v);
    return a;
  }

  @Test
  void aRowHoldingAnInfiniteScoreGivesNaNLossAndNaNGradientsForThatRowOnly() {
    for (float[] bad : new float[][] {{INF, 1f}, {1f, INF}, {-INF, 1f}, {1f, -INF}, {INF, INF}, {-INF, -INF},
        {INF, -INF}, {Float.NaN, 1f}}) {
      float[][] scores = {bad, {0.5f, 0.25f}};
      for (Loss loss : losses(2)) {
        Loss.Value v = loss.evaluate(scores);
        String what = loss + " over " + Arrays.toString(bad);
        assertTrue(Double.isNaN(v.loss()), what + ": loss " + v.loss());
        assertTrue(Float.isNaN(v.dScores()[0]) && Float.isNaN(v.dScores()[1]),
            what + ": gradients " + Arrays.toString(v.dScores()));
        Loss.Value alone = loss instanceof Loss.KlDistillation k
            ? Loss.klDistillation(new float[][] {k.teacherScores()[1]}, k.temperature()).evaluate(
                new float[][] {scores[1]})
            : loss instanceof Loss.MarginMse m ? Loss.marginMse(new float[] {m.teacherMargins()[1]}).evaluate(
                new float[][] {scores[1]})
            : Loss.contrastive(new int[] {((Loss.Contrastive) loss).positives()[1]},
                ((Loss.Contrastive) loss).temperature()).evaluate(new float[][] {scores[1]});
        // averaged over two rows: the finite row's gradients are half those of that row alone
        assertEquals(alone.dScores()[0] / 2, v.dScores()[2], 1e-7f, what);
        assertEquals(alone.dScores()[1] / 2, v.dScores()[3], 1e-7f, what);
      }
    }
  }

  /** The same through a training step, where the forward's score is infinite: tokens near 1e20 meet. */
  @Test
  void aTrainingStepWhoseScoreIsInfiniteGivesNaNLossAndGradientsForThatRow() {
    for (String backend : new String[] {"reference", "scalar", "vector"}) {
      try (MaxSim m = MaxSim.builder().backend(backend).threads(2).build()) {
        for (float sign : new float[] {1f, -1f}) {
          TokenBatch q = TokenBatch.ofFloats(new float[] {1e20f, 1f}, 2, 1, 1);
          TokenBatch d = TokenBatch.ofFloats(new float[] {sign * 1e20f, 1f, 0.5f, 0.25f}, 4, 1, 1);
          for (Loss loss : losses(2)) {
            TrainingStep step = m.lossCandidates(q, d, 2, loss);
            String what = backend + " " + loss + " scores " + Arrays.deepToString(step.scores());
            assertEquals(sign * INF, step.scores()[0][0], what);
            assertTrue(Double.isNaN(step.loss()), what + ": loss " + step.loss());
          }
        }
      }
    }
  }
}
