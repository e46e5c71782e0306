package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.api.Test;

/**
 * The public records that hold arrays (TopK, the losses, a loss value, a training step) are equal, hash and print
 * by their contents: a record's own methods take arrays by identity, so two equal rankings were unequal and printed
 * as [[F@... The instance and its handles print what they are.
 */
class HostileRecordEqualityTest {
  @Test
  void twoRankingsOfTheSameCallAreEqualAndPrintTheirEntries() {
    try (MaxSim m = MaxSim.builder().backend("cpu").threads(2).build()) {
      TokenBatch q = TokenBatch.ofFloats(new float[] {1, 0}, 1, 1, 2);
      TokenBatch d = TokenBatch.ofFloats(new float[] {1, 0, 2, 0, Float.NaN, 0}, 3, 1, 2);
      TopK a = m.topK(q, d, 2);
      TopK b = m.topK(q, d, 2);
      assertEquals(a, b);
      assertEquals(a.hashCode(), b.hashCode());
      assertEquals("TopK[scores=[[NaN, 2.0]], indices=[[2, 1]]]", a.toString());
      assertNotEquals(a, m.topK(q, d, 3));
      assertNotEquals(a, new TopK(new float[][] {{Float.NaN, 2f}}, new int[][] {{2, 0}}));
      assertEquals(a, new TopK(new float[][] {{Float.NaN, 2f}}, new int[][] {{2, 1}}));
    }
  }

  /** A demanding user's finding: the instance, a resident batch and training scores printed as Class@hash. */
  @Test
  void theInstanceAndItsHandlesPrintWhatTheyAre() {
    MaxSim m = MaxSim.builder().backend("cpu").threads(2).build();
    TokenBatch q = TokenBatch.ofFloats(new float[] {1, 0}, 1, 1, 2);
    TokenBatch d = TokenBatch.ofFloats(new float[] {1, 0, 2, 0, 3, 0}, 3, 1, 2);
    assertEquals("MaxSim[" + m.backendName() + ", 2 threads]", m.toString());
    ResidentBatch resident = m.upload(d);
    assertEquals("ResidentBatch[" + d + "]", resident.toString());
    assertEquals("TrainingScores[CANDIDATES, 1 x 3]", m.candidatesForTraining(q, d, 3).toString());
    resident.close();
    assertEquals("ResidentBatch[" + d + ", closed]", resident.toString());
    m.close();
    assertEquals("MaxSim[" + m.backendName() + ", 2 threads, closed]", m.toString());
  }

  @Test
  void lossesAndTheirValuesCompareByContents() {
    assertEquals(Loss.contrastive(new int[] {1, 0}, 0.5f), Loss.contrastive(new int[] {1, 0}, 0.5f));
    assertEquals(Loss.contrastive(new int[] {1, 0}, 0.5f).hashCode(),
        Loss.contrastive(new int[] {1, 0}, 0.5f).hashCode());
    assertNotEquals(Loss.contrastive(new int[] {1, 0}, 0.5f), Loss.contrastive(new int[] {0, 0}, 0.5f));
    assertNotEquals(Loss.contrastive(new int[] {1, 0}, 0.5f), Loss.contrastive(0.5f));
    assertEquals(Loss.contrastive(0.05f), Loss.contrastive(0.05f));
    assertEquals("Contrastive[positives=[1, 0], temperature=0.5]", Loss.contrastive(new int[] {1, 0}, 0.5f).toString());

    Loss kl = Loss.klDistillation(new float[][] {{1f, Float.NEGATIVE_INFINITY}}, 2f);
    assertEquals(kl, Loss.klDistillation(new float[][] {{1f, Float.NEGATIVE_INFINITY}}, 2f));
    assertEquals(kl.hashCode(), Loss.klDistillation(new float[][] {{1f, Float.NEGATIVE_INFINITY}}, 2f).hashCode());
    assertNotEquals(kl, Loss.klDistillation(new float[][] {{1f, Float.NEGATIVE_INFINITY}}, 1f));
    assertEquals("KlDistillation[teacherScores=[[1.0, -Infinity]], temperature=2.0]", kl.toString());

    assertEquals(Loss.marginMse(new float[] {0.5f}), Loss.marginMse(new float[] {0.5f}));
    assertNotEquals(Loss.marginMse(new float[] {0.5f}), Loss.marginMse(new float[] {-0.5f}));
    assertEquals("MarginMse[teacherMargins=[0.5]]", Loss.marginMse(new float[] {0.5f}).toString());

    Loss.Value v = Loss.marginMse(new float[] {1f}).evaluate(new float[][] {{3f, 1f}});
    assertEquals(v, Loss.marginMse(new float[] {1f}).evaluate(new float[][] {{3f, 1f}}));
    assertEquals(v.hashCode(), Loss.marginMse(new float[] {1f}).evaluate(new float[][] {{3f, 1f}}).hashCode());
    assertEquals("Value[loss=1.0, dScores=[2.0, -2.0], rows=1, columns=2]", v.toString());
  }

  @Test
  void trainingStepsCompareTheirScoresByContents() {
    TokenBatch g = TokenBatch.ofFloats(new float[] {1, 0}, 1, 1, 2);
    Gradients gradients = new Gradients(g, g);
    TrainingStep a = new TrainingStep(0.5, new float[][] {{1f, -0f}}, gradients);
    assertEquals(a, new TrainingStep(0.5, new float[][] {{1f, -0f}}, gradients));
    assertEquals(a.hashCode(), new TrainingStep(0.5, new float[][] {{1f, -0f}}, gradients).hashCode());
    assertNotEquals(a, new TrainingStep(0.5, new float[][] {{1f, 0f}}, gradients));
    assertEquals(true, a.toString().startsWith("TrainingStep[loss=0.5, scores=[[1.0, -0.0]], gradients="),
        a.toString());
  }

  @Test
  void largeResultsPrintTheirFirstEntriesAndCountTheRest() {
    float[][] scores = new float[1000][100];
    int[][] indices = new int[1000][100];
    String text = new TopK(scores, indices).toString();
    assertEquals(true, text.length() < 20_000, "TopK of 1000 x 100 printed " + text.length() + " characters");
    assertEquals(true, text.contains(", ... (984 more)]") && text.contains(", ... (84 more)]"), text);
    String value = Loss.contrastive(1f).evaluate(new float[][] {new float[40]}).toString();
    assertEquals(true, value.contains(", ... (24 more)]"), value);
  }
}
