package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The training path of every CPU backend against a float64 oracle written here, on inputs every backend computes
 * exactly (multiples of 1/8 in [-1, 1], exact in fp16 and bf16, so fp32 dot products of up to 513 terms are exact
 * too): scores and argmax must match bit for bit, duplicated tokens must give the gradient to the lowest slot, and
 * gradients match the analytic ones (dS x the winning token) under every loss. Shapes are awkward: d of 1 to 513,
 * L = 1, ragged packed rows, padded rows with lengths, masked and padding slots holding NaN, all-masked queries,
 * empty documents (length 0 and all masked), documents across the vector kernel's 128-token tiles.
 */
class HostileTrainingOracleTest {
  private static final String[] BACKENDS = {"reference", "scalar", "vector"};
  private static final DType[] TYPES = {DType.FLOAT32, DType.FLOAT16, DType.BFLOAT16};

  /** Rows of tokens with validity; {@code tok[i][s]} is slot s of row i (d values), junk where invalid. */
  record Side(float[][][] tok, boolean[][] valid, int dim) {
    int n() {
      return tok.length;
    }

    int len(int i) {
      return tok[i].length;
    }

    int maxLen() {
      int l = 0;
      for (float[][] row : tok) {
        l = Math.max(l, row.length);
      }
      return l;
    }

    boolean empty(int i) {
      for (boolean v : valid[i]) {
        if (v) {
          return false;
        }
      }
      return true;
    }

    /** The batch, packed or padded (padding slots masked by length and holding NaN, which must never be read). */
    TokenBatch batch(DType type, boolean packed) {
      int n = n();
      if (packed) {
        int[] offsets = new int[n + 1];
        for (int i = 0; i < n; i++) {
          offsets[i + 1] = offsets[i] + len(i);
        }
        float[] data = new float[offsets[n] * dim];
        boolean[] mask = new boolean[offsets[n]];
        for (int i = 0; i < n; i++) {
          for (int s = 0; s < len(i); s++) {
            System.arraycopy(tok[i][s], 0, data, (offsets[i] + s) * dim, dim);
            mask[offsets[i] + s] = valid[i][s];
          }
        }
        TokenBatch b = type == DType.FLOAT32 ? TokenBatch.packedFloats(data, offsets, dim)
            : TokenBatch.packedHalfs(type, type.narrow(data), offsets, dim);
        return b.withMask(mask);
      }
      int l = Math.max(1, maxLen());
      float[] data = new float[n * l * dim];
      Arrays.fill(data, Float.NaN);
      boolean[] mask = new boolean[n * l];
      int[] lengths = new int[n];
      for (int i = 0; i < n; i++) {
        lengths[i] = len(i);
        for (int s = 0; s < len(i); s++) {
          System.arraycopy(tok[i][s], 0, data, (i * l + s) * dim, dim);
          mask[i * l + s] = valid[i][s];
        }
      }
      TokenBatch b = type == DType.FLOAT32 ? TokenBatch.ofFloats(data, n, l, dim)
          : TokenBatch.ofHalfs(type, type.narrow(data), n, l, dim);
      return b.withMask(mask).withLengths(lengths);
    }

    /** Index of slot s of row i in the batch's storage. */
    int stored(int i, int s, boolean packed) {
      if (packed) {
        int o = 0;
        for (int r = 0; r < i; r++) {
          o += len(r);
        }
        return o + s;
      }
      return i * Math.max(1, maxLen()) + s;
    }
  }

  static float eighth(SplittableRandom r) {
    return (r.nextInt(17) - 8) / 8f;
  }

