package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Every pair of query and document types (fp32, fp16, bf16, int8, e4m3, one bit on both sides; quantized batches
 * given as bytes with scales or made by {@link TokenBatch#quantize}) on the scalar and vector backends against the
 * float64 reference, with hostile values: per-token magnitudes from subnormal to fp32's largest, scales of 0, -0,
 * negative, subnormal, tiny and huge, NaN and infinities in valid and masked tokens, integer values that tie,
 * d in {1, 3, 8, 9, 33, 127, 513}, L = 1, ragged packed rows, masks, lengths, all-masked rows, heap arrays and
 * MemorySegments. Unlike {@link EntryPointFuzzTest} (the vector backend, pairs whose products stay far inside fp32)
 * every pair is checked, scalar included: NaN where the reference is NaN, and elsewhere within fp32's rounding of
 * the exact products (4 eps (d + Lq + 4) times the summed magnitudes of each query token's largest products, plus
 * d + 1 subnormal steps per token: the bound of an fp32 dot product, the scale product and the sum) of the
 * reference, or where it is infinite, of some value past fp32's largest on its side. And per backend, bit for bit: top-k,
 * candidates, resident documents, async calls and the training forward against all pairs, and a pair scored alone
 * against the same pair in its call (but for float queries against 1-bit documents, whose tables are chosen per
 * call; MaxSim's class comment). Fresh seeds every run; a failure names its seed ({@code -Dfuzz.seed},
 * {@code -Dfuzz.cases} replay or widen it).
 */
class HostileParityFuzzTest {
  static final int[] DIMS = {1, 3, 8, 9, 33, 127, 513};
  static final DType[] TYPES = DType.values();

  static float[] SCALES = {1f, 0f, -0f, -0.5f, 1e-30f, -1e-30f, 1e25f, -1e25f, Float.MIN_VALUE * 3, 1e-38f, 3e38f,
      -Float.MAX_VALUE, 0.01f, 7e35f, 1e-20f, 1e20f};

  /** {@link EntryPointFuzzTest#drawFloat}'s values, and in the hostile modes magnitudes near 1e-39, 1e30 and 1e-30. */
  static float drawFloat(SplittableRandom r, int mode) {
    if (mode >= 2 && r.nextInt(16) < 3) {
      double[] magnitudes = {1e-39, 1e30, 1e-30};
      return (float) (r.nextGaussian() * magnitudes[r.nextInt(magnitudes.length)]);
    }
    return EntryPointFuzzTest.drawFloat(r, mode);
  }

  /** {@code f} in native memory of exactly its size (an empty array: a 0-byte slice of a 4-byte allocation). */
  private static MemorySegment offHeap(float[] f) {
    MemorySegment seg = Arena.ofAuto().allocate(Math.max(4, 4L * f.length));
    MemorySegment.copy(f, 0, seg, ValueLayout.JAVA_FLOAT, 0, f.length);
    return seg.asSlice(0, 4L * f.length);
  }

  private static MemorySegment offHeap(short[] h) {
    MemorySegment seg = Arena.ofAuto().allocate(Math.max(2, 2L * h.length));
    MemorySegment.copy(h, 0, seg, ValueLayout.JAVA_SHORT, 0, h.length);
    return seg.asSlice(0, 2L * h.length);
  }

  static TokenBatch draw(SplittableRandom r, DType type, int n, int l, int dim, int mode, boolean packed,
      boolean segment, int masking, boolean tokenScale) {
    int[] offsets = new int[n + 1];
    for (int i = 0; i < n; i++) {
      offsets[i + 1] = offsets[i] + (packed ? r.nextInt(l + 1) : l);
    }
    int total = offsets[n];
    // per-token magnitude multiplier for float types
    TokenBatch b;
    if (type.isQuantized()) {
      byte[] bytes = new byte[(int) (total * type.bytesPerToken(dim))];
      for (int k = 0; k < bytes.length; k++) {
        int v = mode == 1 ? r.nextInt(5) - 2 : r.nextInt(256);
        if (type == DType.FLOAT8_E4M3 && (v & 0x7f) == 0x7f && r.nextInt(300) != 0) {
          v ^= 1;
        }
        bytes[k] = (byte) v;
      }
      float[] scales = new float[total];
      for (int t = 0; t < total; t++) {
        scales[t] = mode == 2 ? SCALES[r.nextInt(SCALES.length)] : (float) (0.01 + r.nextDouble());
      }
      if (segment) {
        MemorySegment seg = Arena.ofAuto().allocate(Math.max(1, bytes.length));
        MemorySegment.copy(bytes, 0, seg, ValueLayout.JAVA_BYTE, 0, bytes.length);
        seg = seg.asSlice(0, bytes.length);
        b = packed ? TokenBatch.packedFromMemorySegment(seg, type, scales, offsets, dim)
            : TokenBatch.fromMemorySegment(seg, type, scales, n, l, dim);
      } else {
        b = packed ? TokenBatch.packedBytes(type, bytes, scales, offsets, dim)
            : TokenBatch.ofBytes(type, bytes, scales, n, l, dim);
      }
    } else {
      float[] f = new float[total * dim];
      for (int t = 0; t < total; t++) {
        float mul = tokenScale ? SCALES[r.nextInt(SCALES.length)] : 1f;
        for (int k = 0; k < dim; k++) {
          float v = drawFloat(r, mode);
          if (tokenScale && Math.abs(v) < 1e3 && Math.abs(v) > 1e-3) {
            v = v * mul;
          }
          if (mode == 2 && r.nextInt(3000) == 0) {
            v = r.nextBoolean() ? Float.NaN : r.nextBoolean() ? Float.POSITIVE_INFINITY : Float.NEGATIVE_INFINITY;
          }
          f[t * dim + k] = type == DType.FLOAT32 ? v : type.widen(type.narrow(v));
        }
      }
      short[] h = null;
      if (type != DType.FLOAT32) {
        h = new short[f.length];
        for (int k = 0; k < f.length; k++) {
          h[k] = type.narrow(f[k]);
        }
      }
      if (segment) {
        MemorySegment seg = h == null ? offHeap(f) : offHeap(h);
        b = packed ? TokenBatch.packedFromMemorySegment(seg, type, offsets, dim)
            : TokenBatch.fromMemorySegment(seg, type, n, l, dim);
      } else if (h == null) {
        b = packed ? TokenBatch.packedFloats(f, offsets, dim) : TokenBatch.ofFloats(f, n, l, dim);
      } else {
        b = packed ? TokenBatch.packedHalfs(type, h, offsets, dim) : TokenBatch.ofHalfs(type, h, n, l, dim);
      }
    }
    if (masking == 1) {
      boolean[] m = new boolean[total];
      boolean allOff = r.nextInt(5) == 0;
      for (int i = 0; i < total; i++) {
        m[i] = !allOff && r.nextInt(4) != 0;
      }
      b = b.withMask(m);
    } else if (masking == 2 && !packed) {
      int[] len = new int[n];
      for (int i = 0; i < n; i++) {
        len[i] = r.nextInt(l + 1);
      }
      b = b.withLengths(len);
    }
    return b;
  }

  /** Row i of b alone, as a packed one-row batch of the same type, values, scales and validity. */
  static TokenBatch row(TokenBatch b, int i) {
    int len = b.length(i);
    int dim = b.dim();
    DType type = b.dtype();
    int start = b.tokens().rowStart[i];
    int[] offsets = {0, len};
    boolean[] mask = new boolean[len];
    for (int t = 0; t < len; t++) {
      mask[t] = b.isValid(i, t);
    }
    TokenBatch out;
    if (type.isQuantized()) {
      int tb = (int) type.bytesPerToken(dim);
      byte[] all = b.toByteArray();
      byte[] bytes = java.util.Arrays.copyOfRange(all, start * tb, (start + len) * tb);
      float[] scales = java.util.Arrays.copyOfRange(b.scales(), start, start + len);
      out = TokenBatch.packedBytes(type, bytes, scales, offsets, dim);
    } else {
      float[] f = java.util.Arrays.copyOfRange(b.toFloatArray(), start * dim, (start + len) * dim);
      if (type == DType.FLOAT32) {
        out = TokenBatch.packedFloats(f, offsets, dim);
      } else {
        out = TokenBatch.packedHalfs(type, type.narrow(f), offsets, dim);
      }
    }
    return out.withMask(mask);
  }

  static double exact(TokenBatch b, int row, int t, int k) {
    return b.tokens().value(b.tokens().rowStart[row] + t, k);
  }

  static double tolerance(TokenBatch q, int i, TokenBatch d, int j) {
    double magnitude = 0;
    int lq = 0;
    for (int s = 0; s < q.length(i); s++) {
      if (!q.isValid(i, s)) continue;
      lq++;
      double largest = 0;
      for (int t = 0; t < d.length(j); t++) {
        if (!d.isValid(j, t)) continue;
        double sum = 0;
        for (int k = 0; k < q.dim(); k++) {
          sum += Math.abs(exact(q, i, s, k) * exact(d, j, t, k));
        }
        largest = Math.max(largest, sum);
      }
      magnitude += largest;
    }
    // products and sums in fp32's subnormal range round to its smallest step: up to d of them per query token
    return 4 * Math.ulp(1.0f) * (q.dim() + lq + 4) * magnitude + (lq + 1.0) * (q.dim() + 1) * Float.MIN_VALUE;
  }

  static void check(float want, float got, double tol, String where) {
    if (Float.isNaN(want)) {
      assertTrue(Float.isNaN(got), where + ": want NaN got " + got);
    } else if (Float.isInfinite(want)) {
      // the exact score lies past fp32's largest value: got must lie within tol of some value out there (where tol
      // passes fp32's largest, fp32 accumulation may cancel to any value on that side of the opposite extreme)
      boolean within = want < 0 ? got <= -Float.MAX_VALUE + tol : got >= Float.MAX_VALUE - tol;
      assertTrue(want == got || within, where + ": want " + want + " got " + got + " tol " + tol);
    } else {
      assertTrue(Math.abs((double) got - want) <= tol + Math.ulp(want), where + ": want " + want + " got " + got
          + " tol " + tol);
    }
  }

  /** A case of seed {@code where}: its queries and documents, and its random source for what the test draws next. */
  record Case(TokenBatch queries, TokenBatch documents, String where, SplittableRandom random) {}

  /**
   * The case of {@code seed}: types, d, shapes, layouts and values drawn as the class comment says; null where
   * quantizing a drawn float batch is refused (a value past what the type holds).
   */
  static Case drawCase(long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    int dim = DIMS[r.nextInt(DIMS.length)];
    DType qt = TYPES[r.nextInt(TYPES.length)];
    DType dt = TYPES[r.nextInt(TYPES.length)];
    int mode = r.nextInt(4) == 0 ? r.nextInt(2) : 2;
    int nq = 1 + r.nextInt(4);
    int nd = 1 + r.nextInt(r.nextInt(8) == 0 ? 300 : 6);
    int lq = 1 + r.nextInt(r.nextBoolean() ? 3 : r.nextBoolean() ? 20 : 70);
    int ld = 1 + r.nextInt(r.nextBoolean() ? 3 : r.nextBoolean() ? 40 : 300);
    if ((long) nd * ld * dim > 300_000) {
      nd = Math.max(1, 300_000 / (ld * dim));
    }
    boolean qQuantize = qt.isQuantized() && r.nextInt(3) == 0;
    boolean dQuantize = dt.isQuantized() && r.nextInt(3) == 0;
    TokenBatch q = draw(r, qQuantize ? DType.FLOAT32 : qt, nq, lq, dim, mode, r.nextBoolean(), r.nextBoolean(),
        r.nextInt(3), r.nextBoolean());
    TokenBatch d = draw(r, dQuantize ? DType.FLOAT32 : dt, nd, ld, dim, mode, r.nextBoolean(), r.nextBoolean(),
        r.nextInt(3), r.nextBoolean());
    try {
      if (qQuantize) q = q.quantize(qt);
      if (dQuantize) d = d.quantize(dt);
    } catch (IllegalArgumentException e) {
      return null;
    }
    return new Case(q, d, "seed " + seed + "L " + q.dtype() + (qQuantize ? "(q)" : "") + " " + q + " x " + d.dtype()
        + (dQuantize ? "(q)" : "") + " " + d + " mode " + mode, r);
  }

  @Test
  void everyTypePairScoresAsTheReferenceOnEveryEntryPoint() throws Exception {
    long seed0 = Long.getLong("fuzz.seed", new RandomBatches().seed);
    int cases = Integer.getInteger("fuzz.cases", 400);
    List<String> failures = new ArrayList<>();
    try (MaxSim ref = MaxSim.builder().backend("reference").threads(2).build();
        MaxSim vec = MaxSim.builder().backend("vector").threads(2).build();
        MaxSim sca = MaxSim.builder().backend("scalar").threads(2).build()) {
      for (long seed = seed0; seed < seed0 + cases && failures.size() < 30; seed++) {
        Case drawn = drawCase(seed);
        if (drawn == null) {
          continue;
        }
        SplittableRandom r = drawn.random();
        TokenBatch q = drawn.queries();
        TokenBatch d = drawn.documents();
        int nq = q.size();
        int nd = d.size();
        String where = drawn.where();
        try {
          float[][] want = ref.scores(q, d);
          for (MaxSim m : new MaxSim[] {vec, sca}) {
            float[][] got = m.scores(q, d);
            for (int i = 0; i < nq; i++) {
              for (int j = 0; j < nd; j++) {
                check(want[i][j], got[i][j], tolerance(q, i, d, j), where + " " + m.backendName() + " [" + i + "]["
                    + j + "]");
              }
            }
            // entry points, bit for bit
            TopK top = m.topK(q, d, nd);
            for (int i = 0; i < nq; i++) {
              for (int rnk = 0; rnk < nd; rnk++) {
                int j = top.indices()[i][rnk];
                assertTrue(Float.compare(top.scores()[i][rnk], got[i][j]) == 0, where + " " + m.backendName()
                    + " topK " + i + " doc " + j + ": " + top.scores()[i][rnk] + " vs " + got[i][j]);
                if (rnk > 0) { // higher first, NaN highest; ties by the lower document
                  int c = Float.compare(top.scores()[i][rnk - 1], top.scores()[i][rnk]);
                  assertTrue(c > 0 || c == 0 && top.indices()[i][rnk - 1] < j, where + " topK order, query " + i
                      + " rank " + rnk);
                }
              }
            }
            try (ResidentBatch rb = m.upload(d)) {
              float[][] res = m.scores(q, rb);
              for (int i = 0; i < nq; i++) {
                for (int j = 0; j < nd; j++) {
                  assertTrue(Float.compare(res[i][j], got[i][j]) == 0, where + " resident");
                }
              }
            }
            if (nd % nq == 0) {
              int kk = nd / nq;
              float[][] cand = m.candidates(q, d, kk);
              for (int i = 0; i < nq; i++) {
                for (int c = 0; c < kk; c++) {
                  assertTrue(Float.compare(cand[i][c], got[i][i * kk + c]) == 0, where + " " + m.backendName()
                      + " candidates " + cand[i][c] + " vs " + got[i][i * kk + c]);
                }
              }
            }
            if (!(d.dtype() == DType.BINARY && !q.dtype().isQuantized())) {
              int i = r.nextInt(nq);
              int j = r.nextInt(nd);
              float alone = m.scores(row(q, i), row(d, j))[0][0];
              assertTrue(Float.compare(alone, got[i][j]) == 0, where + " " + m.backendName() + " alone [" + i + "]["
                  + j + "] " + alone + " vs " + got[i][j]);
            }
            float[][] async = m.scoresAsync(q, d).get();
            for (int i = 0; i < nq; i++) {
              for (int j = 0; j < nd; j++) {
                assertTrue(Float.compare(async[i][j], got[i][j]) == 0, where + " async");
              }
            }
            if (!q.dtype().isQuantized() && !d.dtype().isQuantized()) {
              TrainingScores ts = m.scoresForTraining(q, d);
              float[][] tr = ts.scoreMatrix();
              for (int i = 0; i < nq; i++) {
                for (int j = 0; j < nd; j++) {
                  assertTrue(Float.compare(tr[i][j], got[i][j]) == 0, where + " training " + tr[i][j] + " vs "
                      + got[i][j]);
                }
              }
            }
          }
        } catch (AssertionError | RuntimeException e) {
          failures.add(e.toString());
        }
      }
    }
    for (String f : failures) System.out.println("FAIL " + f);
    assertTrue(failures.isEmpty(), failures.size() + " failures; first: "
        + (failures.isEmpty() ? "" : failures.get(0)));
  }
}
