package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link HostileParityFuzzTest}'s hostile cases (every type pair, magnitudes from subnormal to fp32's largest, scales
 * of 0, -0, negative and extreme, NaN and infinities, d from 1 to 513, ragged packed rows, masks, all-masked rows) on
 * the GPU against the float64 reference: all pairs, top-k, candidates and resident documents. The GPU keeps the fp32
 * result where a sum passes fp32's range (MaxSim's class comment) and sums a compressed token's stored values before
 * its scale, so its dot products can overflow where the scaled ones would not (docs/compressed.md): a pair whose
 * unscaled sums could pass fp32's range is held only to NaN where the reference is NaN. Elsewhere it is held to the
 * CPU's bound, plus the rounding of a scale product below fp32's normal range times the unscaled sums. Fresh seeds
 * every run; a failure names its seed ({@code -Dfuzz.seed}, {@code -Dfuzz.cases} replay or widen it).
 */
@GpuTest
class CudaHostileParityFuzzTest {
  @Test
  void everyTypePairScoresAsTheReference() throws Exception {
    long seed0 = Long.getLong("fuzz.seed", new RandomBatches().seed);
    int cases = Integer.getInteger("fuzz.cases", 300);
    List<String> failures = new ArrayList<>();
    try (MaxSim ref = MaxSim.builder().backend("reference").build();
        MaxSim gpu = MaxSim.builder().backend("cuda").build()) {
      for (long seed = seed0; seed < seed0 + cases && failures.size() < 30; seed++) {
        HostileParityFuzzTest.Case drawn = HostileParityFuzzTest.drawCase(seed);
        if (drawn == null) {
          continue;
        }
        TokenBatch q = drawn.queries();
        TokenBatch d = drawn.documents();
        int nq = q.size();
        int nd = d.size();
        String where = drawn.where();
        try {
          float[][] want = ref.scores(q, d);
          double[][] tol = new double[nq][nd];
          for (int i = 0; i < nq; i++) {
            for (int j = 0; j < nd; j++) {
              tol[i][j] = tolerance(q, i, d, j);
            }
          }
          float[][] got = gpu.scores(q, d);
          checkAll(want, got, tol, where + " scores");
          try (ResidentBatch rb = gpu.upload(d)) {
            checkAll(want, gpu.scores(q, rb), tol, where + " resident");
          }
          TopK top = gpu.topK(q, d, nd);
          float[][] ranked = new float[nq][nd];
          for (int i = 0; i < nq; i++) {
            for (int rnk = 0; rnk < nd; rnk++) {
              ranked[i][top.indices()[i][rnk]] = top.scores()[i][rnk];
              if (rnk > 0) { // higher first, NaN highest; ties by the lower document
                int c = Float.compare(top.scores()[i][rnk - 1], top.scores()[i][rnk]);
                assertTrue(c > 0 || c == 0 && top.indices()[i][rnk - 1] < top.indices()[i][rnk], where
                    + " topK order, query " + i + " rank " + rnk);
              }
            }
          }
          checkAll(want, ranked, tol, where + " topK");
          if (nd % nq == 0) {
            int k = nd / nq;
            float[][] cand = gpu.candidates(q, d, k);
            for (int i = 0; i < nq; i++) {
              for (int c = 0; c < k; c++) {
                check(want[i][i * k + c], cand[i][c], tol[i][i * k + c], where + " candidates [" + i + "][" + c
                    + "]");
              }
            }
          }
        } catch (AssertionError | RuntimeException e) {
          failures.add(e.toString());
        }
      }
    }
    for (String f : failures) {
      System.out.println("FAIL " + f);
    }
    assertTrue(failures.isEmpty(), failures.size() + " failures; first: "
        + (failures.isEmpty() ? "" : failures.get(0)));
  }

  private static void checkAll(float[][] want, float[][] got, double[][] tol, String where) {
    for (int i = 0; i < want.length; i++) {
      for (int j = 0; j < want[i].length; j++) {
        check(want[i][j], got[i][j], tol[i][j], where + " [" + i + "][" + j + "]");
      }
    }
  }

  /**
   * A pair's tolerance: infinite where its sums, scaled or not, could pass fp32's range (a NaN of infinities of both
   * signs, an infinity where the exact sum is finite), which only NaN is held to. Elsewhere the CPU's bound plus
   * fp32's smallest step for every value the GPU may round below fp32's normal range before a scale multiplies it
   * or as a scale multiplies it: the unscaled products and partial sums, a scale times a stored value, a scale
   * product times a dot product.
   */
  private static double tolerance(TokenBatch q, int i, TokenBatch d, int j) {
    double unscaled = 0;
    double scaled = 0;
    double scaleRounding = 0;
    for (int s = 0; s < q.length(i); s++) {
      if (!q.isValid(i, s)) continue;
      int qs = q.tokens().rowStart[i] + s;
      double largest = 0;
      double largestScaled = 0;
      double roundedScales = 0;
      for (int t = 0; t < d.length(j); t++) {
        if (!d.isValid(j, t)) continue;
        int dt = d.tokens().rowStart[j] + t;
        double sq = Math.abs(q.tokens().scale(qs));
        double sd = Math.abs(d.tokens().scale(dt));
        double sum = 0;
        double sumScaled = 0;
        double rounded = 0; // what rounding below fp32's normal range may take from this dot product
        for (int k = 0; k < q.dim(); k++) {
          double uq = Math.abs(unscaled(q, qs, k));
          double ud = Math.abs(unscaled(d, dt, k));
          sum += uq * ud;
          sumScaled += Math.abs(q.tokens().value(qs, k) * d.tokens().value(dt, k));
          if (isSubnormal(uq * ud)) { // an unscaled product and the partial sum it joins, before the scales
            rounded += 2 * Float.MIN_VALUE * sq * sd;
          }
          if (isSubnormal(sq * uq)) { // a scaled query value, before the document value multiplies it
            rounded += Float.MIN_VALUE * ud * sd;
          }
          if (isSubnormal(sd * ud)) {
            rounded += Float.MIN_VALUE * uq * sq;
          }
        }
        if (isSubnormal(sum)) { // the unscaled partial sums, d of them
          rounded += q.dim() * Float.MIN_VALUE * sq * sd;
        }
        if (isSubnormal(sq * sd)) { // the scale product, before the dot product multiplies it
          rounded += Float.MIN_VALUE * sum;
        }
        largest = Math.max(largest, sum);
        largestScaled = Math.max(largestScaled, sumScaled);
        roundedScales = Math.max(roundedScales, rounded);
      }
      unscaled += largest;
      scaled += largestScaled;
      scaleRounding += roundedScales;
    }
    if (unscaled >= Float.MAX_VALUE / 4 || scaled >= Float.MAX_VALUE / 4) {
      return Double.POSITIVE_INFINITY;
    }
    return HostileParityFuzzTest.tolerance(q, i, d, j) + scaleRounding;
  }

  /** Whether {@code x} lies below fp32's normal range (with a factor of 2 to spare), but for 0. */
  private static boolean isSubnormal(double x) {
    return x != 0 && x < 2.0 * Float.MIN_NORMAL;
  }

  /** Element {@code k} of stored token {@code token} as the GPU multiplies it: a compressed one before its scale. */
  private static float unscaled(TokenBatch b, int token, int k) {
    return b.dtype().isQuantized() ? b.tokens().stored(token, k) : b.tokens().element(token, k);
  }

  private static void check(float want, float got, double tol, String where) {
    if (tol == Double.POSITIVE_INFINITY && !Float.isNaN(want)) {
      return;
    }
    HostileParityFuzzTest.check(want, got, tol, where);
  }
}
