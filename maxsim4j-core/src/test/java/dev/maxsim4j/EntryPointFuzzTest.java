package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Random hostile shapes through every CPU entry point: each score against a float64 reference written here from
 * the tokens (its own e4m3 and bit decoding), and the entry points against one another bit for bit where they run
 * the same kernel on the same values (threads, layouts, memory, masks that mask nothing, resident and async calls,
 * top-k, float32 against bf16/fp16 of the same values).
 */
class EntryPointFuzzTest {
  static final int[] DIMS = {1, 2, 3, 7, 8, 15, 16, 17, 31, 33, 63, 64, 65, 127, 129, 513};
  static final int[] LENGTHS = {0, 1, 2, 3, 5, 6, 7, 12, 13, 31, 33, 127, 128, 129, 257};
  static final DType[] TYPES = DType.values();

  static MaxSim two;
  static MaxSim one;

  @BeforeAll
  static void open() {
    two = MaxSim.builder().backend("vector").threads(2).build();
    one = MaxSim.builder().backend("vector").threads(1).build();
  }

  @AfterAll
  static void close() {
    two.close();
    one.close();
  }

  /** One token as given: float values (representable in its type) or stored bytes and a scale. */
  record Tok(float[] f, byte[] b, float scale, boolean valid) {}

  /** A batch described row by row, built into each layout. */
  record Spec(DType type, int dim, List<Tok[]> rows) {
    int n() {
      return rows.size();
    }

    int maxLen() {
      int l = 0;
      for (Tok[] r : rows) {
        l = Math.max(l, r.length);
      }
      return l;
    }

    Spec select(int[] which) {
      List<Tok[]> out = new ArrayList<>();
      for (int w : which) {
        out.add(rows.get(w));
      }
      return new Spec(type, dim, out);
    }

    Spec as(DType other) {
      return new Spec(other, dim, rows);
    }
  }

  // ------------------------------------------------------------------ decoding (independent of the library)

  static double e4m3(int b) {
    int e = (b >>> 3) & 0xf;
    int m = b & 7;
    if ((b & 0x7f) == 0x7f) {
      return Double.NaN;
    }
    double v = e == 0 ? m / 8.0 * Math.pow(2, -6) : (1 + m / 8.0) * Math.pow(2, e - 7);
    return (b & 0x80) != 0 ? -v : v;
  }

  static double value(DType type, Tok t, int k) {
    return switch (type) {
      case FLOAT32, FLOAT16, BFLOAT16 -> t.f[k];
      case INT8 -> (double) t.scale * t.b[k];
      case FLOAT8_E4M3 -> (double) t.scale * e4m3(t.b[k] & 0xff);
      case BINARY -> (double) t.scale * (((t.b[k >>> 3] >>> (7 - (k & 7))) & 1) == 1 ? 1 : -1);
    };
  }

  /** The float64 score and an error bound for an fp32-accumulating kernel. */
  static double[] reference(Spec q, int i, Spec d, int j) {
    Tok[] qr = q.rows.get(i);
    Tok[] dr = d.rows.get(j);
    boolean any = false;
    double maxNorm = 0;
    for (Tok t : dr) {
      if (t.valid) {
        any = true;
        double sq = 0;
        for (int k = 0; k < d.dim; k++) {
          sq += value(d.type, t, k) * value(d.type, t, k);
        }
        maxNorm = Math.max(maxNorm, Math.sqrt(sq));
      }
    }
    if (!any) {
      return new double[] {-1e9, 0};
    }
    double sum = 0;
    double bound = 0;
    for (Tok s : qr) {
      if (!s.valid) {
        continue;
      }
      double best = Double.NEGATIVE_INFINITY;
      boolean nan = false;
      double sq = 0;
      for (int k = 0; k < q.dim; k++) {
        sq += value(q.type, s, k) * value(q.type, s, k);
      }
      for (Tok t : dr) {
        if (!t.valid) {
          continue;
        }
        double dot = 0;
        for (int k = 0; k < q.dim; k++) {
          dot += value(q.type, s, k) * value(d.type, t, k);
        }
        nan |= Double.isNaN(dot);
        best = Math.max(best, dot);
      }
      sum += nan ? Double.NaN : best;
      bound += Math.sqrt(sq) * maxNorm;
    }
    double eps = Math.ulp(1.0f);
    return new double[] {sum, 4 * eps * (q.dim + qr.length + 4) * bound + 1e-6};
  }