  /** Random side: masked tokens and NaN in them, an all-masked or empty row now and then, duplicated tokens. */
  static Side side(SplittableRandom r, int n, int maxLen, int dim, boolean allowEmpty) {
    float[][][] tok = new float[n][][];
    boolean[][] valid = new boolean[n][];
    double maskP = new double[] {0, 0.2, 0.6}[r.nextInt(3)];
    for (int i = 0; i < n; i++) {
      int len = maxLen == 1 ? 1 : 1 + r.nextInt(maxLen);
      int kind = r.nextInt(8);
      if (allowEmpty && kind == 0) {
        len = 0;
      }
      tok[i] = new float[len][dim];
      valid[i] = new boolean[len];
      for (int s = 0; s < len; s++) {
        valid[i][s] = !(allowEmpty && kind == 1) && r.nextDouble() >= maskP;
        for (int k = 0; k < dim; k++) {
          tok[i][s][k] = valid[i][s] ? eighth(r) : Float.NaN;
        }
      }
      // exact ties: copy valid tokens onto later (and earlier) valid slots
      for (int c = 0; c < len / 3 + 1 && len > 1; c++) {
        int a = r.nextInt(len);
        int b = r.nextInt(len);
        if (valid[i][a] && valid[i][b]) {
          tok[i][b] = tok[i][a].clone();
        }
      }
    }
    return new Side(tok, valid, dim);
  }

  /** MaxSim of (i, j) in float64 with its argmax per query slot: lowest valid slot on ties, -1 where none. */
  static double score(Side q, int i, Side d, int j, int[] argmax) {
    Arrays.fill(argmax, -1);
    if (d.empty(j)) {
      return -1e9;
    }
    double sum = 0;
    for (int s = 0; s < q.len(i); s++) {
      if (!q.valid[i][s]) {
        continue;
      }
      double best = 0;
      for (int t = 0; t < d.len(j); t++) {
        if (!d.valid[j][t]) {
          continue;
        }
        double dot = 0;
        for (int k = 0; k < q.dim; k++) {
          dot += (double) q.tok[i][s][k] * d.tok[j][t][k];
        }
        if (argmax[s] < 0 || dot > best) {
          best = dot;
          argmax[s] = t;
        }
      }
      sum += best;
    }
    return sum;
  }

  /** float64 dL/ds of each loss, averaged over rows as the library does; returns the loss. */
  static double lossGrad(String loss, double[] s, int rows, int cols, int[] pos, double temp, double[][] teacher,
      double[] margins, double[] ds) {
    double total = 0;
    for (int i = 0; i < rows; i++) {
      int o = i * cols;
      if (loss.equals("mse")) {
        double diff = s[o] - s[o + 1] - margins[i];
        total += diff * diff;
        ds[o] = 2 * diff / rows;
        ds[o + 1] = -2 * diff / rows;
        continue;
      }
      double[] ls = logSoftmax(s, o, cols, temp);
      if (loss.equals("ce")) {
        total -= ls[pos[i]];
        for (int j = 0; j < cols; j++) {
          ds[o + j] = (Math.exp(ls[j]) - (j == pos[i] ? 1 : 0)) / temp / rows;
        }
      } else {
        double[] lt = logSoftmax(teacher[i], 0, cols, temp);
        for (int j = 0; j < cols; j++) {
          double pt = Math.exp(lt[j]);
          total += pt > 0 ? pt * (lt[j] - ls[j]) : 0;
          ds[o + j] = (Math.exp(ls[j]) - pt) / temp / rows;
        }
      }
    }
    return total / rows;
  }

  static double[] logSoftmax(double[] x, int off, int n, double temp) {
    double m = Double.NEGATIVE_INFINITY;
    for (int j = 0; j < n; j++) {
      m = Math.max(m, x[off + j] / temp);
    }
    double sum = 0;
    for (int j = 0; j < n; j++) {
      sum += Math.exp(x[off + j] / temp - m);
    }
    double[] out = new double[n];
    for (int j = 0; j < n; j++) {
      out[j] = x[off + j] / temp - m - Math.log(sum);
    }
    return out;
  }

