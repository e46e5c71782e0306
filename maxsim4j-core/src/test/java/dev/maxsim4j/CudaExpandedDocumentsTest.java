package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Rule 21 on the GPU: int8, e4m3 and 1-bit documents expanded into bf16 or fp16 operands, then scored by the
 * warp-specialized kernel's "_scaled" entries (each product times its document token's scale in the fold), against
 * the float64 reference on the dequantized values, {@link Oracle#tolerance}: long queries in several passes of 256
 * rows, groups of 8 short queries, document slices with their merge; tiles whose first token's scale is not
 * 16-byte aligned, documents ending on either side of a 128-token tile, masked, ragged, empty and all-masked
 * documents, packed rows, scales of either sign and zero, NaN bytes; resident documents, candidates and top-k, whose
 * launches each expand a block of the documents. Both the rules (rule 21 from 641 query rows or three groups of
 * queries) and the kernel forced wherever it applies.
 */
@GpuTest
class CudaExpandedDocumentsTest {
  private static final DType[] COMPRESSED = {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY};
  private static final DType[] FLOAT_QUERIES = {DType.BFLOAT16, DType.FLOAT16};
  private static MaxSim reference;
  private static MaxSim cuda;
  private static MaxSim expanded;

  @BeforeAll
  static void open() {
    reference = MaxSim.builder().backend("reference").build();
    cuda = MaxSim.builder().backend("cuda").build();
    expanded = CudaParityTest.withVariant("expanded");
  }

  @AfterAll
  static void close() {
    if (cuda != null) {
      cuda.close();
      expanded.close();
      reference.close();
    }
  }

  private static void assertBothClose(TokenBatch q, TokenBatch d, String where) {
    float[][] expected = reference.scores(q, d);
    ParityTest.assertClose(expected, cuda.scores(q, d), q, d, where + " (rules)");
    ParityTest.assertClose(expected, expanded.scores(q, d), q, d, where + " (expanded)");
  }

  /** Random bytes of {@code type} and scales of either sign or zero. */
  private static TokenBatch signedScales(RandomBatches r, DType type, int n, int l, int dim) {
    byte[] data = new byte[Math.toIntExact(n * l * type.bytesPerToken(dim))];
    for (int i = 0; i < data.length; i++) {
      int b = r.rnd.nextInt(256);
      data[i] = (byte) (type == DType.FLOAT8_E4M3 && (b & 0x7f) == 0x7f ? b - 1 : b); // no NaN
    }
    float[] scales = new float[n * l];
    for (int i = 0; i < scales.length; i++) {
      int kind = r.rnd.nextInt(4);
      scales[i] = kind == 0 ? 0f : kind == 1 ? -(float) r.rnd.nextDouble() : (float) r.rnd.nextDouble() * 0.1f;
    }
    return TokenBatch.ofBytes(type, data, scales, n, l, dim);
  }

  @Test
  void longQueriesInSeveralPassesMatchTheReference() {
    RandomBatches r = new RandomBatches();
    // {d, Lq, Ld}: passes of 256 rows (two row groups; the rules' from 641 query rows, the forced kernel's at any
    // length) at 64 and 128 dims, a d between, 1-bit rows of 16 and 48
    int[][] shapes = {{128, 600, 150}, {64, 520, 129}, {96, 257, 300}, {16, 800, 70}, {48, 400, 257}};
    for (DType type : COMPRESSED) {
      for (int[] s : shapes) {
        if (type != DType.BINARY && s[0] < 64) {
          continue; // 8-bit rows under 64 dims stay with rules 19 and 20
        }
        for (DType qt : FLOAT_QUERIES) {
          String where = qt + " x " + type + " d=" + s[0] + " Lq=" + s[1] + " Ld=" + s[2] + " (" + r + ")";
          TokenBatch q = CudaCompressedTest.batch(r, qt, 2, s[1], s[0], 1);
          assertBothClose(q, CudaCompressedTest.batch(r, type, 9, s[2], s[0], 2), where + " ragged");
          assertBothClose(q, CudaCompressedTest.batch(r, type, 9, s[2], s[0], 1), where + " masked");
          assertBothClose(q, signedScales(r, type, 5, s[2], s[0]), where + " signed scales");
          // listed pairs: each launch expands the first `pairs` documents
          TokenBatch listed = CudaCompressedTest.batch(r, type, 6, s[2], s[0], 2);
          ParityTest.assertCandidatesClose(reference.candidates(q, listed, 3), expanded.candidates(q, listed, 3), q,
              listed, 3, where + " candidates (expanded)");
          TokenBatch pd = CudaCompressedTest.batch(r, type, 2, s[2], s[0], 1);
          float[] ref = reference.pairwise(q, pd);
          float[] got = expanded.pairwise(q, pd);
          for (int b = 0; b < 2; b++) {
            ParityTest.assertScore(ref[b], got[b], Oracle.tolerance(q, b, pd, b), where + " pairwise (expanded)");
          }
        }
      }
    }
  }

  @Test
  void groupsOfShortQueriesMatchTheReference() {
    RandomBatches r = new RandomBatches();
    for (DType type : COMPRESSED) {
      for (int dim : type == DType.BINARY ? new int[] {32, 128} : new int[] {64, 80, 128}) {
        for (DType qt : FLOAT_QUERIES) {
          String where = qt + " x " + type + " d=" + dim + " (" + r + ")";
          // 20 queries: two full groups of 8 and one of 4; ragged and masked query rows
          TokenBatch q = CudaCompressedTest.batch(r, qt, 20, 32, dim, 2);
          TokenBatch d = CudaCompressedTest.batch(r, type, 50, 140, dim, 2); // 150 items: the rules' groups
          assertBothClose(q, d, where + " ragged");
          assertBothClose(CudaCompressedTest.batch(r, qt, 20, 17, dim, 1), signedScales(r, type, 50, 140, dim),
              where + " masked queries, signed scales");
          TokenBatch one = CudaCompressedTest.batch(r, type, 20, 140, dim, 2); // a candidate a query
          float[][] pairs = cuda.scores(q, one);
          float[][] cand = cuda.candidates(q, one, 1);
          for (int b = 0; b < q.size(); b++) {
            ParityTest.assertScore(pairs[b][b], cand[b][0], Oracle.tolerance(q, b, one, b), where + " candidate " + b);
          }
          float[][] all = cuda.scores(q, d);
          ParityTest.assertTopKIsSortedScores(cuda.topK(q, d, 5), all, 5, where);
          try (ResidentBatch rd = cuda.upload(d)) {
            assertArrayEquals(all, cuda.scores(q, rd), where + " resident documents");
            assertArrayEquals(all, cuda.scoresAsync(q, rd).join(), where + " in flight");
          }
        }
      }
    }
  }

  /**
   * Documents of 1, 127, 128, 129, 255, 256 and 257 tokens, one empty and one all masked, packed one after another so
   * that their tiles start at every offset within a 16-byte unit of scales, and a few documents of 4,000 tokens, which
   * the kernel takes in slices merged by a second launch.
   */
  @Test
  void tileEdgesPackedRowsAndSlicesMatchTheReference() {
    RandomBatches r = new RandomBatches();
    int[] lengths = {1, 127, 128, 129, 0, 255, 256, 257, 3, 130};
    for (DType type : COMPRESSED) {
      for (DType qt : FLOAT_QUERIES) {
        String where = qt + " x " + type + " (" + r + ")";
        TokenBatch q = CudaCompressedTest.batch(r, qt, 3, 600, 128, 1);
        TokenBatch padded = CudaCompressedTest.batch(r, type, lengths.length, 257, 128, 0).withLengths(lengths);
        boolean[] mask = new boolean[lengths.length * 257];
        for (int i = 0; i < mask.length; i++) {
          mask[i] = i / 257 != 9 && r.rnd.nextInt(8) != 0; // document 9: every token masked
        }
        assertBothClose(q, padded, where + " tile edges");
        assertBothClose(q, padded.withMask(mask), where + " tile edges, masked");
        assertBothClose(q, r.packed(type, 30, 1, 300, 128, true), where + " packed");
        assertBothClose(CudaCompressedTest.batch(r, qt, 1, 600, 128, 0),
            CudaCompressedTest.batch(r, type, 2, 4000, 128, 1), where + " slices");
        float[][] empty = expanded.scores(q, padded.withMask(mask));
        for (int i = 0; i < q.size(); i++) {
          assertEquals(-1e9f, empty[i][4], 0f, where + " empty document");
          assertEquals(-1e9f, empty[i][9], 0f, where + " all-masked document");
        }
      }
    }
  }

  /** An e4m3 NaN byte in a valid token makes its document's score NaN; in a masked token, nothing. */
  @Test
  void anFp8NanByteInAValidTokenMakesTheScoreNan() {
    RandomBatches r = new RandomBatches();
    int n = 6;
    int l = 200;
    int dim = 128;
    for (byte nan : new byte[] {0x7f, (byte) 0xff}) {
      byte[] data = new byte[n * l * dim];
      for (int i = 0; i < data.length; i++) {
        data[i] = (byte) (r.rnd.nextInt(0x7f) | (r.rnd.nextBoolean() ? 0x80 : 0));
      }
      data[(2 * l + 150) * dim + 5] = nan; // document 2, valid
      data[(4 * l + 3) * dim + 9] = nan; // document 4, masked below
      boolean[] mask = new boolean[n * l];
      java.util.Arrays.fill(mask, true);
      mask[4 * l + 3] = false;
      TokenBatch d = TokenBatch.ofBytes(DType.FLOAT8_E4M3, data, null, n, l, dim).withMask(mask);
      for (DType qt : FLOAT_QUERIES) {
        TokenBatch q = CudaCompressedTest.batch(r, qt, 2, 600, dim, 0);
        for (MaxSim m : new MaxSim[] {cuda, expanded}) {
          float[][] s = m.scores(q, d);
          for (int i = 0; i < 2; i++) {
            for (int j = 0; j < n; j++) {
              assertEquals(j == 2, Float.isNaN(s[i][j]), qt + " query " + i + " document " + j + ": " + s[i][j]);
            }
          }
        }
        assertBothClose(q, d, qt + " x e4m3 NaN byte (" + r + ")");
      }
    }
  }

  /**
   * Top-k of many short queries over more documents than one launch scores: each launch expands only its block of
   * documents (from a document offset past 0), and the top-k are the best of the all-pairs scores, which another
   * backend scores in one launch. The top-k run first on a backend of their own, so no launch before them left the
   * documents expanded in their buffer.
   */
  @Test
  void topKBlocksPastTheFirstExpandTheirOwnDocuments() {
    RandomBatches r = new RandomBatches();
    for (DType type : COMPRESSED) {
      TokenBatch q = CudaCompressedTest.batch(r, DType.BFLOAT16, 512, 8, 64, 2);
      TokenBatch d = CudaCompressedTest.batch(r, type, 9000, 12, 64, 2);
      TopK top;
      TopK residentTop;
      try (MaxSim fresh = MaxSim.builder().backend("cuda").build()) {
        top = fresh.topK(q, d, 7);
        try (ResidentBatch rd = fresh.upload(d)) {
          residentTop = fresh.topK(q, rd, 7);
        }
      }
      float[][] all = cuda.scores(q, d);
      ParityTest.assertTopKIsSortedScores(top, all, 7, type + " (" + r + ")");
      ParityTest.assertTopKIsSortedScores(residentTop, all, 7, type + " resident (" + r + ")");
      TokenBatch few = CudaCompressedTest.batch(r, DType.BFLOAT16, 3, 8, 64, 2); // against the reference
      ParityTest.assertClose(reference.scores(few, d), expanded.scores(few, d), few, d, type + " (expanded)");
    }
  }
}
