package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Losses on the CPU: each loss's gradient against central finite differences of its own float64 value;
 * the one-call step ({@link MaxSim#lossAllPairs}) against forward + {@link Loss#evaluate} + backward; the
 * cached-contrastive recipe (documents scored in mini-batches, one loss over all of them, then the
 * gradients per mini-batch) against the whole batch at once; bad arguments.
 */
class LossTest {
  static Stream<String> backends() {
    return Stream.of("reference", "vector");
  }

  @Test
  void gradientsAreTheDerivativesOfTheLoss() {
    RandomBatches r = new RandomBatches();
    float[][] square = matrix(r, 5, 5);
    float[][] wide = matrix(r, 4, 7);
    float[][] pairs = matrix(r, 6, 2);
    List<Object[]> cases = List.of(
        new Object[] {Loss.contrastive(0.5f), square},
        new Object[] {Loss.contrastive(new int[] {3, 0, 6, 2}, 2f), wide},
        new Object[] {Loss.klDistillation(matrix(r, 4, 7), 1.3f), wide},
        new Object[] {Loss.marginMse(new float[] {1, -2, 0.5f, 3, 0, -1}), pairs});
    for (Object[] c : cases) {
      Loss loss = (Loss) c[0];
      float[][] s = (float[][]) c[1];
      Loss.Value v = loss.evaluate(s);
      for (int i = 0; i < s.length; i++) {
        for (int j = 0; j < s[i].length; j++) {
          float keep = s[i][j];
          float h = 1e-2f;
          s[i][j] = keep + h;
          double up = loss.evaluate(s).loss();
          s[i][j] = keep - h;
          double down = loss.evaluate(s).loss();
          s[i][j] = keep;
          double numeric = (up - down) / (2 * h);
          assertEquals(numeric, v.dScoreMatrix()[i][j], 1e-3 * Math.max(1, Math.abs(numeric)),
              r + " " + loss + " d/ds[" + i + "][" + j + "]");
        }
      }
    }
  }

  /** A teacher score of -Infinity is probability 0: 0 log 0 = 0 in the loss, as in its gradient. */
  @Test
  void aMinusInfinityTeacherScoreIsProbabilityZero() {
    Loss.Value v = Loss.klDistillation(new float[][] {{1f, Float.NEGATIVE_INFINITY}}, 1f)
        .evaluate(new float[][] {{1f, 0f}});
    double expected = Math.log(Math.E + 1) - 1; // KL([1, 0] || softmax(1, 0)) = -log softmax(1, 0)[0]
    assertEquals(expected, v.loss(), 1e-6);
    assertEquals((float) (Math.E / (Math.E + 1) - 1), v.dScores()[0], 1e-6f);
  }

  @Test
  void knownValues() {
    // two equal columns: cross-entropy log 2; identical teacher: KL 0; margin equal to the teacher's: 0
    float[][] s = {{1, 1}, {3, 3}};
    assertEquals(Math.log(2), Loss.contrastive(1f).evaluate(s).loss(), 1e-12);
    assertEquals(0, Loss.klDistillation(s, 2f).evaluate(s).loss(), 1e-12);
    assertEquals(0, Loss.marginMse(new float[] {0, 0}).evaluate(s).loss(), 1e-12);
    assertTrue(Double.isNaN(Loss.contrastive(1f).evaluate(new float[][] {{Float.NaN, 1}, {0, 1}}).loss()),
        "NaN scores give a NaN loss");
  }

  @ParameterizedTest
  @MethodSource("backends")
  void oneCallStepEqualsForwardLossBackward(String backend) {
    RandomBatches r = new RandomBatches();
    try (MaxSim m = MaxSim.builder().backend(backend).threads(2).build()) {
      TokenBatch q = r.padded(DType.BFLOAT16, 6, 20, 33, 1);
      TokenBatch d = r.packed(DType.BFLOAT16, 12, 0, 40, 33, true);
      Loss loss = Loss.contrastive(0.3f);
      TrainingStep step = m.lossAllPairs(q, d, loss);
      TrainingScores ts = m.scoresForTraining(q, d);
      Loss.Value v = loss.evaluate(ts.scoreMatrix());
      assertEquals(v.loss(), step.loss(), 0, r + " loss");
      Gradients g = ts.backward(v.dScores());
      org.junit.jupiter.api.Assertions.assertArrayEquals(g.queries().toFloatArray(),
          step.gradients().queries().toFloatArray(), r + " dQ");
      org.junit.jupiter.api.Assertions.assertArrayEquals(g.documents().toFloatArray(),
          step.gradients().documents().toFloatArray(), r + " dD");
    }
  }

  /**
   * A demanding user's finding: {@code contrastive(T)} over candidates' scores means the first candidate in
   * lossCandidates and the diagonal in Loss.evaluate, so the two gave different losses with no error;
   * TrainingScores.evaluate reads a loss as the call that made the scores does, for every kind of loss.
   */
  @ParameterizedTest
  @MethodSource("backends")
  void trainingScoresEvaluateTheLossAsTheOneCallStepDoes(String backend) {
    RandomBatches r = new RandomBatches();
    try (MaxSim m = MaxSim.builder().backend(backend).threads(2).build()) {
      TokenBatch q = r.padded(DType.FLOAT32, 2, 2, 4, 1);
      TokenBatch d = r.padded(DType.FLOAT32, 6, 2, 4, 1);
      int k = 3;
      TrainingScores candidates = m.candidatesForTraining(q, d, k);
      TrainingScores allPairs = m.scoresForTraining(q, d);
      for (Loss loss : List.of(Loss.contrastive(0.1f), Loss.contrastive(new int[] {2, 1}, 0.5f),
          Loss.klDistillation(matrix(r, 2, k), 1.5f))) {
        TrainingStep step = m.lossCandidates(q, d, k, loss);
        Loss.Value v = candidates.evaluate(loss);
        assertEquals(step.loss(), v.loss(), 0, r + " " + loss + " over candidates");
        assertArrayEquals(step.gradients().documents().toFloatArray(),
            candidates.backward(v.dScores()).documents().toFloatArray(), r + " " + loss + " dD over candidates");
      }
      Loss diagonal = Loss.contrastive(0.1f);
      assertEquals(m.lossAllPairs(q, d, diagonal).loss(), allPairs.evaluate(diagonal).loss(), 0, r + " all pairs");
      assertEquals(diagonal.evaluate(allPairs.scoreMatrix()), allPairs.evaluate(diagonal), r + " all pairs' value");
      assertThrows(IllegalArgumentException.class, () -> candidates.evaluate(null));
      // margin-MSE over candidates of K = 2; pairwise scores, one column, refused rather than read as a loss of 0
      Loss margin = Loss.marginMse(new float[] {0.5f, -1f});
      TokenBatch twoEach = r.padded(DType.FLOAT32, 4, 2, 4, 1);
      assertEquals(m.lossCandidates(q, twoEach, 2, margin).loss(),
          m.candidatesForTraining(q, twoEach, 2).evaluate(margin).loss(), 0, r + " margin-MSE");
      TokenBatch pairs = r.padded(DType.FLOAT32, 2, 2, 4, 1);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> m.pairwiseForTraining(q, pairs).evaluate(Loss.klDistillation(new float[][] {{1f}, {2f}}, 1f)));
      assertTrue(e.getMessage().contains("pairwise scores [2]"), e.getMessage());
    }
  }

  /** Cached contrastive: score documents in mini-batches, one loss over the whole row, backward per batch. */
  @ParameterizedTest
  @MethodSource("backends")
  void cachedContrastiveEqualsTheWholeBatch(String backend) {
    RandomBatches r = new RandomBatches();
    int nq = 8;
    int chunk = 4;
    try (MaxSim m = MaxSim.builder().backend(backend).threads(2).build()) {
      TokenBatch q = r.padded(DType.FLOAT32, nq, 16, 24, 1);
      float[] docValues = r.floats(nq * 30 * 24);
      TokenBatch d = TokenBatch.ofFloats(docValues, nq, 30, 24);
      Loss loss = Loss.contrastive(0.2f);
      TrainingStep whole = m.lossAllPairs(q, d, loss);

      float[][] scores = new float[nq][nq];
      TrainingScores[] parts = new TrainingScores[nq / chunk];
      for (int c = 0; c < parts.length; c++) {
        float[] slice = java.util.Arrays.copyOfRange(docValues, c * chunk * 30 * 24, (c + 1) * chunk * 30 * 24);
        parts[c] = m.scoresForTraining(q, TokenBatch.ofFloats(slice, chunk, 30, 24));
        float[][] part = parts[c].scoreMatrix();
        for (int i = 0; i < nq; i++) {
          System.arraycopy(part[i], 0, scores[i], c * chunk, chunk);
        }
      }
      Loss.Value v = loss.evaluate(scores);
      assertEquals(whole.loss(), v.loss(), 1e-9, r + " loss");
      float[] dq = new float[q.toFloatArray().length];
      float[] dd = new float[docValues.length];
      for (int c = 0; c < parts.length; c++) {
        float[][] dPart = new float[nq][chunk];
        for (int i = 0; i < nq; i++) {
          System.arraycopy(v.dScoreMatrix()[i], c * chunk, dPart[i], 0, chunk);
        }
        Gradients g = parts[c].backward(dPart);
        float[] gq = g.queries().toFloatArray();
        for (int e = 0; e < gq.length; e++) {
          dq[e] += gq[e];
        }
        float[] gd = g.documents().toFloatArray();
        System.arraycopy(gd, 0, dd, c * chunk * 30 * 24, gd.length);
      }
      GradientTest.assertGradClose(toDouble(whole.gradients().queries().toFloatArray()), dq, r + " dQ");
      GradientTest.assertGradClose(toDouble(whole.gradients().documents().toFloatArray()), dd, r + " dD");
    }
  }

  @Test
  void badArgumentsNameWhatIsWrong() {
    try (MaxSim m = MaxSim.builder().backend("vector").threads(1).build()) {
      RandomBatches r = new RandomBatches();
      TokenBatch q = r.padded(DType.FLOAT32, 3, 4, 8, 0);
      TokenBatch d = r.padded(DType.FLOAT32, 6, 4, 8, 0);
      assertMessage(() -> Loss.contrastive(0f), "temperature");
      assertMessage(() -> m.lossAllPairs(q, d, Loss.contrastive(new int[] {0, 1}, 1f)), "positives has length 2");
      assertMessage(() -> m.lossAllPairs(q, d, Loss.contrastive(new int[] {0, 1, 6}, 1f)), "positives[2] = 6");
      assertMessage(() -> m.lossAllPairs(d, q, Loss.contrastive(1f)), "columns >= rows");
      assertMessage(() -> m.lossCandidates(q, d, 2, Loss.klDistillation(new float[3][3], 1f)),
          "teacherScores[0] has length 3");
      assertMessage(() -> m.lossCandidates(q, TokenBatch.ofFloats(r.floats(9 * 32), 9, 4, 8), 3,
          Loss.marginMse(new float[3])), "K = 2");
    }
  }

  /** Edge arguments: a tiny temperature keeps the log-sum; the values a loss holds cannot change after it is made. */
  @Test
  void tinyTemperaturesNonFiniteMarginsAndCopies() {
    for (float t : new float[] {1e-20f, 1e-38f}) {
      Loss.Value v = Loss.contrastive(new int[] {0}, t).evaluate(new float[][] {{1f, 1f}});
      assertEquals(Math.log(2), v.loss(), 1e-12, "two tied candidates at T = " + t);
      assertEquals(-0.5 / t, v.dScores()[0], 1e-6 * 0.5 / t, "T = " + t);
      assertEquals(0.5 / t, v.dScores()[1], 1e-6 * 0.5 / t, "T = " + t);
      Loss.Value kl = Loss.klDistillation(new float[][] {{1f, 1f}}, t).evaluate(new float[][] {{1f, 1f}});
      assertEquals(0, kl.loss(), 1e-12, "equal distributions at T = " + t);
    }
    assertMessage(() -> Loss.contrastive(Float.MIN_VALUE), "expected a finite value >= ");
    // the float 1 / Float.MAX_VALUE rounds down, and its inverse passes the largest float: infinite gradients
    assertMessage(() -> Loss.contrastive(1 / Float.MAX_VALUE), "its inverse a float");
    float smallest = Math.nextUp(1 / Float.MAX_VALUE);
    for (float g : Loss.contrastive(smallest).evaluate(new float[][] {{0f, 1f}}).dScores()) {
      assertTrue(Float.isFinite(g), "T = " + smallest + ": " + g);
    }
    assertMessage(() -> Loss.klDistillation(new float[][] {{1f}}, 1e-39f), "the gradient scales with 1 / T");
    assertMessage(() -> Loss.klDistillation(new float[][] {{1f, 2f}, {1f}}, 1f),
        "teacherScores[1] has length 1; expected 2 like row 0");
    assertMessage(() -> Loss.marginMse(new float[] {1f, Float.NaN}), "teacherMargins[1] = NaN");
    assertMessage(() -> Loss.marginMse(new float[] {Float.POSITIVE_INFINITY}), "teacherMargins[0] = Infinity");
    Loss.KlDistillation kl = (Loss.KlDistillation) Loss.klDistillation(new float[][] {{1f, 2f}}, 1f);
    kl.teacherScores()[0][0] = Float.NaN;
    assertEquals(1f, kl.teacherScores()[0][0], 0f, "the teacher's scores are a copy");
    Loss.MarginMse mse = (Loss.MarginMse) Loss.marginMse(new float[] {1f});
    mse.teacherMargins()[0] = Float.NaN;
    assertEquals(1f, mse.teacherMargins()[0], 0f);
    Loss.Contrastive c = (Loss.Contrastive) Loss.contrastive(new int[] {0}, 1f);
    c.positives()[0] = 5;
    assertEquals(0, c.positives()[0]);
    assertMessage(() -> Loss.contrastive(1f).evaluateFlat(new float[1], 5, 5), "scores has length 1; expected");
    assertMessage(() -> Loss.contrastive(1f).evaluateFlat(new float[6], 3, 2), "columns >= rows");
  }

  private static void assertMessage(Runnable call, String part) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call::run);
    assertTrue(e.getMessage().contains(part), e.getMessage() + " should mention " + part);
  }

  private static float[][] matrix(RandomBatches r, int rows, int columns) {
    float[][] m = new float[rows][columns];
    for (int i = 0; i < rows; i++) {
      for (int j = 0; j < columns; j++) {
        m[i][j] = (float) r.rnd.nextGaussian() * 2;
      }
    }
    return m;
  }

  private static double[] toDouble(float[] f) {
    double[] d = new double[f.length];
    for (int i = 0; i < f.length; i++) {
      d[i] = f[i];
    }
    return d;
  }
}