  @Test
  void everyLossOnEveryBackendMatchesTheFloat64OracleExactlyOnScoresAndArgmax() {
    int[] dims = {1, 3, 33, 127, 513};
    for (long seed = 1; seed <= Long.getLong("oracle.seeds", 10); seed++) { // more seeds by hand: -Doracle.seeds
      SplittableRandom r = new SplittableRandom(seed * 7919);
      int dim = dims[(int) (seed % dims.length)];
      int kind = r.nextInt(3); // 0 all pairs, 1 candidates, 2 pairwise
      String loss = kind == 2 ? "none" : new String[] {"ce", "kl", "mse"}[r.nextInt(3)];
      int nq = 1 + r.nextInt(4);
      int k = loss.equals("mse") ? 2 : 1 + r.nextInt(3);
      int nd = kind == 0 ? nq + r.nextInt(3) : kind == 1 ? nq * k : nq;
      int cols = kind == 0 ? nd : kind == 1 ? k : 1;
      if (kind == 0 && loss.equals("mse")) {
        loss = "ce";
      }
      int lq = r.nextInt(4) == 0 ? 1 : 1 + r.nextInt(r.nextBoolean() ? 9 : 70); // past two blocks of 16 lanes
      int ld = r.nextInt(4) == 0 ? 1 : r.nextBoolean() ? 1 + r.nextInt(12) : 100 + r.nextInt(200);
      Side q = side(r, nq, lq, dim, false);
      Side d = side(r, nd, ld, dim, true);
      if (r.nextInt(4) == 0) { // an all-masked query
        Arrays.fill(q.valid[r.nextInt(nq)], false);
      }
      double temp = new float[] {1, 0.05f, 1e-3f, 30}[r.nextInt(4)]; // the float the loss holds
      int[] pos = new int[nq];
      double[][] teacher = new double[nq][cols];
      double[] margins = new double[nq];
      for (int i = 0; i < nq; i++) {
        pos[i] = kind == 0 && r.nextBoolean() ? i : r.nextInt(cols);
        margins[i] = eighth(r) * 4;
        for (int j = 0; j < cols; j++) {
          teacher[i][j] = j > 0 && r.nextInt(5) == 0 ? Double.NEGATIVE_INFINITY : eighth(r) * 10;
        }
      }

      int pairs = nq * cols;
      double[] s = new double[pairs];
      int[][] arg = new int[pairs][q.maxLen()];
      int[] docOf = new int[pairs];
      for (int i = 0; i < nq; i++) {
        for (int c = 0; c < cols; c++) {
          int p = i * cols + c;
          docOf[p] = kind == 0 ? c : kind == 1 ? i * k + c : i;
          s[p] = score(q, i, d, docOf[p], arg[p]);
        }
      }
      double[] ds = new double[pairs];
      double expectedLoss = Double.NaN;
      if (loss.equals("none")) {
        for (int p = 0; p < pairs; p++) {
          ds[p] = eighth(r);
        }
      } else {
        expectedLoss = lossGrad(loss, s, nq, cols, pos, temp, teacher, margins, ds);
      }
      for (int p = 0; p < pairs; p++) {
        ds[p] = (float) ds[p]; // the library hands fp32 dScores to the backward
      }
      for (DType type : TYPES) {
        for (boolean packed : new boolean[] {false, true}) {
          TokenBatch qb = q.batch(type, packed && r.nextBoolean());
          TokenBatch db = d.batch(type, packed);
          boolean qPacked = qb.isPacked();
          double[] gq = new double[Math.max(1, qb.isPacked() ? qb.offsets()[nq] : nq * Math.max(1, q.maxLen()))
              * dim];
          double[] gd = new double[(packed ? db.offsets()[nd] : nd * Math.max(1, d.maxLen())) * dim];
          for (int p = 0; p < pairs; p++) {
            int i = p / cols;
            int j = docOf[p];
            for (int st = 0; st < q.len(i); st++) {
              int a = arg[p][st];
              if (a < 0) {
                continue;
              }
              for (int e = 0; e < dim; e++) {
                gq[q.stored(i, st, qPacked) * dim + e] += ds[p] * d.tok[j][a][e];
                gd[d.stored(j, a, packed) * dim + e] += ds[p] * q.tok[i][st][e];
              }
            }
          }
          double gmax = HostileTrainingTest.largestMagnitude(gq, gd);
          for (String backend : BACKENDS) {
            String where = "seed " + seed + " " + backend + " " + type + (packed ? " packed" : " padded")
                + " kind " + kind + " loss " + loss + " T=" + temp + " d=" + dim + " q " + nq + "x" + lq
                + " docs " + nd + "x" + ld;
            try (MaxSim m = MaxSim.builder().backend(backend).threads(2).build()) {
              TrainingScores ts = kind == 0 ? m.scoresForTraining(qb, db)
                  : kind == 1 ? m.candidatesForTraining(qb, db, k) : m.pairwiseForTraining(qb, db);
              float[] got = ts.scores();
              for (int p = 0; p < pairs; p++) {
                assertEquals((float) s[p], got[p], 0f, where + " score of pair " + p);
                for (int st = 0; st < qb.maxLength(); st++) {
                  int expected = st < q.len(p / cols) ? arg[p][st] : -1;
                  assertEquals(expected, ts.argmax(p, st), where + " argmax of pair " + p + " slot " + st);
                }
              }
              float[] dsf = new float[pairs];
              for (int p = 0; p < pairs; p++) {
                dsf[p] = (float) ds[p];
              }
              Gradients g;
              if (loss.equals("none")) {
                g = ts.backward(dsf);
              } else {
                Loss l = switch (loss) {
                  case "ce" -> Loss.contrastive(pos, (float) temp);
                  case "kl" -> Loss.klDistillation(toFloats(teacher), (float) temp);
                  default -> Loss.marginMse(toFloats(margins));
                };
                TrainingStep step = kind == 0 ? m.lossAllPairs(qb, db, l) : m.lossCandidates(qb, db, k, l);
                assertEquals(expectedLoss, step.loss(), 1e-9 * Math.max(1, Math.abs(expectedLoss)), where + " loss");
                for (int p = 0; p < pairs; p++) {
                  assertEquals((float) s[p], step.scores()[p / cols][p % cols], 0f, where + " step score " + p);
                }
                g = step.gradients();
              }
              close(where + " dQ", gq, g.queries().toFloatArray(), 1e-6 * gmax);
              close(where + " dD", gd, g.documents().toFloatArray(), 1e-6 * gmax);
              Gradients narrow = ts.backward(dsf, GradientPrecision.INPUT);
              Gradients wide = ts.backward(dsf);
              assertEquals(type, narrow.queries().dtype(), where);
              assertEquals(type, narrow.documents().dtype(), where);
              assertEquals(Arrays.toString(rounded(type, wide.queries().toFloatArray())),
                  Arrays.toString(narrow.queries().toFloatArray()), where + " dQ in the input dtype");
              assertEquals(Arrays.toString(rounded(type, wide.documents().toFloatArray())),
                  Arrays.toString(narrow.documents().toFloatArray()), where + " dD in the input dtype");
            }
          }
        }
      }
    }
  }

