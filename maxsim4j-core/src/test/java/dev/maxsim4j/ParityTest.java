package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every operation of every fast CPU backend against the float64 reference backend, over the shape matrix:
 * d in {1, 3, 33, 96, 127, 128, 513}, Lq and Ld = 1, query lengths on both sides of the lane count, random
 * masks and lengths, all-masked documents and queries, ragged packed rows, fp16 and bf16, one long document.
 * Tolerance: fp32 accumulation error bound {@link Oracle#tolerance} (half inputs are widened exactly, so
 * the same bound holds for every dtype).
 */
class ParityTest {
  private static final String[] FAST = {"scalar", "vector"};
  private static final int K = 3;
  private static MaxSim reference;
  private static final List<MaxSim> fast = new ArrayList<>();

  @BeforeAll
  static void open() {
    reference = MaxSim.builder().backend("reference").threads(2).build();
    for (String name : FAST) {
      fast.add(MaxSim.builder().backend(name).threads(2).build());
    }
  }

  @AfterAll
  static void close() {
    reference.close();
    fast.forEach(MaxSim::close);
  }

  /** (label, queries [Nq], documents [Nq*K], pairwise documents [Nq]) */
  static Stream<Arguments> cases() {
    RandomBatches r = new RandomBatches();
    List<Arguments> cases = new ArrayList<>();
    for (int d : new int[] {1, 3, 33, 96, 127, 128, 513}) {
      for (DType type : new DType[] {DType.FLOAT32, DType.FLOAT16, DType.BFLOAT16}) {
        int nq = 3;
        cases.add(args(r, "plain " + type + " d=" + d, r.padded(type, nq, 7, d, 0),
            r.padded(type, nq * K, 11, d, 0), r.padded(type, nq, 5, d, 0)));
      }
      cases.add(args(r, "Lq=1 Ld=1 d=" + d, r.padded(DType.FLOAT32, 2, 1, d, 0),
          r.padded(DType.FLOAT32, 2 * K, 1, d, 0), r.padded(DType.FLOAT32, 2, 1, d, 0)));
      cases.add(args(r, "mask d=" + d, r.padded(DType.FLOAT32, 4, 17, d, 1),
          r.padded(DType.FLOAT32, 4 * K, 9, d, 1), r.padded(DType.BFLOAT16, 4, 9, d, 1)));
      cases.add(args(r, "lengths d=" + d, r.padded(DType.FLOAT16, 3, 33, d, 2),
          r.padded(DType.FLOAT32, 3 * K, 13, d, 2), r.padded(DType.FLOAT32, 3, 13, d, 2)));
      cases.add(args(r, "packed ragged d=" + d, r.packed(DType.FLOAT32, 3, 0, 40, d, true),
          r.packed(DType.BFLOAT16, 3 * K, 0, 25, d, true), r.packed(DType.FLOAT32, 3, 1, 25, d, false)));
    }
    for (int lq : new int[] {15, 16, 17, 32, 40, 64, 65}) {
      cases.add(args(r, "Lq=" + lq, r.padded(DType.FLOAT32, 2, lq, 24, 0),
          r.padded(DType.FLOAT32, 2 * K, 6, 24, 0), r.padded(DType.FLOAT32, 2, 9, 24, 0)));
    }
    cases.add(args(r, "all masked rows", ParityTestRows.allMaskedRow(r.padded(DType.FLOAT32, 3, 6, 8, 1)),
        ParityTestRows.allMaskedRow(r.padded(DType.FLOAT32, 3 * K, 6, 8, 1)), ParityTestRows.allMaskedRow(r.padded(DType.FLOAT32, 3, 6, 8, 0))));
    cases.add(args(r, "long document Ld=8192", r.padded(DType.FLOAT32, 1, 40, 8, 0),
        r.padded(DType.BFLOAT16, K, 8192, 8, 1), r.padded(DType.FLOAT32, 1, 8192, 8, 0)));
    cases.add(args(r, "empty batch", r.padded(DType.FLOAT32, 0, 4, 8, 0),
        r.padded(DType.FLOAT32, 0, 4, 8, 0), r.padded(DType.FLOAT32, 0, 4, 8, 0)));
    return cases.stream();
  }

