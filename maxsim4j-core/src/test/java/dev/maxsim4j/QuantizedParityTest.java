package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Quantized batches (int8, fp8 e4m3, one bit; as documents, as queries, on both sides) on every fast CPU
 * backend against the float64 reference on their dequantized values, over d in {1, 3, 8, 33, 127, 513}, L = 1,
 * masks, lengths, ragged packed rows and all-masked rows. Tolerance: the fp32 bound of {@link Oracle#tolerance}
 * (dequantizing is one fp32 multiply per element, well inside it).
 */
class QuantizedParityTest {
  private static final DType[] QUANTIZED = {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY};
  private static final int K = 3;
  private static MaxSim reference;
  private static final List<MaxSim> fast = new ArrayList<>();

  @BeforeAll
  static void open() {
    reference = MaxSim.builder().backend("reference").threads(2).build();
    for (String name : new String[] {"scalar", "vector"}) {
      fast.add(MaxSim.builder().backend(name).threads(2).build());
    }
  }

  @AfterAll
  static void close() {
    reference.close();
    fast.forEach(MaxSim::close);
  }

  static Stream<Arguments> cases() {
    RandomBatches r = new RandomBatches();
    List<Arguments> cases = new ArrayList<>();
    for (DType type : QUANTIZED) {
      for (int d : new int[] {1, 3, 8, 33, 127, 513}) {
        int nq = 3;
        cases.add(args(r, type + " documents d=" + d, r.padded(DType.FLOAT32, nq, 7, d, 0),
            r.padded(type, nq * K, 11, d, 0), r.padded(type, nq, 5, d, 0)));
        cases.add(args(r, type + " both sides d=" + d, r.padded(type, nq, 9, d, 0),
            r.padded(type, nq * K, 6, d, 1), r.padded(type, nq, 5, d, 2)));
        cases.add(args(r, type + " queries, bf16 documents d=" + d, r.padded(type, nq, 5, d, 1),
            r.padded(DType.BFLOAT16, nq * K, 7, d, 0), r.padded(DType.FLOAT16, nq, 5, d, 0)));
      }
      cases.add(args(r, type + " L=1", r.padded(DType.FLOAT32, 2, 1, 24, 0), r.padded(type, 2 * K, 1, 24, 0),
          r.padded(type, 2, 1, 24, 0)));
      cases.add(args(r, type + " lengths", r.padded(DType.BFLOAT16, 3, 33, 40, 2), r.padded(type, 3 * K, 13, 40, 2),
          r.padded(type, 3, 13, 40, 2)));
      cases.add(args(r, type + " packed ragged", r.packed(DType.FLOAT32, 3, 0, 40, 19, true),
          r.packed(type, 3 * K, 0, 25, 19, true), r.packed(type, 3, 1, 25, 19, false)));
      cases.add(args(r, type + " all masked rows", ParityTestRows.allMaskedRow(r.padded(type, 3, 6, 8, 1)),
          ParityTestRows.allMaskedRow(r.padded(type, 3 * K, 6, 8, 1)),
          ParityTestRows.allMaskedRow(r.padded(type, 3, 6, 8, 0))));
      cases.add(args(r, type + " long document", r.padded(DType.FLOAT32, 1, 40, 16, 0),
          r.padded(type, K, 3000, 16, 1), r.padded(type, 1, 3000, 16, 0)));
    }
    return cases.stream();
  }

  private static Arguments args(RandomBatches r, String label, TokenBatch q, TokenBatch d, TokenBatch pd) {
    return Arguments.of(label + " (" + r + ")", q, d, pd);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void everyCallMatchesTheReferenceOnDequantizedValues(String label, TokenBatch q, TokenBatch d, TokenBatch pd) {
    float[][] ref = reference.scores(q, d);
    float[] refPairwise = reference.pairwise(q, pd);
    float[][] dequantized = reference.scores(dequantize(q), dequantize(d));
    ParityTest.assertClose(dequantized, ref, q, d, label + " reference = reference on the dequantized copy");
    for (MaxSim m : fast) {
      String where = m.backendName() + " / " + label;
      float[][] all = m.scores(q, d);
      ParityTest.assertClose(ref, all, q, d, where + " all-pairs");
      float[][] cand = m.candidates(q, d, K);
      for (int b = 0; b < q.size(); b++) {
        for (int c = 0; c < K; c++) {
          assertEquals(all[b][b * K + c], cand[b][c], 0f, where + " candidates equal all-pairs");
        }
      }
      float[] pw = m.pairwise(q, pd);
      for (int b = 0; b < q.size(); b++) {
        ParityTest.assertScore(refPairwise[b], pw[b], Oracle.tolerance(q, b, pd, b), where + " pairwise b=" + b);
      }
      ParityTest.assertTopKIsSortedScores(m.topK(q, d, 4), all, 4, where);
      try (ResidentBatch resident = m.upload(d)) {
        ParityTest.assertClose(ref, m.scores(q, resident), q, d, where + " resident");
      }
    }
  }

  /** The same layout and validity in fp32, holding the dequantized values. */
  static TokenBatch dequantize(TokenBatch b) {
    float[] values = b.toFloatArray();
    TokenBatch f = b.isPacked()
        ? TokenBatch.packedFloats(values, b.offsets(), b.dim())
        : TokenBatch.ofFloats(values, b.size(), b.maxLength(), b.dim());
    boolean[] mask = new boolean[values.length / b.dim()];
    int slot = 0;
    for (int i = 0; i < b.size(); i++) {
      int slots = b.isPacked() ? b.length(i) : b.maxLength();
      for (int t = 0; t < slots; t++) {
        mask[slot++] = b.isValid(i, t);
      }
    }
    return f.withMask(mask);
  }

  /**
   * Scales at fp32's edges (0, -0, subnormal, 1e-38, scales whose largest code lands just inside fp32, 3e38,
   * MAX_VALUE), so that single dequantized values overflow fp32 while the exact scores need not: every backend
   * scores as the float64 reference, NaN only where it is NaN and infinite where it passes fp32's range,
   * wherever every token pair's exact dot product is inside fp32 (beyond, a sum over query tokens may meet
   * infinities of both signs, as it does for fp32 inputs).
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("extremeScaleCases")
  void extremeScalesScoreAsTheExactReference(String label, TokenBatch q, TokenBatch d) {
    float[][] want = reference.scores(q, d);
    for (MaxSim m : fast) {
      String where = m.backendName() + " / " + label;
      float[][] all = m.scores(q, d);
      for (int i = 0; i < q.size(); i++) {
        for (int j = 0; j < d.size(); j++) {
          if (pairDotsInsideFp32(q, i, d, j)) {
            ParityTest.assertScore(want[i][j], all[i][j], Oracle.tolerance(q, i, d, j),
                where + " [" + i + "][" + j + "]");
          }
        }
      }
      ParityTest.assertTopKIsSortedScores(m.topK(q, d, 3), all, 3, where);
    }
  }

  static Stream<Arguments> extremeScaleCases() {
    float[] edges = {0f, -0f, Float.MIN_VALUE, 1e-38f, -1e-38f, 1f, 7e35f, -2e36f, 3e38f, -3e38f, Float.MAX_VALUE};
    float[] tiny = {1e-30f, -1e-30f, 1e-34f, 1e-38f, 0f};
    java.util.SplittableRandom r = new java.util.SplittableRandom(20);
    List<Arguments> cases = new ArrayList<>();
    for (DType type : QUANTIZED) {
      for (int d : new int[] {1, 7, 32, 33, 64, 129}) {
        TokenBatch docs = extreme(r, type, 4, 6, d, edges);
        cases.add(Arguments.of(type + " both sides d=" + d, extreme(r, type, 2, 5, d, edges), docs));
        cases.add(Arguments.of(type + " documents, fp32 queries with zeros d=" + d, fp32WithZeros(r, 2, 5, d), docs));
        cases.add(Arguments.of(type + " queries, fp32 documents with zeros d=" + d, extreme(r, type, 2, 5, d, edges),
            fp32WithZeros(r, 4, 6, d)));
        // float values near fp32's largest against tiny scales: exact products far inside fp32, raw ones not
        cases.add(Arguments.of(type + " documents of tiny scales, huge fp32 queries d=" + d,
            huge(r, 2, 5, d), extreme(r, type, 4, 6, d, tiny)));
        cases.add(Arguments.of(type + " queries of tiny scales, huge fp32 documents d=" + d,
            extreme(r, type, 2, 5, d, tiny), huge(r, 4, 6, d)));
      }
    }
    return cases.stream();
  }

  /** fp32 tokens whose values are near fp32's largest, of either sign, or 0 or 1 (a mix within tokens). */
  private static TokenBatch huge(java.util.SplittableRandom r, int n, int l, int d) {
    float[] values = {3e38f, -3e38f, 1e38f, Float.MAX_VALUE, -Float.MAX_VALUE, 0f, 1f};
    float[] f = new float[n * l * d];
    for (int k = 0; k < f.length; k++) {
      f[k] = values[r.nextInt(values.length)];
    }
    return TokenBatch.ofFloats(f, n, l, d);
  }

  /** Whether every valid query token's exact dot product with every valid document token is inside fp32. */
  private static boolean pairDotsInsideFp32(TokenBatch q, int i, TokenBatch d, int j) {
    for (int s = 0; s < q.length(i); s++) {
      for (int t = 0; t < d.length(j); t++) {
        if (q.isValid(i, s) && d.isValid(j, t) && !(Math.abs(exactDot(q, i, s, d, j, t)) < Float.MAX_VALUE / 2)) {
          return false;
        }
      }
    }
    return true;
  }

  /** The float64 dot product of the exact values scale x q (get() rounds each to fp32, which may overflow). */
  private static double exactDot(TokenBatch q, int i, int s, TokenBatch d, int j, int t) {
    double sum = 0;
    for (int k = 0; k < q.dim(); k++) {
      sum += exact(q, i, s, k) * exact(d, j, t, k);
    }
    return sum;
  }

  private static double exact(TokenBatch b, int row, int t, int k) {
    return b.tokens().value(b.tokens().rowStart[row] + t, k);
  }

  /** Random codes (no fp8 NaN byte) with every token's scale drawn from {@code edges}. */
  private static TokenBatch extreme(java.util.SplittableRandom r, DType type, int n, int l, int d, float[] edges) {
    byte[] b = new byte[(int) (n * l * type.bytesPerToken(d))];
    for (int k = 0; k < b.length; k++) {
      int v = r.nextInt(256);
      b[k] = (byte) (type == DType.FLOAT8_E4M3 && (v & 0x7f) == 0x7f ? v ^ 1 : v);
    }
    float[] scales = new float[n * l];
    for (int t = 0; t < scales.length; t++) {
      scales[t] = edges[r.nextInt(edges.length)];
    }
    return TokenBatch.ofBytes(type, b, scales, n, l, d);
  }

  private static TokenBatch fp32WithZeros(java.util.SplittableRandom r, int n, int l, int d) {
    float[] f = new float[n * l * d];
    for (int k = 0; k < f.length; k++) {
      f[k] = r.nextInt(3) == 0 ? 0f : (float) r.nextGaussian();
    }
    return TokenBatch.ofFloats(f, n, l, d);
  }

  /**
   * fp32 tokens of tiny values (subnormal, or near fp32's smallest normal) against e4m3 codes of large scales, both
   * ways round: the exact products are ordinary numbers, but the kernels' raw products with fractional codes (down
   * to 2^-9) are subnormal, where they lose bits, or vanish, before the scale brings them back. Every backend scores
   * within fp32's rounding of the exact products.
   */
  @Test
  void tinyFloatTokensAgainstLargeScaledFp8CodesKeepTheirBits() {
    float[] values = {1e-43f, -7e-44f, Float.MIN_VALUE, 3e-42f, 0x1p-130f, 0f};
    float[] scales = {0x1p100f, -0x1p120f, 3e30f};
    java.util.SplittableRandom r = new java.util.SplittableRandom(21);
    for (int d : new int[] {1, 3, 33}) {
      float[] f = new float[2 * 3 * d];
      for (int k = 0; k < f.length; k++) {
        f[k] = values[r.nextInt(values.length)];
      }
      TokenBatch tiny = TokenBatch.ofFloats(f, 2, 3, d);
      byte[] b = new byte[4 * 3 * d];
      for (int k = 0; k < b.length; k++) {
        b[k] = (byte) (r.nextInt(0x38) | (r.nextBoolean() ? 0x80 : 0)); // 2^-9 .. 0.9375: fractional codes
      }
      float[] s = new float[4 * 3];
      for (int t = 0; t < s.length; t++) {
        s[t] = scales[r.nextInt(scales.length)];
      }
      TokenBatch codes = TokenBatch.ofBytes(DType.FLOAT8_E4M3, b, s, 4, 3, d);
      for (TokenBatch[] pair : new TokenBatch[][] {{tiny, codes}, {codes, tiny}}) {
        TokenBatch q = pair[0];
        TokenBatch docs = pair[1];
        float[][] want = reference.scores(q, docs);
        for (MaxSim m : fast) {
          float[][] all = m.scores(q, docs);
          for (int i = 0; i < q.size(); i++) {
            for (int j = 0; j < docs.size(); j++) {
              String where = m.backendName() + " " + q.dtype() + " x " + docs.dtype() + " d=" + d + " [" + i + "][" + j
                  + "]: want " + want[i][j] + " got " + all[i][j];
              assertTrue(Math.abs(all[i][j] - want[i][j]) <= exactTolerance(q, i, docs, j), where);
            }
          }
        }
      }
    }
  }

  /**
   * fp32's error bound on exact values: about d + Lq roundings of the summed magnitudes of the winning products, and
   * half of fp32's smallest step per query token where a score is itself subnormal.
   */
  private static double exactTolerance(TokenBatch q, int i, TokenBatch d, int j) {
    double magnitude = 0;
    for (int s = 0; s < q.length(i); s++) {
      double largest = 0;
      for (int t = 0; t < d.length(j); t++) {
        double sum = 0;
        for (int k = 0; k < q.dim(); k++) {
          sum += Math.abs(exact(q, i, s, k) * exact(d, j, t, k));
        }
        largest = Math.max(largest, sum);
      }
      magnitude += largest;
    }
    return 4 * Math.ulp(1.0f) * (q.dim() + q.length(i) + 4) * magnitude + q.length(i) * (double) Float.MIN_VALUE;
  }

  @Test
  void anFp8NanByteInAValidTokenMakesTheScoreNan() {
    byte[] docs = new byte[2 * 4];
    docs[5] = (byte) 0xff; // document 1, token 0, element 1
    TokenBatch d = TokenBatch.ofBytes(DType.FLOAT8_E4M3, docs, null, 2, 1, 4);
    TokenBatch q = TokenBatch.ofFloats(new float[] {1, 1, 1, 1}, 1, 1, 4);
    for (MaxSim m : fast) {
      float[][] s = m.scores(q, d);
      assertEquals(0f, s[0][0], 0f, m.backendName());
      assertTrue(Float.isNaN(s[0][1]), m.backendName() + ": NaN byte gives a NaN score, got " + s[0][1]);
    }
  }

  @Test
  void anEmptyQuantizedDocumentScoresMinusOneBillion() {
    TokenBatch d = TokenBatch.ofBytes(DType.BINARY, new byte[] {1, 0x40}, new float[] {1, 2}, 2, 1, 3)
        .withLengths(new int[] {0, 1});
    TokenBatch q = TokenBatch.ofFloats(new float[] {1, -1, 1}, 1, 1, 3);
    for (MaxSim m : fast) {
      float[][] s = m.scores(q, d);
      assertEquals(-1e9f, s[0][0], 0f, m.backendName());
      // 0b010 -> (-1, +1, -1) x 2: dot with (1, -1, 1) = -6
      assertEquals(-6f, s[0][1], 0f, m.backendName());
    }
  }
}
