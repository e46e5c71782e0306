package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The backward: against the float64 definition (gradient flows to the recorded argmax), against finite
 * differences of the float64 score, zero on masked tokens, for all-pairs, pairwise, candidates and packed.
 */
class GradientTest {

  static Stream<String> backends() {
    return Stream.of("reference", "scalar", "vector");
  }

  /** dQ and dD from the definition, in float64, given the kernel's own argmax. */
  private static double[][] definition(TokenBatch q, TokenBatch d, TrainingScores ts, float[] dS,
      int[][] pairs) {
    double[] dq = new double[q.toFloatArray().length];
    double[] dd = new double[d.toFloatArray().length];
    int dim = q.dim();
    for (int p = 0; p < pairs.length; p++) {
      int i = pairs[p][0];
      int j = pairs[p][1];
      for (int s = 0; s < q.length(i); s++) {
        int a = ts.argmax(p, s);
        if (a < 0) {
          continue;
        }
        for (int k = 0; k < dim; k++) {
          dq[(storage(q, i) + s) * dim + k] += dS[p] * (double) d.get(j, a, k);
          dd[(storage(d, j) + a) * dim + k] += dS[p] * (double) q.get(i, s, k);
        }
      }
    }
    return new double[][] {dq, dd};
  }

  /** First stored token of a row. */
  private static int storage(TokenBatch b, int row) {
    return b.isPacked() ? b.offsets()[row] : row * b.maxLength();
  }

  /**
   * A pair whose dScore is 0 still multiplies its tokens, as the GPU does and as the chain rule in IEEE arithmetic
   * gives: its winning infinite or NaN token makes the query token's gradient NaN (0 x inf), finite ones add 0.
   */
  @ParameterizedTest
  @MethodSource("backends")
  void aZeroDScoreStillMultipliesItsTokens(String backend) {
    for (float special : new float[] {Float.POSITIVE_INFINITY, Float.NaN}) {
      TokenBatch q = TokenBatch.of(new float[][][] {{{1f, 1f}}});
      TokenBatch d = TokenBatch.of(new float[][][] {{{special, 0f}}, {{1f, 0f}}});
      try (MaxSim m = MaxSim.builder().backend(backend).build()) {
        Gradients g = m.scoresForTraining(q, d).backward(new float[] {0f, 1f});
        String where = backend + ", a zero dScore on a token holding " + special;
        float[] dq = g.queries().toFloatArray();
        assertTrue(Float.isNaN(dq[0]), where + ": dQ[0] = " + dq[0]);
        assertEquals(0f, dq[1], where);
        assertArrayEquals(new float[] {0f, 0f, 1f, 1f}, g.documents().toFloatArray(), where);
      }
    }
  }

  static void assertGradClose(double[] expected, float[] got, String where) {
    assertEquals(expected.length, got.length, where);
    double scale = 1e-6;
    for (double e : expected) {
      scale = Math.max(scale, Math.abs(e));
    }
    for (int i = 0; i < expected.length; i++) {
      if (Math.abs(expected[i] - got[i]) > 1e-5 * scale) {
        fail(where + " element " + i + ": expected " + expected[i] + ", got " + got[i]);
      }
    }
  }

  @ParameterizedTest
  @MethodSource("backends")
  void allPairsPairwiseCandidatesPackedMatchTheDefinition(String backend) {
    RandomBatches r = new RandomBatches();
    try (MaxSim m = MaxSim.builder().backend(backend).threads(2).build()) {
      TokenBatch q = r.padded(DType.FLOAT32, 3, 19, 33, 1);
      TokenBatch d = r.packed(DType.BFLOAT16, 6, 0, 30, 33, true);
      TrainingScores all = m.scoresForTraining(q, d);
      float[] dS = r.floats(18);
      int[][] pairs = new int[18][];
      for (int p = 0; p < 18; p++) {
        pairs[p] = new int[] {p / 6, p % 6};
      }
      check(q, d, all, dS, pairs, r + " " + backend + " all-pairs");

      TrainingScores cand = m.candidatesForTraining(q, d, 2);
      float[] dC = r.floats(6);
      int[][] cPairs = new int[6][];
      for (int p = 0; p < 6; p++) {
        cPairs[p] = new int[] {p / 2, p};
      }
      check(q, d, cand, dC, cPairs, r + " " + backend + " candidates");

      TokenBatch pq = r.packed(DType.FLOAT16, 4, 1, 20, 7, false);
      TokenBatch pd = r.padded(DType.FLOAT32, 4, 12, 7, 2);
      TrainingScores pw = m.pairwiseForTraining(pq, pd);
      float[] dP = r.floats(4);
      int[][] pPairs = {{0, 0}, {1, 1}, {2, 2}, {3, 3}};
      check(pq, pd, pw, dP, pPairs, r + " " + backend + " pairwise packed");
    }
  }