  // ------------------------------------------------------------------ generation

  static float drawFloat(SplittableRandom r, int mode) {
    return switch (mode) {
      case 0 -> (float) r.nextGaussian();
      case 1 -> r.nextInt(5) - 2; // exact products: ties
      default -> switch (r.nextInt(14)) {
        case 10 -> (float) (r.nextGaussian() * 1e37);
        case 11 -> r.nextBoolean() ? Float.MAX_VALUE : -Float.MAX_VALUE;
        case 0 -> -0.0f;
        case 1 -> Float.MIN_VALUE * (1 + r.nextInt(100));
        case 2 -> (float) (r.nextGaussian() * 1e15);
        case 3 -> (float) (r.nextGaussian() * 1e-20);
        default -> (float) r.nextGaussian();
      };
    };
  }

  static Tok drawTok(SplittableRandom r, DType type, int dim, int mode, boolean valid) {
    if (!type.isQuantized()) {
      float[] f = new float[dim];
      for (int k = 0; k < dim; k++) {
        float v = drawFloat(r, mode);
        f[k] = type == DType.FLOAT32 ? v : type.widen(type.narrow(v));
        if (!valid && r.nextInt(3) == 0) {
          f[k] = Float.NaN; // NaN in a masked token must not leak
        } else if (mode == 2 && r.nextInt(2000) == 0) {
          f[k] = r.nextBoolean() ? Float.NaN : r.nextBoolean() ? Float.POSITIVE_INFINITY : Float.NEGATIVE_INFINITY;
        }
      }
      return new Tok(f, null, 1f, valid);
    }
    byte[] b = new byte[(int) type.bytesPerToken(dim)];
    for (int k = 0; k < b.length; k++) {
      int v = mode == 1 ? r.nextInt(5) - 2 : r.nextInt(256);
      if (type == DType.FLOAT8_E4M3 && (v & 0x7f) == 0x7f) {
        v = valid && (mode != 2 || r.nextInt(200) != 0) ? v ^ 1 : v; // NaN bytes mostly where masked
      }
      b[k] = (byte) v;
    }
    float scale = switch (r.nextInt(mode == 2 ? 8 : 5)) {
      case 0 -> 1f;
      case 1 -> 0f;
      case 2 -> -0.5f;
      case 5 -> 1e-30f;
      case 6 -> 1e25f;
      case 7 -> Float.MIN_VALUE * 3;
      default -> (float) (0.01 + r.nextDouble());
    };
    return new Tok(null, b, scale, valid);
  }

