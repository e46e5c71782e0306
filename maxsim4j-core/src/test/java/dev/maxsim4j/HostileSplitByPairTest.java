package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The CPU's split by pair (candidates, pairwise), its top-k chunks and the vector worker's fp32 documents read in
 * place, with workers reused across chunks.
 *
 * <p>A pair's score and argmax must depend on that pair only: not on which documents a worker loaded before it
 * (an fp32 document read in place after a staged one and back, masked with one run or several, empty, quantized
 * with scales far apart, against float or quantized queries), not on the thread count, not on the order of the
 * documents. Each pair of a mixed call is compared bit for bit with the same pair scored alone, with the call's
 * documents reversed, with the all-pairs call, and across 1, 2, 3 and 8 threads.
 */
class HostileSplitByPairTest {
  private static final int DIM = 35;
  private static final int LQ = 4;
  private static final int LD = 6;
  private static final int NQ = 3;
  private static final int K = 9;
  private static final int[] THREADS = {2, 3, 8};

  /** Masks cycled over the documents: none, one run inside, several runs, empty, last token, two runs. */
  private static final boolean[][] MASKS = {
      {true, true, true, true, true, true},
      {false, true, true, true, false, false},
      {true, false, true, false, false, true},
      {false, false, false, false, false, false},
      {false, false, false, false, false, true},
      {true, true, false, false, true, true},
      {false, true, true, true, false, false},
  };
  /** Magnitudes cycled over the documents (co-prime with the masks' period): scales far apart, overflow scans. */
  private static final float[] MAGNITUDE = {1f, 1e18f, 1e-18f, 1f, 3e33f, 1e-33f, 2f, 1e-3f};
  private static final float[] QUERY_MAGNITUDE = {1f, 1e12f, 1e-12f};

  private final float[] queryData;
  private final float[] documentData;

  HostileSplitByPairTest() {
    SplittableRandom r = new SplittableRandom(2026);
    queryData = new float[NQ * LQ * DIM];
    for (int i = 0; i < queryData.length; i++) {
      queryData[i] = (float) r.nextGaussian() * QUERY_MAGNITUDE[i / (LQ * DIM)];
    }
    documentData = new float[NQ * K * LD * DIM];
    for (int i = 0; i < documentData.length; i++) {
      documentData[i] = (float) r.nextGaussian() * MAGNITUDE[i / (LD * DIM) % MAGNITUDE.length];
    }
    // a tie: document 7 equals document 0 (the same mask too)
    System.arraycopy(documentData, 0, documentData, 7 * LD * DIM, LD * DIM);
  }

  private static boolean[][] queryMask(int n) {
    boolean[][] m = new boolean[n][LQ];
    for (boolean[] row : m) {
      Arrays.fill(row, true);
    }
    return m;
  }

  private static TokenBatch batch(DType type, float[] data, int n, int length, boolean[][] mask) {
    TokenBatch f = TokenBatch.ofFloats(data, n, length, DIM);
    TokenBatch b = switch (type) {
      case FLOAT32 -> f;
      case FLOAT16, BFLOAT16 -> TokenBatch.ofHalfs(type, type.narrow(data), n, length, DIM);
      default -> f.quantize(type);
    };
    return mask == null ? b : b.withMask(mask);
  }

  private float[] documentRows(int[] rows) {
    float[] out = new float[rows.length * LD * DIM];
    for (int r = 0; r < rows.length; r++) {
      System.arraycopy(documentData, rows[r] * LD * DIM, out, r * LD * DIM, LD * DIM);
    }
    return out;
  }

  private boolean[][] documentMasks(int[] rows) {
    boolean[][] m = new boolean[rows.length][];
    for (int r = 0; r < rows.length; r++) {
      m[r] = MASKS[rows[r] % MASKS.length].clone();
    }
    return m;
  }

  private TokenBatch documents(DType type, int[] rows) {
    return batch(type, documentRows(rows), rows.length, LD, documentMasks(rows));
  }

