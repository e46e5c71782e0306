package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Checks that a MaxSim sharded over several backends answers every call as one backend does: the same bits
 * ({@code exact}) or within the fp32 bound of {@link Oracle#tolerance} (devices whose kernels depend on the shape).
 */
final class ShardingChecks {
  private ShardingChecks() {}

  /** Scores, top-k (k of 1, 7 and past Nd), resident and asynchronous calls of {@code q} over {@code d}. */
  static void inference(MaxSim one, MaxSim sharded, TokenBatch q, TokenBatch d, boolean exact, String where) {
    float[][] expected = one.scores(q, d);
    float[][] got = sharded.scores(q, d);
    assertScores(expected, got, q, d, exact, where + " scores");
    for (int k : new int[] {1, 7, d.size() + 3}) {
      TopK top = sharded.topK(q, d, k);
      if (exact) {
        assertSameTopK(one.topK(q, d, k), top, where + " top-" + k);
      } else {
        ParityTest.assertTopKIsSortedScores(top, got, k, where + " top-" + k + " of its scores");
      }
    }
    try (ResidentBatch resident = sharded.upload(d); ResidentBatch again = sharded.upload(d)) {
      assertScores(expected, sharded.scores(q, resident), q, d, exact, where + " resident scores");
      resident.close();
      float[][] residentScores = sharded.scores(q, again);
      assertScores(expected, residentScores, q, d, exact, where + " resident for its second holder");
      TopK residentTop = sharded.topK(q, again, 5);
      if (exact) {
        assertSameTopK(one.topK(q, d, 5), residentTop, where + " resident top-5");
      } else { // a resident split follows the free memory at upload, a call's split the free memory now
        ParityTest.assertTopKIsSortedScores(residentTop, residentScores, 5, where + " resident top-5 of its scores");
      }
      List<CompletableFuture<float[][]>> inFlight = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        inFlight.add(sharded.scoresAsync(q, d));
        inFlight.add(sharded.scoresAsync(q, again));
      }
      for (CompletableFuture<float[][]> f : inFlight) {
        assertScores(expected, f.join(), q, d, exact, where + " asynchronous scores");
      }
    }
  }

  /**
   * Training on {@code q} against pairwise documents {@code pd} ([Nq]) and candidates {@code cd} ([Nq * K]) and
   * all pairs of {@code cd}: forward, argmax use and gradients the same bits as one backend ({@code exact}), or
   * within fp32 rounding.
   */
  static void training(MaxSim one, MaxSim sharded, TokenBatch q, TokenBatch pd, TokenBatch cd, int k, boolean exact,
      String where) {
    Checker c = new Checker(exact);
    float[] dPair = ones(q.size());
    c.gradients(one.pairwiseForTraining(q, pd).backward(dPair), sharded.pairwiseForTraining(q, pd).backward(dPair),
        where + " pairwise");
    float[] dCand = ramp(q.size() * k);
    TrainingScores cs = sharded.candidatesForTraining(q, cd, k);
    c.scores(one.candidatesForTraining(q, cd, k).scores(), cs.scores(), where + " candidate scores");
    c.gradients(one.candidatesForTraining(q, cd, k).backward(dCand), cs.backward(dCand), where + " candidates");
    float[] dAll = ramp(q.size() * cd.size());
    c.gradients(one.scoresForTraining(q, cd).backward(dAll), sharded.scoresForTraining(q, cd).backward(dAll),
        where + " all pairs");
    Loss kl = Loss.klDistillation(teacher(q.size(), k), 2f);
    c.step(one.lossCandidates(q, cd, k, kl), sharded.lossCandidates(q, cd, k, kl), where + " loss candidates");
    Loss contrastive = Loss.contrastive(0.5f);
    c.step(one.lossAllPairs(q, cd, contrastive), sharded.lossAllPairs(q, cd, contrastive), where + " loss all pairs");
  }

  static void assertScores(float[][] expected, float[][] got, TokenBatch q, TokenBatch d, boolean exact,
      String where) {
    if (exact) {
      assertArrayEquals(expected, got, where);
    } else {
      ParityTest.assertClose(expected, got, q, d, where);
    }
  }

  static void assertSameTopK(TopK expected, TopK got, String where) {
    assertArrayEquals(expected.indices(), got.indices(), where + " indices");
    assertArrayEquals(expected.scores(), got.scores(), where + " scores");
  }

  /** Same bits, or within fp32 rounding (relative 1e-5 of the largest value, as GradientTest allows). */
  private record Checker(boolean exact) {
    void step(TrainingStep expected, TrainingStep got, String where) {
      if (exact) {
        assertEquals(expected.loss(), got.loss(), where + " loss");
        assertArrayEquals(expected.scores(), got.scores(), where + " scores");
      } else {
        assertEquals(expected.loss(), got.loss(), 1e-5 * Math.max(1, Math.abs(expected.loss())), where + " loss");
        scores(ParityTest.flatten(expected.scores()), ParityTest.flatten(got.scores()), where + " scores");
      }
      gradients(expected.gradients(), got.gradients(), where);
    }

    void scores(float[] expected, float[] got, String where) {
      if (exact) {
        assertArrayEquals(expected, got, where);
      } else {
        GradientTest.assertGradClose(widen(expected), got, where);
      }
    }

    void gradients(Gradients expected, Gradients got, String where) {
      scores(expected.queries().toFloatArray(), got.queries().toFloatArray(), where + " dQ");
      scores(expected.documents().toFloatArray(), got.documents().toFloatArray(), where + " dD");
    }

    private static double[] widen(float[] f) {
      double[] d = new double[f.length];
      for (int i = 0; i < f.length; i++) {
        d[i] = f[i];
      }
      return d;
    }
  }

  private static float[] ones(int n) {
    float[] a = new float[n];
    java.util.Arrays.fill(a, 1f);
    return a;
  }

  private static float[] ramp(int n) {
    float[] a = new float[n];
    for (int i = 0; i < n; i++) {
      a[i] = (i % 7 - 3) * 0.25f;
    }
    return a;
  }

  private static float[][] teacher(int rows, int k) {
    float[][] t = new float[rows][k];
    for (int i = 0; i < rows; i++) {
      for (int c = 0; c < k; c++) {
        t[i][c] = (i * 31 + c * 7) % 11 * 0.3f;
      }
    }
    return t;
  }
}