  static float[] rounded(DType type, float[] x) {
    return type == DType.FLOAT32 ? x : type.widen(type.narrow(x));
  }

  static float[][] toFloats(double[][] x) {
    float[][] out = new float[x.length][];
    for (int i = 0; i < x.length; i++) {
      out[i] = toFloats(x[i]);
    }
    return out;
  }

  static float[] toFloats(double[] x) {
    float[] out = new float[x.length];
    for (int i = 0; i < x.length; i++) {
      out[i] = (float) x[i];
    }
    return out;
  }

  /** Within tol, finite, and exactly zero where the oracle has no contribution (masked, padding, empty rows). */
  static void close(String where, double[] expected, float[] got, double tol) {
    assertEquals(expected.length, got.length, where + " length");
    for (int i = 0; i < expected.length; i++) {
      if (!Float.isFinite(got[i]) || !(Math.abs(expected[i] - got[i]) <= tol)) {
        fail(where + " element " + i + ": expected " + expected[i] + ", got " + got[i]);
      }
    }
  }

  /**
   * Gaussian tokens (rounded to each dtype), some scaled near fp32's range so that fp32 sums overflow and the pair
   * is scored again in float64, with tokens duplicated at random slots: whatever the rounding, a duplicate never
   * wins over its earlier copy, so every argmax is the first slot holding its token; scalar and vector agree on
   * scores to fp32 rounding and with the reference where the scores are finite.
   */
  @Test
  void aDuplicatedTokenNeverTakesTheGradientFromItsEarlierCopy() {
    int[] dims = {1, 3, 33, 127, 513};
    for (long seed = 1; seed <= Long.getLong("oracle.seeds", 25); seed++) {
      SplittableRandom r = new SplittableRandom(seed * 104729);
      int dim = dims[(int) (seed % dims.length)];
      DType type = TYPES[(int) (seed % 3)];
      double scale = new double[] {1, 1e17, 1e19, 1e-20}[r.nextInt(4)];
      int nq = 1 + r.nextInt(3);
      int nd = 1 + r.nextInt(4);
      Side q = side(r, nq, 1 + r.nextInt(70), dim, false);
      Side d = side(r, nd, r.nextBoolean() ? 1 + r.nextInt(10) : 120 + r.nextInt(150), dim, true);
      for (Side side : new Side[] {q, d}) {
        for (int i = 0; i < side.n(); i++) {
          for (int s = 0; s < side.len(i); s++) {
            if (side.valid[i][s]) {
              for (int k = 0; k < dim; k++) {
                float v = (float) (r.nextGaussian() * scale);
                side.tok[i][s][k] = type == DType.FLOAT32 ? v : type.widen(type.narrow(v));
              }
            }
          }
          for (int c = 0; c < side.len(i) / 2 && side.len(i) > 1; c++) { // duplicates after the values are drawn
            int a = r.nextInt(side.len(i));
            int b = r.nextInt(side.len(i));
            if (side.valid[i][a] && side.valid[i][b]) {
              side.tok[i][Math.max(a, b)] = side.tok[i][Math.min(a, b)].clone();
            }
          }
        }
      }
      boolean packed = r.nextBoolean();
      TokenBatch qb = q.batch(type, packed);
      TokenBatch db = d.batch(type, !packed);
      float[][] scores = new float[BACKENDS.length][];
      for (int b = 0; b < BACKENDS.length; b++) {
        String where = "seed " + seed + " " + BACKENDS[b] + " " + type + " d=" + dim + " scale " + scale;
        try (MaxSim m = MaxSim.builder().backend(BACKENDS[b]).threads(2).build()) {
          TrainingScores ts = m.scoresForTraining(qb, db);
          scores[b] = ts.scores();
          for (int i = 0; i < nq; i++) {
            for (int j = 0; j < nd; j++) {
              int p = i * nd + j;
              for (int s = 0; s < q.len(i); s++) {
                int a = ts.argmax(p, s);
                if (!q.valid[i][s] || d.empty(j)) {
                  assertEquals(-1, a, where + " pair " + p + " slot " + s);
                  continue;
                }
                assertTrue(a >= 0 && a < d.len(j) && d.valid[j][a], where + " pair " + p + " slot " + s + ": " + a);
                for (int t = 0; t < a; t++) {
                  if (d.valid[j][t] && Arrays.equals(d.tok[j][t], d.tok[j][a])) {
                    fail(where + " pair " + p + " slot " + s + ": argmax " + a + " duplicates slot " + t);
                  }
                }
              }
            }
          }
          Gradients g = ts.backward(new float[nq * nd]);
          for (float v : g.documents().toFloatArray()) {
            assertTrue(v == 0f || Float.isNaN(v), where + " dD of a zero dScore: " + v);
          }
        }
      }
      for (int p = 0; p < scores[0].length; p++) {
        float ref = scores[0][p];
        for (int b = 1; b < BACKENDS.length; b++) {
          String where = "seed " + seed + " " + BACKENDS[b] + " " + type + " d=" + dim + " scale " + scale + " pair " + p;
          if (Float.isFinite(ref)) {
            double tol = 1e-4 * Math.abs(ref) + 1e-3 * scale * scale * dim * q.maxLen();
            assertTrue(Math.abs(ref - scores[b][p]) <= tol, where + ": reference " + ref + ", got " + scores[b][p]);
          } else {
            assertEquals(ref, scores[b][p], 0f, where);
          }
        }
      }
    }
  }