  private TokenBatch queries(DType type, int[] rows) {
    float[] out = new float[rows.length * LQ * DIM];
    boolean[][] m = queryMask(rows.length);
    for (int r = 0; r < rows.length; r++) {
      System.arraycopy(queryData, rows[r] * LQ * DIM, out, r * LQ * DIM, LQ * DIM);
      if (rows[r] == 1) {
        m[r][2] = false; // one query with a masked slot
      }
    }
    return batch(type, out, rows.length, LQ, m);
  }

  private static int[] range(int from, int to) {
    int[] a = new int[to - from];
    for (int i = 0; i < a.length; i++) {
      a[i] = from + i;
    }
    return a;
  }

  private static int[] argmaxOf(TrainingScores t, int pairs) {
    int[] a = new int[pairs * LQ];
    for (int p = 0; p < pairs; p++) {
      for (int s = 0; s < LQ; s++) {
        a[p * LQ + s] = t.argmax(p, s);
      }
    }
    return a;
  }

  private static String bits(float f) {
    return f + " (0x" + Integer.toHexString(Float.floatToRawIntBits(f)) + ")";
  }

  private static void assertSameBits(float expected, float actual, String what) {
    assertTrue(Float.floatToIntBits(expected) == Float.floatToIntBits(actual),
        what + ": expected " + bits(expected) + " but was " + bits(actual));
  }

  private static final DType[] QUERY_TYPES = {DType.FLOAT32, DType.INT8, DType.FLOAT8_E4M3, DType.BINARY};
  private static final DType[] DOCUMENT_TYPES = {DType.FLOAT32, DType.BFLOAT16, DType.FLOAT16, DType.INT8,
      DType.FLOAT8_E4M3, DType.BINARY};

  @Test
  void everyPairOfAMixedCallScoresAsAloneWhateverCameBeforeItOnItsWorker() {
    List<String> failures = new ArrayList<>();
    for (String backend : new String[] {"vector", "scalar"}) {
      for (DType qt : QUERY_TYPES) {
        for (DType dt : DOCUMENT_TYPES) {
          String combo = backend + ", " + qt + " queries x " + dt + " documents";
          try {
            check(backend, qt, dt, combo);
          } catch (AssertionError | RuntimeException e) {
            failures.add(combo + ": " + e.getMessage());
          }
        }
      }
    }
    assertEquals(List.of(), failures, String.join("\n", failures));
  }