  static Spec drawSpec(SplittableRandom r, DType type, int dim, int n, int maxLen, int mode, int masking) {
    List<Tok[]> rows = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int len = r.nextInt(4) == 0 ? maxLen : r.nextInt(maxLen + 1);
      Tok[] row = new Tok[len];
      boolean allMasked = masking > 0 && r.nextInt(8) == 0;
      for (int t = 0; t < len; t++) {
        boolean valid = !allMasked && (masking == 0 || r.nextInt(4) != 0);
        row[t] = t > 0 && row[t - 1].valid && r.nextInt(6) == 0 ? new Tok(row[t - 1].f, row[t - 1].b, row[t - 1].scale, valid)
            : drawTok(r, type, dim, mode, valid);
      }
      rows.add(row);
    }
    return new Spec(type, dim, rows);
  }

  // ------------------------------------------------------------------ layouts

  enum Layout { PADDED, PACKED, PADDED_SEGMENT, PACKED_SEGMENT }

  static TokenBatch build(Spec s, Layout layout, SplittableRandom r) {
    boolean packed = layout == Layout.PACKED || layout == Layout.PACKED_SEGMENT;
    boolean segment = layout == Layout.PADDED_SEGMENT || layout == Layout.PACKED_SEGMENT;
    int n = s.n();
    int l = s.maxLen();
    int[] offsets = new int[n + 1];
    for (int i = 0; i < n; i++) {
      offsets[i + 1] = offsets[i] + (packed ? s.rows.get(i).length : l);
    }
    int total = offsets[n];
    boolean[] mask = new boolean[total];
    boolean anyMasked = false;
    int dim = s.dim;
    DType type = s.type;
    long tokenBytes = type.isQuantized() ? type.bytesPerToken(dim) : (long) dim * type.byteSize();
    MemorySegment data = Arena.ofAuto().allocate(Math.max(1, total * tokenBytes), 8);
    float[] scales = type.isQuantized() ? new float[total] : null;
    for (int i = 0; i < n; i++) {
      Tok[] row = s.rows.get(i);
      int slots = packed ? row.length : l;
      for (int t = 0; t < slots; t++) {
        int at = offsets[i] + t;
        Tok tok = t < row.length ? row[t] : drawTok(r, type, dim, 2, false);
        mask[at] = t < row.length && tok.valid;
        anyMasked |= !mask[at];
        long base = at * tokenBytes;
        if (type.isQuantized()) {
          MemorySegment.copy(tok.b, 0, data, ValueLayout.JAVA_BYTE, base, tok.b.length);
          scales[at] = tok.scale;
        } else {
          for (int k = 0; k < dim; k++) {
            switch (type) {
              case FLOAT32 -> data.set(ValueLayout.JAVA_FLOAT_UNALIGNED, base + 4L * k, tok.f[k]);
              default -> data.set(ValueLayout.JAVA_SHORT_UNALIGNED, base + 2L * k, type.narrow(tok.f[k]));
            }
          }
        }
      }
    }
    TokenBatch b;
    if (segment) {
      MemorySegment seg = data.asSlice(0, total * tokenBytes);
      b = packed ? TokenBatch.packedFromMemorySegment(seg, type, scales, offsets, dim)
          : TokenBatch.fromMemorySegment(seg, type, scales, n, l, dim);
    } else if (type.isQuantized()) {
      byte[] bytes = data.asSlice(0, total * tokenBytes).toArray(ValueLayout.JAVA_BYTE);
      b = packed ? TokenBatch.packedBytes(type, bytes, scales, offsets, dim)
          : TokenBatch.ofBytes(type, bytes, scales, n, l, dim);
    } else if (type == DType.FLOAT32) {
      float[] f = data.asSlice(0, total * tokenBytes).toArray(ValueLayout.JAVA_FLOAT);
      b = packed ? TokenBatch.packedFloats(f, offsets, dim) : TokenBatch.ofFloats(f, n, l, dim);
    } else {
      short[] h = data.asSlice(0, total * tokenBytes).toArray(ValueLayout.JAVA_SHORT);
      b = packed ? TokenBatch.packedHalfs(type, h, offsets, dim) : TokenBatch.ofHalfs(type, h, n, l, dim);
    }
    // a mask that masks nothing is given half the time: it must change nothing
    return anyMasked || r.nextBoolean() ? b.withMask(mask) : b;
  }

  // ------------------------------------------------------------------ the fuzz

  /** Random cases a run, a few seconds of the build: a failure names its seed to replay it. */
  private static final int CASES = 20;

  @Test
  void everyEntryPointAgrees() {
    // fresh cases every run, as many on a slow machine as on a fast one; a failure names its seed
    long seed0 = new RandomBatches().seed;
    for (long seed = seed0; seed < seed0 + CASES; seed++) {
      try {
        oneCase(seed);
      } catch (AssertionError | RuntimeException e) {
        throw new AssertionError("seed " + seed + "L: " + e.getMessage(), e);
      }
    }
  }

  static void oneCase(long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    int dim = DIMS[r.nextInt(DIMS.length)];
    if (dim > 129 && r.nextInt(3) != 0) {
      dim = DIMS[r.nextInt(DIMS.length - 1)];
    }
    DType qt = TYPES[r.nextInt(TYPES.length)];
    DType dt = TYPES[r.nextInt(TYPES.length)];
    int mode = r.nextInt(3);
    int nq = 1 + r.nextInt(r.nextInt(4) == 0 ? 12 : 3);
    int nd = 1 + r.nextInt(r.nextInt(4) == 0 ? 300 : 8);
    int lq = LENGTHS[r.nextInt(LENGTHS.length - (r.nextInt(8) == 0 ? 0 : 2))];
    int ld = LENGTHS[r.nextInt(LENGTHS.length)];
    if ((long) nd * ld * dim > 400_000) {
      nd = Math.max(1, 400_000 / Math.max(1, ld * dim));
    }
    Spec q = drawSpec(r, qt, dim, nq, lq, mode, r.nextInt(2));
    Spec d = drawSpec(r, dt, dim, nd, ld, mode, r.nextInt(2));
    String where = qt + " " + nq + "x" + lq + " vs " + dt + " " + nd + "x" + ld + " d=" + dim + " mode " + mode;
    Layout ql = Layout.values()[r.nextInt(4)];
    Layout dl = Layout.values()[r.nextInt(4)];
    TokenBatch qb = build(q, ql, r);
    TokenBatch db = build(d, dl, r);
    float[][] s = two.scores(qb, db);
    where += " " + ql + "/" + dl;

    // against float64, where no fp32 product or partial sum can leave fp32's range
    for (int i = 0; i < nq; i++) {
      for (int j = 0; j < nd; j++) {
        double[] ref = reference(q, i, d, j);
        if (!(ref[1] < 1e30) && !Double.isNaN(ref[0])) {
          continue;
        }
        float got = s[i][j];
        String at = where + " pair " + i + "," + j + ": ref " + ref[0] + " got " + got;
        if (Double.isNaN(ref[0])) {
          assertTrue(Float.isNaN(got), at);
        } else {
          assertTrue(Math.abs(got - ref[0]) <= ref[1] + Math.ulp((float) ref[0]), at + " tol " + ref[1]);
        }
      }
    }

    // threads, other layouts, async, resident: the same kernel on the same values, bit for bit
    assertScoresEqual(s, one.scores(qb, db), where + " threads 1");
    assertScoresEqual(s, two.scores(build(q, Layout.values()[r.nextInt(4)], r),
        build(d, Layout.values()[r.nextInt(4)], r)), where + " other layouts");
    assertScoresEqual(s, two.scoresAsync(qb, db).join(), where + " async");
    try (ResidentBatch rd = two.upload(db)) {
      assertScoresEqual(s, two.scores(qb, rd), where + " resident");
      int k = 1 + r.nextInt(nd + 3);
      assertTopK(s, two.topK(qb, rd, k), k, where + " resident topK " + k);
    }
    for (int k : new int[] {1, nd, nd + 2, 1 + r.nextInt(nd)}) {
      assertTopK(s, two.topK(qb, db, k), k, where + " topK " + k);
    }
    if (!qt.isQuantized() && qt != DType.FLOAT32) {
      assertScoresEqual(s, two.scores(build(q.as(DType.FLOAT32), ql, r), db), where + " fp32 queries");
    }
    if (!dt.isQuantized() && dt != DType.FLOAT32) {
      assertScoresEqual(s, two.scores(qb, build(d.as(DType.FLOAT32), dl, r)), where + " fp32 documents");
    }
    boolean tables = dt == DType.BINARY && !qt.isQuantized(); // chosen per query batch: an ulp apart across calls
    // pairwise and candidates over pairs drawn from the grid
    int b = 1 + r.nextInt(6);
    int kc = 1 + r.nextInt(3);
    int[] qi = new int[b];
    int[] dj = new int[b * kc];
    for (int p = 0; p < b; p++) {
      qi[p] = r.nextInt(nq);
      for (int c = 0; c < kc; c++) {
        dj[p * kc + c] = r.nextInt(nd);
      }
    }
    TokenBatch pq = build(q.select(qi), Layout.values()[r.nextInt(4)], r);
    int[] firstDocs = new int[b];
    for (int p = 0; p < b; p++) {
      firstDocs[p] = dj[p * kc];
    }
    float[] pw = two.pairwise(pq, build(d.select(firstDocs), Layout.values()[r.nextInt(4)], r));
    float[][] cand = two.candidates(pq, build(d.select(dj), Layout.values()[r.nextInt(4)], r), kc);
    for (int p = 0; p < b; p++) {
      assertClose(s[qi[p]][firstDocs[p]], pw[p], q, qi[p], d, firstDocs[p], tables, where + " pairwise " + p);
      for (int c = 0; c < kc; c++) {
        assertClose(s[qi[p]][dj[p * kc + c]], cand[p][c], q, qi[p], d, dj[p * kc + c], tables,
            where + " candidate " + p + "," + c);
      }
    }
    // training forward: the same scores, and each argmax a valid winning slot, the lowest among exact ties
    if (!qt.isQuantized() && !dt.isQuantized()) {
      TrainingScores ts = two.scoresForTraining(qb, db);
      float[] flat = ts.scores();
      for (int i = 0; i < nq; i++) {
        for (int j = 0; j < nd; j++) {
          assertEquals(Float.floatToIntBits(s[i][j]), Float.floatToIntBits(flat[i * nd + j]),
              where + " training score " + i + "," + j);
          if (mode != 0) {
            checkArgmax(ts, i * nd + j, q, i, d, j, mode == 2, where + " argmax " + i + "," + j);
          }
        }
      }
      if (mode != 2) {
        float[] ds = new float[nq * nd];
        for (int p = 0; p < ds.length; p++) {
          ds[p] = r.nextInt(5) == 0 ? 0f : (float) r.nextGaussian();
        }
        checkGradients(ts, ts.backward(ds), ds, q, d, where + " gradients");
        // candidates: the same scores as all pairs, the same argmax rule and gradients over their own pairs
        Spec cq = q.select(qi);
        Spec cd = d.select(dj);
        TrainingScores ct = two.candidatesForTraining(pq, build(cd, Layout.values()[r.nextInt(4)], r), kc);
        float[] cs = ct.scores();
        float[] dc = new float[cs.length];
        for (int p = 0; p < cs.length; p++) {
          assertClose(s[qi[p / kc]][dj[p]], cs[p], q, qi[p / kc], d, dj[p], tables, where + " candidate training " + p);
          dc[p] = (float) r.nextGaussian();
          if (mode != 0) {
            checkArgmax(ct, p, cq, p / kc, cd, p, mode == 2, where + " candidate argmax " + p);
          }
        }
        int kk = kc;
        checkGradients(ct, ct.backward(dc), dc, cq, cd, kc, (i, j) -> j / kk == i ? j : -1,
            where + " candidate gradients");
      }
    }
  }

  /** dQ and dD from their definition (each query token's gradient flows to its argmax) in float64. */
  static void checkGradients(TrainingScores ts, Gradients g, float[] ds, Spec q, Spec d, String where) {
    checkGradients(ts, g, ds, q, d, d.n(), (i, j) -> i * d.n() + j, where);
  }

  interface PairIndex {
    /** The pair of query i and document j, or -1 where they do not meet. */
    int of(int i, int j);
  }

  static void checkGradients(TrainingScores ts, Gradients g, float[] ds, Spec q, Spec d, int perQuery,
      PairIndex pairs, String where) {
    int nq = q.n();
    int nd = d.n();
    int dim = q.dim;
    double[][][] dq = new double[nq][][];
    double[][][] dqAbs = new double[nq][][];
    double[][][] dd = new double[nd][][];
    double[][][] ddAbs = new double[nd][][];
    for (int i = 0; i < nq; i++) {
      dq[i] = new double[q.rows.get(i).length][dim];
      dqAbs[i] = new double[q.rows.get(i).length][dim];
    }
    for (int j = 0; j < nd; j++) {
      dd[j] = new double[d.rows.get(j).length][dim];
      ddAbs[j] = new double[d.rows.get(j).length][dim];
    }
    for (int i = 0; i < nq; i++) {
      for (int j = 0; j < nd; j++) {
        int p = pairs.of(i, j);
        if (p < 0) {
          continue;
        }
        for (int s = 0; s < q.rows.get(i).length; s++) {
          int a = ts.argmax(p, s);
          if (a < 0) {
            continue;
          }
          for (int k = 0; k < dim; k++) {
            double x = (double) ds[p] * value(d.type, d.rows.get(j)[a], k);
            dq[i][s][k] += x;
            dqAbs[i][s][k] += Math.abs(x);
            double y = (double) ds[p] * value(q.type, q.rows.get(i)[s], k);
            dd[j][a][k] += y;
            ddAbs[j][a][k] += Math.abs(y);
          }
        }
      }
    }
    double eps = Math.ulp(1.0f);
    for (int i = 0; i < nq; i++) {
      for (int s = 0; s < dq[i].length; s++) {
        for (int k = 0; k < dim; k++) {
          float got = g.queries().get(i, s, k);
          assertTrue(Math.abs(got - dq[i][s][k]) <= 2 * eps * (perQuery + 1) * dqAbs[i][s][k] + 1e-30,
              where + " dQ[" + i + "][" + s + "][" + k + "] " + got + " vs " + dq[i][s][k]);
        }
      }
    }
    for (int j = 0; j < nd; j++) {
      for (int t = 0; t < dd[j].length; t++) {
        for (int k = 0; k < dim; k++) {
          float got = g.documents().get(j, t, k);
          assertTrue(Math.abs(got - dd[j][t][k]) <= 2 * eps * (nq * 300 + 1) * ddAbs[j][t][k] + 1e-30,
              where + " dD[" + j + "][" + t + "][" + k + "] " + got + " vs " + dd[j][t][k]);
        }
      }
    }
  }

  /**
   * Each valid query token's argmax is the float64 winner: the first NaN, else the lowest slot among the largest
   * (exact for small integers; with {@code nanOnly}, values whose fp32 dot products may tie or reorder, only the
   * NaN rule is checked).
   */
  static void checkArgmax(TrainingScores ts, int p, Spec q, int i, Spec d, int j, boolean nanOnly, String where) {
    Tok[] qr = q.rows.get(i);
    Tok[] dr = d.rows.get(j);
    boolean anyDoc = false;
    for (Tok t : dr) {
      anyDoc |= t.valid;
    }
    for (int s = 0; s < qr.length; s++) {
      int a = ts.argmax(p, s);
      if (!qr[s].valid || !anyDoc) {
        assertTrue(a < 0, where + " slot " + s + ": masked or empty gives " + a);
        continue;
      }
      int best = -1;
      double bestDot = 0;
      boolean outOfRange = false;
      for (int t = 0; t < dr.length; t++) {
        if (!dr[t].valid) {
          continue;
        }
        double dot = 0;
        double magnitude = 0;
        for (int k = 0; k < q.dim; k++) {
          dot += value(q.type, qr[s], k) * value(d.type, dr[t], k);
          magnitude += Math.abs(value(q.type, qr[s], k) * value(d.type, dr[t], k));
        }
        outOfRange |= magnitude > 1e30; // fp32 sums may overflow where float64 does not
        if (best < 0 || dot > bestDot || Double.isNaN(dot) && !Double.isNaN(bestDot)) {
          best = t;
          bestDot = dot;
        }
      }
      if (best != a && !outOfRange && (!nanOnly || Double.isNaN(bestDot))) {
        StringBuilder sb = new StringBuilder();
        for (int t = 0; t < dr.length; t++) {
          double dot = 0;
          for (int k = 0; k < q.dim; k++) {
            dot += value(q.type, qr[s], k) * value(d.type, dr[t], k);
          }
          sb.append(" t").append(t).append(dr[t].valid ? "=" : "(masked)=").append(dot);
        }
        fail(where + " slot " + s + ": expected " + best + " got " + a + ";" + sb);
      }
    }
  }

  static void assertClose(float expected, float got, Spec q, int i, Spec d, int j, boolean tables, String where) {
    if (!tables || Float.isNaN(expected) || expected == -1e9f) {
      assertEquals(Float.floatToIntBits(expected), Float.floatToIntBits(got), where + ": " + expected + " vs " + got);
      return;
    }
    double tol = reference(q, i, d, j)[1];
    assertTrue(Math.abs(expected - got) <= 2 * tol || expected == got, where + ": " + expected + " vs " + got);
  }

  static void assertScoresEqual(float[][] expected, float[][] got, String where) {
    assertEquals(expected.length, got.length, where);
    for (int i = 0; i < expected.length; i++) {
      for (int j = 0; j < expected[i].length; j++) {
        if (Float.floatToIntBits(expected[i][j]) != Float.floatToIntBits(got[i][j])) {
          fail(where + " pair " + i + "," + j + ": " + expected[i][j] + " vs " + got[i][j]);
        }
      }
    }
  }

  /** Top-k: min(k, N) entries, each the scores' value, ordered by Float.compare descending then index. */
  static void assertTopK(float[][] s, TopK top, int k, String where) {
    for (int i = 0; i < s.length; i++) {
      int n = s[i].length;
      Integer[] order = new Integer[n];
      for (int j = 0; j < n; j++) {
        order[j] = j;
      }
      float[] row = s[i];
      Arrays.sort(order, (a, b) -> {
        int c = Float.compare(row[b], row[a]);
        return c != 0 ? c : Integer.compare(a, b);
      });
      int keep = Math.min(k, n);
      assertEquals(keep, top.indices()[i].length, where + " query " + i + " entries");
      for (int rank = 0; rank < keep; rank++) {
        assertEquals(order[rank], top.indices()[i][rank], where + " query " + i + " rank " + rank);
        assertEquals(Float.floatToIntBits(row[order[rank]]), Float.floatToIntBits(top.scores()[i][rank]),
            where + " query " + i + " rank " + rank + " score");
      }
    }
  }
}