  /** Fp32 partial sums overflow (2^64 x 2^64) where the float64 score is finite: the argmax is the float64 one. */
  @Test
  void aPairRescoredInFloat64KeepsTheFloat64Argmax() {
    float big = 0x1p64f;
    TokenBatch q = TokenBatch.ofFloats(new float[] {big, big}, 1, 1, 2);
    TokenBatch d = TokenBatch.ofFloats(new float[] {big, -big, 1f, 1f, big, -big}, 1, 3, 2);
    for (String backend : BACKENDS) {
      try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
        TrainingScores ts = m.scoresForTraining(q, d);
        assertEquals(0x1p65f, ts.scores()[0], 0f, backend);
        assertEquals(1, ts.argmax(0, 0), backend);
        Gradients g = ts.backward(new float[] {1f});
        assertEquals(Arrays.toString(new float[] {1f, 1f}), Arrays.toString(g.queries().toFloatArray()), backend);
        assertEquals(Arrays.toString(new float[] {0f, 0f, big, big, 0f, 0f}),
            Arrays.toString(g.documents().toFloatArray()), backend);
      }
    }
  }

  /** A batch whose documents are all empty: every score -1e9, and every loss's gradients finite and zero on them. */
  @Test
  void documentsWithoutAValidTokenScoreMinusOneBillionAndGetNoGradientUnderEveryLoss() {
    TokenBatch q = TokenBatch.ofFloats(new float[] {1f, 2f, 3f, -1f, 0.5f, 0.25f}, 2, 1, 3);
    TokenBatch emptyPacked = TokenBatch.packedFloats(new float[3 * 2], new int[] {0, 0, 2, 2, 2}, 3)
        .withMask(new boolean[] {false, false});
    float tiny = Math.nextUp(1 / Float.MAX_VALUE);
    for (String backend : BACKENDS) {
      try (MaxSim m = MaxSim.builder().backend(backend).threads(2).build()) {
        for (float temp : new float[] {tiny, 0.05f, 1f, Float.MAX_VALUE}) {
          for (Loss loss : new Loss[] {Loss.contrastive(temp), Loss.contrastive(new int[] {1, 0}, temp),
              Loss.klDistillation(new float[][] {{0f, 1f}, {2f, Float.NEGATIVE_INFINITY}}, temp),
              Loss.marginMse(new float[] {1f, -3f})}) {
            String where = backend + " T=" + temp + " " + loss.getClass().getSimpleName();
            TrainingStep step = m.lossCandidates(q, emptyPacked, 2, loss);
            assertTrue(Double.isFinite(step.loss()), where + " loss " + step.loss());
            for (float[] row : step.scores()) {
              assertEquals("[-1.0E9, -1.0E9]", Arrays.toString(row), where);
            }
            for (float v : step.gradients().queries().toFloatArray()) {
              assertEquals(0f, v, 0f, where + " dQ");
            }
            for (float v : step.gradients().documents().toFloatArray()) {
              assertEquals(0f, v, 0f, where + " dD");
            }
          }
        }
      }
    }
  }

  /** Temperatures and teacher values at their edges are refused by name before any work, and so are shapes. */
  @Test
  void lossParametersAndShapesAtTheirEdgesAreRefusedByName() {
    for (float temp : new float[] {0f, -0f, -1f, -Float.MIN_VALUE, Float.MIN_VALUE, Float.NaN,
        Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 1 / Float.MAX_VALUE}) {
      refused(() -> Loss.contrastive(temp), "temperature = " + temp);
      refused(() -> Loss.contrastive(new int[] {0}, temp), "temperature = " + temp);
      refused(() -> Loss.klDistillation(new float[][] {{1f}}, temp), "temperature = " + temp);
    }
    for (float bad : new float[] {Float.NaN, Float.POSITIVE_INFINITY}) {
      refused(() -> Loss.klDistillation(new float[][] {{1f, bad}}, 1f), "teacherScores[0][1] = " + bad);
    }
    refused(() -> Loss.klDistillation(new float[][] {{Float.NEGATIVE_INFINITY}}, 1f), "teacherScores[0] is -Infinity");
    for (float bad : new float[] {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY}) {
      refused(() -> Loss.marginMse(new float[] {0f, bad}), "teacherMargins[1] = " + bad);
    }
    refused(() -> Loss.contrastive(null, 1f), "positives");
    refused(() -> Loss.klDistillation(null, 1f), "teacherScores");
    refused(() -> Loss.marginMse(null), "teacherMargins");

    TokenBatch q = TokenBatch.ofFloats(new float[] {1f, 2f, 3f, 4f}, 2, 1, 2);
    TokenBatch d4 = TokenBatch.ofFloats(new float[8], 4, 1, 2);
    TokenBatch d1 = TokenBatch.ofFloats(new float[2], 1, 1, 2);
    try (MaxSim m = MaxSim.builder().backend("vector").threads(1).build()) {
      for (int p : new int[] {-1, 4, Integer.MIN_VALUE, Integer.MAX_VALUE}) {
        refused(() -> m.lossAllPairs(q, d4, Loss.contrastive(new int[] {0, p}, 1f)), "positives[1] = " + p);
        refused(() -> m.lossCandidates(q, d4, 2, Loss.contrastive(new int[] {p, 0}, 1f)), "positives[0] = " + p);
      }
      refused(() -> m.lossAllPairs(q, d4, Loss.contrastive(new int[] {0}, 1f)), "positives has length 1");
      refused(() -> m.lossAllPairs(q, d1, Loss.contrastive(1f)), "needs columns >= rows");
      refused(() -> m.lossAllPairs(q, d4, Loss.klDistillation(new float[][] {{1, 2, 3, 4}}, 1f)),
          "teacherScores has 1 rows");
      refused(() -> m.lossAllPairs(q, d4, Loss.klDistillation(new float[][] {{1, 2, 3, 4}, {1, 2, 3}}, 1f)),
          "teacherScores[1] has length 3");
      refused(() -> m.lossCandidates(q, d4, 2, Loss.marginMse(new float[] {1f})), "teacherMargins has length 1");
      refused(() -> m.lossAllPairs(q, d4, Loss.marginMse(new float[] {1f, 2f})), "K = 2");
      refused(() -> m.lossCandidates(q, d4, 3, Loss.contrastive(1f)), "candidates K mismatch");
      refused(() -> m.lossCandidates(q, d4, 0, Loss.contrastive(1f)), "candidatesPerQuery = 0");
      refused(() -> m.lossCandidates(q, d4, 2, null), "loss");
      refused(() -> m.lossAllPairs(q, d4, Loss.contrastive(1f), null), "precision");
      refused(() -> m.pairwiseForTraining(q, d4), "pairwise needs as many documents as queries");
      refused(() -> m.lossAllPairs(q, TokenBatch.ofFloats(new float[12], 4, 1, 3), Loss.contrastive(1f)),
          "d mismatch");
      TrainingScores ts = m.scoresForTraining(q, d4);
      refused(() -> ts.backward(new float[7]), "dScores has length 7; expected 8");
      refused(() -> ts.backward(new float[][] {new float[4]}), "dScores has 1 rows; expected 2");
      refused(() -> ts.backward(new float[][] {new float[4], new float[3]}), "dScores[1] has length 3");
      refused(() -> ts.backward(new float[8], null), "precision");
      refused(() -> ts.argmax(8, 0), "pair");
      refused(() -> ts.argmax(0, 1), "querySlot");
    }
  }

  private static void refused(Runnable call, String part) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call::run, part);
    assertTrue(e.getMessage() != null && e.getMessage().contains(part), "expected '" + part + "' in: " + e.getMessage());
  }
}