  private void check(String backend, DType qt, DType dt, String combo) {
    TokenBatch q = queries(qt, range(0, NQ));
    int[] all = range(0, NQ * K);
    TokenBatch d = documents(dt, all);
    // each query's candidates reversed: every worker meets the documents in the other order
    int[] reversed = new int[NQ * K];
    for (int b = 0; b < NQ; b++) {
      for (int c = 0; c < K; c++) {
        reversed[b * K + c] = b * K + (K - 1 - c);
      }
    }
    TokenBatch dReversed = documents(dt, reversed);
    float[][] one;
    float[][] oneReversed;
    float[][] allPairs;
    int[] oneArgmax = null;
    TopK oneTopK;
    boolean training = !qt.isQuantized() && !dt.isQuantized(); // training takes float inputs only
    float[][] alone = new float[NQ][K];
    int[] aloneArgmax = new int[NQ * K * LQ];
    try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
      one = m.candidates(q, d, K);
      oneReversed = m.candidates(q, dReversed, K);
      allPairs = m.scores(q, d);
      if (training) {
        oneArgmax = argmaxOf(m.candidatesForTraining(q, d, K), NQ * K);
      }
      oneTopK = m.topK(q, d, 5);
      for (int b = 0; b < NQ; b++) {
        TokenBatch qb = queries(qt, new int[] {b});
        for (int c = 0; c < K; c++) {
          TokenBatch db = documents(dt, new int[] {b * K + c});
          alone[b][c] = m.pairwise(qb, db)[0];
          if (training) {
            int[] a = argmaxOf(m.pairwiseForTraining(qb, db), 1);
            System.arraycopy(a, 0, aloneArgmax, (b * K + c) * LQ, LQ);
          }
        }
      }
    }
    for (int b = 0; b < NQ; b++) {
      for (int c = 0; c < K; c++) {
        String pair = combo + ", query " + b + ", candidate " + c + " (mask " + (b * K + c) % MASKS.length + ")";
        assertSameBits(alone[b][c], one[b][c], pair + ", in the call against alone");
        assertSameBits(one[b][c], oneReversed[b][K - 1 - c], pair + ", documents reversed");
        assertSameBits(one[b][c], allPairs[b][b * K + c], pair + ", all pairs");
      }
    }
    if (training) {
      assertEquals(Arrays.toString(aloneArgmax), Arrays.toString(oneArgmax), combo + ": argmax in the call against alone");
    }
    // the top-k holds the all-pairs scores, ranked higher first, NaN first, ties by the lower index
    for (int b = 0; b < NQ; b++) {
      float[] row = allPairs[b];
      Integer[] order = new Integer[row.length];
      for (int j = 0; j < order.length; j++) {
        order[j] = j;
      }
      Arrays.sort(order, (x, y) -> {
        int c = Float.compare(row[y], row[x]);
        return c != 0 ? c : Integer.compare(x, y);
      });
      for (int r = 0; r < 5; r++) {
        assertEquals(order[r], oneTopK.indices()[b][r], combo + ", top-k query " + b + " rank " + r);
        assertSameBits(row[order[r]], oneTopK.scores()[b][r], combo + ", top-k query " + b + " rank " + r);
      }
    }
    // pairwise: query b repeated against each of its candidates, split by pair
    int[] repeated = new int[NQ * K];
    for (int p = 0; p < repeated.length; p++) {
      repeated[p] = p / K;
    }
    TokenBatch qRepeated = queries(qt, repeated);
    float[] onePairwise;
    try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
      onePairwise = m.pairwise(qRepeated, d);
    }
    // (float queries against 1-bit documents take the table kernel only while every query's table fits 1 MiB
    // together: the 27 repeated queries' do not, so their scores are the vector kernel's, rounded otherwise)
    if (!(dt == DType.BINARY && !qt.isQuantized())) {
      for (int p = 0; p < onePairwise.length; p++) {
        assertSameBits(one[p / K][p % K], onePairwise[p], combo + ": pairwise pair " + p);
      }
    }
    for (int threads : THREADS) {
      String what = combo + ", " + threads + " threads";
      try (MaxSim m = MaxSim.builder().backend(backend).threads(threads).build()) {
        assertArrayEquals(one, m.candidates(q, d, K), what + ": candidates");
        assertArrayEquals(oneReversed, m.candidates(q, dReversed, K), what + ": candidates reversed");
        assertArrayEquals(allPairs, m.scores(q, d), what + ": all pairs");
        if (training) {
          assertEquals(Arrays.toString(oneArgmax),
              Arrays.toString(argmaxOf(m.candidatesForTraining(q, d, K), NQ * K)), what + ": argmax");
        }
        assertEquals(oneTopK, m.topK(q, d, 5), what + ": top-k");
        assertArrayEquals(onePairwise, m.pairwise(qRepeated, d), what + ": pairwise");
      }
    }
  }

  /** Empty documents score -1e9 with no argmax, wherever they fall in a chunk, on any thread count. */
  @Test
  void emptyCandidatesScoreMinusOneBillionWithNoArgmaxOnEveryThreadCount() {
    TokenBatch q = queries(DType.FLOAT32, range(0, NQ));
    TokenBatch d = documents(DType.FLOAT32, range(0, NQ * K));
    for (int threads : new int[] {1, 2, 3, 8}) {
      try (MaxSim m = MaxSim.builder().backend("vector").threads(threads).build()) {
        TrainingScores t = m.candidatesForTraining(q, d, K);
        float[] s = t.scores();
        for (int p = 0; p < NQ * K; p++) {
          if (p % MASKS.length == 3) {
            assertEquals(-1e9f, s[p], "pair " + p);
            for (int slot = 0; slot < LQ; slot++) {
              assertEquals(-1, t.argmax(p, slot), "pair " + p + " slot " + slot);
            }
          }
        }
      }
    }
  }

  /** Calls with nothing to score return empty results rather than dividing by zero candidates. */
  @Test
  void callsWithNoPairsReturnEmpty() {
    TokenBatch none = TokenBatch.ofFloats(new float[0], 0, LQ, DIM);
    TokenBatch q = queries(DType.FLOAT32, range(0, NQ));
    for (int threads : new int[] {1, 3}) {
      try (MaxSim m = MaxSim.builder().backend("vector").threads(threads).build()) {
        assertEquals(0, m.pairwise(none, TokenBatch.ofFloats(new float[0], 0, LD, DIM)).length);
        assertEquals(0, m.candidates(none, TokenBatch.ofFloats(new float[0], 0, LD, DIM), 4).length);
        assertEquals(NQ, m.scores(q, TokenBatch.ofFloats(new float[0], 0, LD, DIM)).length);
        TopK t = m.topK(q, TokenBatch.ofFloats(new float[0], 0, LD, DIM), 3);
        assertEquals(NQ, t.indices().length);
        assertEquals(0, t.indices()[0].length);
      }
    }
  }

  /**
   * A top-k over many more documents than k, split into chunks of fewer documents than k (8 threads: a chunk of
   * ceil(Nd / 32)), with large ties and NaN: the same ranking on every thread count, and the best k of all pairs.
   */
  @Test
  void topKChunksSmallerThanKKeepTheOneThreadRanking() {
    SplittableRandom r = new SplittableRandom(5);
    int nd = 301;
    float[] data = new float[nd * 2 * DIM];
    for (int i = 0; i < data.length; i++) {
      data[i] = (float) r.nextGaussian();
    }
    for (int j = 5; j < nd; j += 5) { // many ties with document 0
      System.arraycopy(data, 0, data, j * 2 * DIM, 2 * DIM);
    }
    data[100 * 2 * DIM] = Float.NaN;
    data[299 * 2 * DIM] = Float.NaN;
    TokenBatch d = TokenBatch.ofFloats(data, nd, 2, DIM);
    TokenBatch q = TokenBatch.ofFloats(Arrays.copyOf(data, 2 * 2 * DIM), 2, 2, DIM); // queries equal documents 0, 1
    for (int k : new int[] {1, 9, 40, 64, 301, 500}) {
      TopK one;
      float[][] all;
      try (MaxSim m = MaxSim.builder().backend("vector").threads(1).build()) {
        one = m.topK(q, d, k);
        all = m.scores(q, d);
      }
      for (int b = 0; b < 2; b++) {
        float[] row = all[b];
        Integer[] order = new Integer[nd];
        for (int j = 0; j < nd; j++) {
          order[j] = j;
        }
        Arrays.sort(order, (x, y) -> {
          int c = Float.compare(row[y], row[x]);
          return c != 0 ? c : Integer.compare(x, y);
        });
        int keep = Math.min(k, nd);
        assertEquals(keep, one.indices()[b].length);
        for (int rank = 0; rank < keep; rank++) {
          assertEquals(order[rank], one.indices()[b][rank], "k " + k + " query " + b + " rank " + rank);
        }
      }
      for (int threads : new int[] {2, 3, 8, 64}) {
        try (MaxSim m = MaxSim.builder().backend("vector").threads(threads).build()) {
          assertEquals(one, m.topK(q, d, k), "k " + k + ", " + threads + " threads");
        }
      }
    }
  }
}
