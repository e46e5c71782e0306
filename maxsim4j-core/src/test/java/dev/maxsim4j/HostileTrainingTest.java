package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Training against an independent float64 reference on small-integer tokens: every product and sum is exact in
 * fp32, so ties in the max are frequent and scores must match exactly; gradients to within the loss's rounding.
 */
class HostileTrainingTest {
  static final String[] BACKENDS = {"reference", "scalar", "vector"};

  /** Padded fp32 problem with mask. */
  record Batch(float[] data, boolean[] mask, int n, int l, int d) {
    float v(int i, int s, int k) {
      return data[(i * l + s) * d + k];
    }

    boolean ok(int i, int s) {
      return mask[i * l + s];
    }

    TokenBatch tb(DType type) {
      TokenBatch b = type == DType.FLOAT32 ? TokenBatch.ofFloats(data, n, l, d)
          : TokenBatch.ofHalfs(type, type.narrow(data), n, l, d);
      return b.withMask(mask);
    }
  }

  static Batch random(SplittableRandom r, int n, int l, int d, double maskP, boolean allMaskedRow) {
    float[] data = new float[n * l * d];
    for (int i = 0; i < data.length; i++) {
      data[i] = r.nextInt(5) - 2;
    }
    boolean[] mask = new boolean[n * l];
    for (int i = 0; i < mask.length; i++) {
      mask[i] = r.nextDouble() >= maskP;
    }
    if (allMaskedRow && n > 0) {
      int row = r.nextInt(n);
      for (int s = 0; s < l; s++) {
        mask[row * l + s] = false;
      }
    }
    return new Batch(data, mask, n, l, d);
  }

  /** score and argmax of (i, j): lowest slot on ties. */
  static double score(Batch q, int i, Batch dd, int j, int[] argmax) {
    boolean any = false;
    for (int t = 0; t < dd.l; t++) {
      any |= dd.ok(j, t);
    }
    if (!any) {
      java.util.Arrays.fill(argmax, -1);
      return -1e9;
    }
    double sum = 0;
    for (int s = 0; s < q.l; s++) {
      argmax[s] = -1;
      if (!q.ok(i, s)) {
        continue;
      }
      double best = Double.NEGATIVE_INFINITY;
      for (int t = 0; t < dd.l; t++) {
        if (!dd.ok(j, t)) {
          continue;
        }
        double dot = 0;
        for (int k = 0; k < q.d; k++) {
          dot += (double) q.v(i, s, k) * dd.v(j, t, k);
        }
        if (dot > best) {
          best = dot;
          argmax[s] = t;
        }
      }
      sum += best;
    }
    return sum;
  }

  /** Contrastive loss value and dL/ds in float64. */
  static double contrastive(double[] s, int rows, int cols, int[] pos, double temp, double[] ds) {
    double total = 0;
    for (int i = 0; i < rows; i++) {
      double m = Double.NEGATIVE_INFINITY;
      for (int j = 0; j < cols; j++) {
        m = Math.max(m, s[i * cols + j] / temp);
      }
      double sum = 0;
      for (int j = 0; j < cols; j++) {
        sum += Math.exp(s[i * cols + j] / temp - m);
      }
      double lse = m + Math.log(sum);
      int p = pos == null ? i : pos[i];
      total += lse - s[i * cols + p] / temp;
      for (int j = 0; j < cols; j++) {
        double pr = Math.exp(s[i * cols + j] / temp - lse);
        ds[i * cols + j] = (pr - (j == p ? 1 : 0)) / temp / rows;
      }
    }
    return total / rows;
  }

  static void check(String where, double[] exp, float[] got, double tol) {
    assertEquals(exp.length, got.length, where + " length");
    for (int i = 0; i < exp.length; i++) {
      if (!(Math.abs(exp[i] - got[i]) <= tol)) {
        fail(where + " element " + i + ": expected " + exp[i] + ", got " + got[i]);
      }
    }
  }