  static void check(TokenBatch q, TokenBatch d, TrainingScores ts, float[] dS, int[][] pairs, String where) {
    Gradients g = ts.backward(dS);
    double[][] expected = definition(q, d, ts, dS, pairs);
    assertGradClose(expected[0], g.queries().toFloatArray(), where + " dQ");
    assertGradClose(expected[1], g.documents().toFloatArray(), where + " dD");
    assertMaskedAreZero(q, g.queries(), where + " dQ");
    assertMaskedAreZero(d, g.documents(), where + " dD");
  }

  private static void assertMaskedAreZero(TokenBatch input, TokenBatch grad, String where) {
    for (int i = 0; i < input.size(); i++) {
      int slots = input.isPacked() ? input.length(i) : input.maxLength();
      for (int t = 0; t < slots; t++) {
        if (!input.isValid(i, t)) {
          for (int k = 0; k < input.dim(); k++) {
            assertEquals(0f, grad.get(i, t, k), 0f, where + " masked token row " + i + " slot " + t);
          }
        }
      }
    }
  }

  @ParameterizedTest
  @MethodSource("backends")
  void finiteDifferencesOfTheFloat64Score(String backend) {
    RandomBatches r = new RandomBatches();
    int lq = 3;
    int ld = 5;
    int dim = 4;
    float[] qv = r.floats(lq * dim);
    float[] dv = r.floats(2 * ld * dim);
    TokenBatch q = TokenBatch.ofFloats(qv, 1, lq, dim);
    TokenBatch d = TokenBatch.ofFloats(dv, 2, ld, dim);
    float[] dS = {0.7f, -1.3f};
    try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
      Gradients g = m.scoresForTraining(q, d).backward(dS);
      float[] dq = g.queries().toFloatArray();
      float[] dd = g.documents().toFloatArray();
      double h = 1e-5;
      for (int e = 0; e < qv.length; e++) {
        double[] qp = toDouble(qv);
        double[] qm = toDouble(qv);
        qp[e] += h;
        qm[e] -= h;
        double fd = (loss(qp, toDouble(dv), dS, lq, ld, dim) - loss(qm, toDouble(dv), dS, lq, ld, dim)) / (2 * h);
        assertEquals(fd, dq[e], 1e-4 * (1 + Math.abs(fd)), r + " dQ[" + e + "]");
      }
      for (int e = 0; e < dv.length; e++) {
        double[] dp = toDouble(dv);
        double[] dm = toDouble(dv);
        dp[e] += h;
        dm[e] -= h;
        double fd = (loss(toDouble(qv), dp, dS, lq, ld, dim) - loss(toDouble(qv), dm, dS, lq, ld, dim)) / (2 * h);
        assertEquals(fd, dd[e], 1e-4 * (1 + Math.abs(fd)), r + " dD[" + e + "]");
      }
    }
  }

  /** sum_j dS[j] * MaxSim(q, d_j) in float64. */
  private static double loss(double[] q, double[] d, float[] dS, int lq, int ld, int dim) {
    double loss = 0;
    for (int j = 0; j < dS.length; j++) {
      double score = 0;
      for (int s = 0; s < lq; s++) {
        double best = Double.NEGATIVE_INFINITY;
        for (int t = 0; t < ld; t++) {
          double dot = 0;
          for (int k = 0; k < dim; k++) {
            dot += q[s * dim + k] * d[((j * ld) + t) * dim + k];
          }
          best = Math.max(best, dot);
        }
        score += best;
      }
      loss += dS[j] * score;
    }
    return loss;
  }

  private static double[] toDouble(float[] f) {
    double[] d = new double[f.length];
    for (int i = 0; i < f.length; i++) {
      d[i] = f[i];
    }
    return d;
  }

  @ParameterizedTest
  @MethodSource("backends")
  void gradientsInTheInputDtype(String backend) {
    RandomBatches r = new RandomBatches();
    TokenBatch q = r.padded(DType.BFLOAT16, 2, 5, 8, 0);
    TokenBatch d = r.padded(DType.FLOAT16, 3, 6, 8, 0);
    try (MaxSim m = MaxSim.builder().backend(backend).build()) {
      TrainingScores ts = m.scoresForTraining(q, d);
      float[] dS = r.floats(6);
      Gradients f32 = ts.backward(dS, GradientPrecision.FLOAT32);
      Gradients in = ts.backward(dS, GradientPrecision.INPUT);
      assertEquals(DType.BFLOAT16, in.queries().dtype());
      assertEquals(DType.FLOAT16, in.documents().dtype());
      float[] a = f32.queries().toFloatArray();
      float[] b = in.queries().toFloatArray();
      for (int i = 0; i < a.length; i++) {
        assertEquals(DType.BFLOAT16.widen(DType.BFLOAT16.narrow(a[i])), b[i], 0f);
      }
      // fp16 gradients past fp16's range are infinite, as GradientPrecision.INPUT says, where fp32 ones are finite
      float[] large = new float[6];
      java.util.Arrays.fill(large, 1e5f);
      float[] wide = ts.backward(large, GradientPrecision.FLOAT32).documents().toFloatArray();
      float[] half = ts.backward(large, GradientPrecision.INPUT).documents().toFloatArray();
      int infinite = 0;
      for (int i = 0; i < wide.length; i++) {
        assertTrue(Float.isFinite(wide[i]), "fp32 gradient " + i);
        assertEquals(DType.FLOAT16.widen(DType.FLOAT16.narrow(wide[i])), half[i], 0f, "fp16 gradient " + i);
        infinite += Float.isInfinite(half[i]) ? 1 : 0;
      }
      assertTrue(infinite > 0, "some fp16 gradient passes 65504");
    }
  }

  @ParameterizedTest
  @MethodSource("backends")
  void backwardIsBitwiseStableAcrossRunsAndThreadCounts(String backend) {
    RandomBatches r = new RandomBatches();
    TokenBatch q = r.padded(DType.FLOAT32, 7, 21, 40, 1);
    TokenBatch d = r.packed(DType.FLOAT32, 23, 1, 50, 40, true);
    float[] dS = r.floats(7 * 23);
    float[] refQ = null;
    float[] refD = null;
    float[] refS = null;
    for (int threads : new int[] {1, 2, 3, 2}) {
      try (MaxSim m = MaxSim.builder().backend(backend).threads(threads).build()) {
        TrainingScores ts = m.scoresForTraining(q, d);
        Gradients g = ts.backward(dS);
        if (refQ == null) {
          refQ = g.queries().toFloatArray();
          refD = g.documents().toFloatArray();
          refS = ts.scores();
        } else {
          assertArrayEquals(refS, ts.scores(), r + " scores with " + threads + " threads");
          assertArrayEquals(refQ, g.queries().toFloatArray(), r + " dQ with " + threads + " threads");
          assertArrayEquals(refD, g.documents().toFloatArray(), r + " dD with " + threads + " threads");
          assertArrayEquals(refS, ParityTest.flatten(m.scores(q, d)), r + " inference with " + threads + " threads");
        }
      }
    }
    assertTrue(refQ.length > 0);
  }

  /**
   * A NaN in a valid document token: the score is NaN and the max's gradient goes to the first NaN slot on every
   * backend (the reference keeps the first NaN it meets), short query and one of many lanes, scaled or not.
   */
  @ParameterizedTest
  @MethodSource("backends")
  void aNanWinsAtItsFirstSlot(String backend) {
    try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
      for (int lq : new int[] {2, 40}) {
        float[] qv = new float[lq];
        java.util.Arrays.fill(qv, 1f);
        TokenBatch q = TokenBatch.ofFloats(qv, 1, lq, 1);
        TokenBatch d = TokenBatch.ofFloats(new float[] {0f, Float.NaN, 2f, Float.NaN}, 1, 4, 1);
        TrainingScores ts = m.scoresForTraining(q, d);
        assertTrue(Float.isNaN(ts.scores()[0]), backend + " Lq=" + lq);
        for (int s = 0; s < lq; s++) {
          assertEquals(1, ts.argmax(0, s), backend + " Lq=" + lq + " query token " + s);
        }
        float[] dD = ts.backward(new float[] {1f}).documents().toFloatArray();
        assertEquals(0f, dD[0], 0f, backend);
        assertEquals(lq, dD[1], 0f, backend + ": every query token's gradient on the first NaN");
        assertEquals(0f, dD[2], 0f, backend);
      }
    }
  }

  /** The memory of a batch closed between the forward and backward: a message that names it, not the JDK's. */
  @org.junit.jupiter.api.Test
  void backwardAfterTheBatchsMemoryClosedSaysSo() {
    try (MaxSim m = MaxSim.builder().backend("vector").threads(1).build()) {
      java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared();
      java.lang.foreign.MemorySegment s = arena.allocate(4L * 8);
      TokenBatch d = TokenBatch.fromMemorySegment(s, DType.FLOAT32, 1, 2, 4);
      TrainingScores ts = m.scoresForTraining(TokenBatch.ofFloats(new float[] {1, 2, 3, 4}, 1, 1, 4), d);
      arena.close();
      IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
          () -> ts.backward(new float[] {1f}));
      assertTrue(e.getMessage().startsWith("documents read their tokens from a MemorySegment whose arena was closed"),
          e.getMessage());
    }
  }

  /** A document of more than 2^24 valid tokens: the winner's slot is past what an fp32 lane holds exactly. */
  @ParameterizedTest
  @MethodSource("backends")
  void aWinnerPast2To24TokensKeepsItsSlot(String backend) {
    int n = (1 << 24) + 3;
    float[] doc = new float[n];
    doc[n - 2] = 2f;
    doc[5] = 1f;
    try (MaxSim m = MaxSim.builder().backend(backend).threads(2).build()) {
      TrainingScores ts = m.scoresForTraining(TokenBatch.ofFloats(new float[] {1f, -1f}, 1, 2, 1),
          TokenBatch.ofFloats(doc, 1, n, 1));
      assertEquals(2f + 0f, ts.scores()[0], 0f, backend);
      assertEquals(n - 2, ts.argmax(0, 0), backend);
      assertEquals(0, ts.argmax(0, 1), backend + ": -x is largest (0) first at slot 0");
    }
  }
}