  private static Arguments args(RandomBatches r, String label, TokenBatch q, TokenBatch d, TokenBatch pd) {
    return Arguments.of(label + " (" + r + ")", q, d, pd);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void allOperationsMatchReference(String label, TokenBatch q, TokenBatch d, TokenBatch pd) {
    float[][] ref = reference.scores(q, d);
    float[] refPairwise = reference.pairwise(q, pd);
    for (MaxSim m : fast) {
      String where = m.backendName() + " / " + label;
      float[][] all = m.scores(q, d);
      assertClose(ref, all, q, d, where + " all-pairs");
      float[][] cand = m.candidates(q, d, K);
      for (int b = 0; b < q.size(); b++) {
        for (int c = 0; c < K; c++) {
          assertEquals(all[b][b * K + c], cand[b][c], 0f, where + " candidates equal all-pairs");
        }
      }
      float[] pw = m.pairwise(q, pd);
      for (int b = 0; b < q.size(); b++) {
        assertScore(refPairwise[b], pw[b], Oracle.tolerance(q, b, pd, b), where + " pairwise b=" + b);
      }
      TrainingScores ts = m.scoresForTraining(q, d);
      assertArrayEquals(flatten(all), ts.scores(), where + " training forward = inference forward");
      assertArgmaxIsBest(ts, q, d, where);
      assertTopKIsSortedScores(m.topK(q, d, 4), all, 4, where);
      assertTopKIsSortedScores(m.topK(q, d, d.size() + 5), all, d.size() + 5, where);
    }
  }

  static void assertClose(float[][] ref, float[][] got, TokenBatch q, TokenBatch d, String where) {
    assertEquals(ref.length, got.length, where);
    Oracle.Tolerances tolerances = Oracle.tolerances(q, d);
    for (int i = 0; i < ref.length; i++) {
      for (int j = 0; j < ref[i].length; j++) {
        assertScore(ref[i][j], got[i][j], tolerances.of(i, j), where, i, j);
      }
    }
  }

  /** As {@link #assertClose} for candidates: query {@code i}'s {@code j}-th score is of document {@code i*k+j}. */
  static void assertCandidatesClose(float[][] ref, float[][] got, TokenBatch q, TokenBatch d, int k, String where) {
    assertEquals(ref.length, got.length, where);
    Oracle.Tolerances tolerances = Oracle.tolerances(q, d);
    for (int i = 0; i < ref.length; i++) {
      for (int j = 0; j < ref[i].length; j++) {
        assertScore(ref[i][j], got[i][j], tolerances.of(i, i * k + j), where, i, j);
      }
    }
  }

  /** {@link #assertScore} of element [i][j], its message built only where it fails. */
  private static void assertScore(float ref, float got, double tol, String where, int i, int j) {
    boolean bothNan = Float.isNaN(ref) && Float.isNaN(got);
    boolean neitherNan = !Float.isNaN(ref) && !Float.isNaN(got);
    boolean empty = ref == -1e9f || got == -1e9f;
    if (!bothNan && !(neitherNan && (empty ? ref == got : ref == got || Math.abs(ref - got) <= tol))) {
      assertScore(ref, got, tol, where + " [" + i + "][" + j + "]");
    }
  }

  static void assertScore(float ref, float got, double tol, String where) {
    if (Float.isNaN(ref) || Float.isNaN(got)) {
      assertTrue(Float.isNaN(ref) && Float.isNaN(got), where + ": expected " + ref + ", got " + got + " (bits 0x"
          + Integer.toHexString(Float.floatToRawIntBits(got)) + ")");
    } else if (ref == -1e9f || got == -1e9f) {
      assertEquals(ref, got, 0f, where + " (empty document scores -1e9 exactly)");
    } else if (ref != got && !(Math.abs(ref - got) <= tol)) { // a NaN bound passes nothing
      fail(where + ": expected " + ref + ", got " + got + ", |diff| " + Math.abs(ref - got) + " > tol " + tol);
    }
  }

  /** The recorded document slot is valid and its dot product is the max within rounding. */
  static void assertArgmaxIsBest(TrainingScores ts, TokenBatch q, TokenBatch d, String where) {
    for (int i = 0; i < q.size(); i++) {
      for (int j = 0; j < d.size(); j++) {
        int p = i * d.size() + j;
        for (int s = q.length(i); s < q.maxLength(); s++) {
          assertEquals(-1, ts.argmax(p, s), where + " no argmax past the query's length");
        }
        for (int s = 0; s < q.length(i); s++) {
          int a = ts.argmax(p, s);
          if (!q.isValid(i, s) || d.validTokens(j) == 0) {
            assertEquals(-1, a, where + " no argmax for masked query slot or empty document");
            continue;
          }
          assertTrue(d.isValid(j, a), where + " argmax " + a + " is a valid slot");
          double best = Double.NEGATIVE_INFINITY;
          for (int t = 0; t < d.length(j); t++) {
            if (d.isValid(j, t)) {
              best = Math.max(best, Oracle.dot(q, i, s, d, j, t));
            }
          }
          double tol = 4 * Math.ulp(1f) * (q.dim() + 2) * Oracle.norm(q, i, s) * 2 * Oracle.maxNorm(d, j) + 1e-7;
          double got = Oracle.dot(q, i, s, d, j, a);
          if (Double.isNaN(best)) { // a NaN token wins the max (NaN is never dropped)
            assertTrue(Double.isNaN(got), where + " argmax of a max that is NaN points at a NaN dot");
          } else {
            assertTrue(got >= best - tol, where + " argmax dot is the max");
          }
        }
      }
    }
  }

  static void assertTopKIsSortedScores(TopK top, float[][] all, int k, String where) {
    for (int i = 0; i < all.length; i++) {
      float[] row = all[i];
      Integer[] order = new Integer[row.length];
      for (int j = 0; j < row.length; j++) {
        order[j] = j;
      }
      // the contract's order: higher score first (Float.compare: NaN above every number), then lower index
      Arrays.sort(order, Comparator.<Integer, Float>comparing(j -> row[j], (a, b) -> Float.compare(b, a))
          .thenComparingInt(j -> j));
      int n = Math.min(k, row.length);
      assertEquals(n, top.indices()[i].length, where + " top-k size");
      for (int r = 0; r < n; r++) {
        assertEquals(order[r], top.indices()[i][r], where + " top-k rank " + r);
        assertEquals(row[order[r]], top.scores()[i][r], 0f, where + " top-k score rank " + r);
      }
    }
  }

  static float[] flatten(float[][] m) {
    int cols = m.length == 0 ? 0 : m[0].length;
    float[] out = new float[m.length * cols];
    for (int i = 0; i < m.length; i++) {
      System.arraycopy(m[i], 0, out, i * cols, cols);
    }
    return out;
  }
}