  @Test
  void allPairsContrastiveMatchesFloat64OnAwkwardShapes() {
    int[] dims = {1, 3, 33, 127};
    for (long seed = 1; seed <= 60; seed++) {
      SplittableRandom r = new SplittableRandom(seed);
      int d = dims[r.nextInt(dims.length)];
      int nq = 1 + r.nextInt(4);
      int nd = nq + r.nextInt(4);
      int lq = 1 + r.nextInt(r.nextBoolean() ? 2 : 9);
      int ld = 1 + r.nextInt(r.nextBoolean() ? 2 : 70);
      Batch q = random(r, nq, lq, d, r.nextInt(3) * 0.3, r.nextInt(4) == 0);
      Batch dd = random(r, nd, ld, d, r.nextInt(3) * 0.3, r.nextInt(4) == 0);
      double temp = new double[] {1, 0.05, 7}[r.nextInt(3)];
      DType type = new DType[] {DType.FLOAT32, DType.FLOAT16, DType.BFLOAT16}[r.nextInt(3)];
      double[] s = new double[nq * nd];
      int[][] arg = new int[nq * nd][lq];
      for (int i = 0; i < nq; i++) {
        for (int j = 0; j < nd; j++) {
          s[i * nd + j] = score(q, i, dd, j, arg[i * nd + j]);
        }
      }
      double[] ds = new double[s.length];
      double loss = contrastive(s, nq, nd, null, temp, ds);
      double[] gq = new double[nq * lq * d];
      double[] gd = new double[nd * ld * d];
      for (int i = 0; i < nq; i++) {
        for (int j = 0; j < nd; j++) {
          int p = i * nd + j;
          for (int st = 0; st < lq; st++) {
            int a = arg[p][st];
            if (a < 0) {
              continue;
            }
            for (int k = 0; k < d; k++) {
              gq[(i * lq + st) * d + k] += ds[p] * dd.v(j, a, k);
              gd[(j * ld + a) * d + k] += ds[p] * q.v(i, st, k);
            }
          }
        }
      }
      double gmax = largestMagnitude(gq, gd);
      for (String backend : BACKENDS) {
        String where = "seed " + seed + " " + backend + " d=" + d + " q=" + nq + "x" + lq + " d=" + nd + "x" + ld
            + " " + type + " T=" + temp;
        try (MaxSim m = MaxSim.builder().backend(backend).threads(2).build()) {
          TrainingStep step = m.lossAllPairs(q.tb(type), dd.tb(type), Loss.contrastive((float) temp));
          float[] flat = new float[s.length];
          for (int i = 0; i < nq; i++) {
            System.arraycopy(step.scores()[i], 0, flat, i * nd, nd);
          }
          check(where + " scores", s, flat, 0);
          assertEquals(loss, step.loss(), 1e-5 * Math.max(1, Math.abs(loss)), where + " loss");
          check(where + " dQ", gq, step.gradients().queries().toFloatArray(), 1e-5 * gmax);
          check(where + " dD", gd, step.gradients().documents().toFloatArray(), 1e-5 * gmax);
          // the two-step path must agree with the fused one
          TrainingScores ts = m.scoresForTraining(q.tb(type), dd.tb(type));
          Loss.Value v = Loss.contrastive((float) temp).evaluate(ts.scoreMatrix());
          Gradients g = ts.backward(v.dScores());
          check(where + " 2-step dQ", gq, g.queries().toFloatArray(), 1e-5 * gmax);
          check(where + " 2-step dD", gd, g.documents().toFloatArray(), 1e-5 * gmax);
          for (int p = 0; p < s.length; p++) {
            for (int st = 0; st < lq; st++) {
              assertEquals(arg[p][st], ts.argmax(p, st), where + " argmax pair " + p + " slot " + st);
            }
          }
        }
      }
    }
  }

  /** The largest |value| of the gradients, at least 1e-30: the scale their tolerances are relative to. */
  static double largestMagnitude(double[]... gradients) {
    double largest = 1e-30;
    for (double[] g : gradients) {
      for (double v : g) {
        largest = Math.max(largest, Math.abs(v));
      }
    }
    return largest;
  }
}
