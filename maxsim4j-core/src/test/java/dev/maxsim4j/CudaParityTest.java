package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.cuda.CudaBackend;
import dev.maxsim4j.internal.cuda.ForcedKernels;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The CUDA backend against the float64 reference over the CPU shape matrix, plus Ld = 8192 and 32768,
 * every dtype pairing, masks, all-masked rows and ragged packed rows; top-k against sorting; resident
 * documents; device memory after many calls. Tolerance: the fp32 accumulation bound of
 * {@link Oracle#tolerance} (the kernel widens every dtype to fp32 and accumulates in fp32).
 */
@GpuTest
class CudaParityTest {
  private static MaxSim reference;
  private static MaxSim cuda;
  /** The same backend with the warp-per-pair streaming kernel forced wherever it applies (Lq <= 32, d <= 128). */
  private static MaxSim streaming;
  /** The warpgroup (wgmma) kernel forced wherever it fits; on GPUs other than sm_90 the default kernels. */
  private static MaxSim warpgroups;
  /** The same, a query's passes of rows run one after another in a block instead of spread over blocks. */
  private static MaxSim serialPasses;
  /** The wgmma kernel turned off: the block kernels (the sm_80 path) on the launches it would take. */
  private static MaxSim blockKernels;
  /** wgmma query groups forced wherever they apply (all pairs, Nq > 1, Lq <= 32; sm_90). */
  private static MaxSim wgmmaGroups;
  /** The warp-specialized wgmma kernel forced wherever it applies (d <= 128, any Lq; sm_90). */
  private static MaxSim warpSpecialized;
  /** The same, with per-row partials and the merge launch where it would sum the scores itself (A/B). */
  private static MaxSim warpSpecializedMerge;
  /** The same with passes of 256 query rows (two row groups per warpgroup) on every query length. */
  private static MaxSim warpSpecializedWide;
  /** The same with passes of 128 query rows on every query length. */
  private static MaxSim warpSpecializedNarrow;
  /** The warp-specialized kernel's query groups (8 queries per pass) forced wherever they apply (sm_90). */
  private static MaxSim warpSpecializedGroups;

  @BeforeAll
  static void open() {
    reference = MaxSim.builder().backend("reference").build();
    cuda = MaxSim.builder().backend("cuda").build();
    streaming = withVariant("stream");
    warpgroups = withVariant("wgmma");
    serialPasses = withVariant("wgmma_serial");
    blockKernels = withVariant("nowgmma");
    wgmmaGroups = withVariant("wgroups");
    warpSpecialized = withVariant("wgmma_ws");
    warpSpecializedMerge = withVariant("wgmma_ws_merge");
    warpSpecializedWide = withVariant("wgmma_ws_r256");
    warpSpecializedNarrow = withVariant("wgmma_ws_r128");
    warpSpecializedGroups = withVariant("wgmma_ws_q8");
  }

  /** A CUDA MaxSim whose forward runs the named kernels (see internal.cuda.ForcedKernels in the tests). */
  static MaxSim withVariant(String variant) {
    return MaxSim.over(ForcedKernels.backend(variant, 2));
  }

  @AfterAll
  static void close() {
    if (cuda != null) {
      cuda.close();
      streaming.close();
      warpgroups.close();
      serialPasses.close();
      blockKernels.close();
      wgmmaGroups.close();
      warpSpecialized.close();
      warpSpecializedMerge.close();
      warpSpecializedWide.close();
      warpSpecializedNarrow.close();
      warpSpecializedGroups.close();
      reference.close();
    }
  }

  static Stream<Arguments> cases() {
    RandomBatches r = new RandomBatches();
    Stream<Arguments> longDocs = Stream.of(
        Arguments.of("Ld=8192 bf16 (" + r + ")", r.padded(DType.FLOAT32, 2, 33, 64, 1),
            r.padded(DType.BFLOAT16, 6, 8192, 64, 2), r.padded(DType.FLOAT16, 2, 8192, 64, 1)),
        Arguments.of("Ld=32768 fp16 (" + r + ")", r.padded(DType.BFLOAT16, 1, 32, 16, 0),
            r.padded(DType.FLOAT16, 3, 32768, 16, 0), r.padded(DType.FLOAT32, 1, 32768, 16, 1)),
        Arguments.of("Lq=1000 d=96 (" + r + ")", r.packed(DType.FLOAT32, 2, 900, 1000, 96, true),
            r.padded(DType.BFLOAT16, 6, 70, 96, 1), r.padded(DType.BFLOAT16, 2, 70, 96, 0)));
    return Stream.concat(Stream.concat(ParityTest.cases(), longDocs), tensorCoreCases(r));
  }

  /** Queries and documents of one half type with d % 8 == 0: the mma.sync kernel's inputs. */
  static Stream<Arguments> tensorCoreCases(RandomBatches r) {
    java.util.List<Arguments> cases = new java.util.ArrayList<>();
    int[][] shapes = {{8, 1, 1}, {48, 16, 77}, {24, 31, 9}, {64, 17, 40}, {96, 32, 300}, {128, 33, 129}, {128, 100, 64}, {256, 300, 20},
        {512, 32, 50}, {1024, 48, 30}};
    for (DType type : new DType[] {DType.BFLOAT16, DType.FLOAT16}) {
      for (int[] s : shapes) {
        cases.add(Arguments.of("tensor cores " + type + " d=" + s[0] + " Lq=" + s[1] + " Ld=" + s[2] + " (" + r + ")",
            r.padded(type, 3, s[1], s[0], 1), r.padded(type, 9, s[2], s[0], 2), r.padded(type, 3, s[2], s[0], 0)));
      }
      cases.add(Arguments.of("tensor cores packed " + type + " (" + r + ")", r.packed(type, 3, 0, 70, 128, true),
          r.packed(type, 9, 0, 90, 128, true), r.packed(type, 3, 1, 90, 128, false)));
      cases.add(Arguments.of("tensor cores Ld=8192 " + type + " (" + r + ")", r.padded(type, 2, 32, 128, 0),
          r.padded(type, 6, 8192, 128, 1), r.padded(type, 2, 8192, 128, 0)));
    }
    cases.add(Arguments.of("tensor cores Lq=4096 (" + r + ")", r.padded(DType.BFLOAT16, 1, 4096, 16, 1),
        r.padded(DType.BFLOAT16, 3, 20, 16, 0), r.padded(DType.BFLOAT16, 1, 20, 16, 0)));
    cases.add(Arguments.of("FFMA Lq=4096 d=33 (" + r + ")", r.padded(DType.FLOAT32, 1, 4096, 33, 2),
        r.padded(DType.FLOAT16, 3, 20, 33, 1), r.padded(DType.FLOAT32, 1, 20, 33, 0)));
    cases.add(Arguments.of("tensor cores Ld=32768 (" + r + ")", r.padded(DType.BFLOAT16, 1, 32, 64, 0),
        r.padded(DType.BFLOAT16, 3, 32768, 64, 0), r.padded(DType.BFLOAT16, 1, 32768, 64, 1)));
    return cases.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void everyOperationMatchesTheReference(String label, TokenBatch q, TokenBatch d, TokenBatch pd) {
    String where = "cuda / " + label;
    float[][] all = assertAllPairsMatchTheReference(q, d, where);
    float[][] cand = cuda.candidates(q, d, 3);
    for (int b = 0; b < q.size(); b++) {
      for (int c = 0; c < 3; c++) {
        assertEquals(all[b][b * 3 + c], cand[b][c], 0f, where + " candidates equal all-pairs");
      }
    }
    float[] pw = cuda.pairwise(q, pd);
    float[] refPw = reference.pairwise(q, pd);
    for (int b = 0; b < q.size(); b++) {
      ParityTest.assertScore(refPw[b], pw[b], Oracle.tolerance(q, b, pd, b), where + " pairwise");
    }
  }

  /** The streaming kernel on every case it applies to (the rest run the default kernels again). */
  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void theStreamingKernelMatchesTheReference(String label, TokenBatch q, TokenBatch d, TokenBatch pd) {
    assertVariantMatchesTheReference(streaming, "cuda stream / " + label, q, d, pd);
  }

  /** The wgmma kernel on every case it fits (sm_90; elsewhere the default kernels again). */
  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void theWarpgroupKernelMatchesTheReference(String label, TokenBatch q, TokenBatch d, TokenBatch pd) {
    assertVariantMatchesTheReference(warpgroups, "cuda wgmma / " + label, q, d, pd);
  }

  /** The wgmma kernel with a long query's passes in one block (split passes are the default). */
  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void theWarpgroupKernelWithSerialPassesMatchesTheReference(String label, TokenBatch q, TokenBatch d,
      TokenBatch pd) {
    assertVariantMatchesTheReference(serialPasses, "cuda wgmma_serial / " + label, q, d, pd);
  }

  /** The warp-specialized wgmma kernel on every case it applies to (the rest run the block kernels). */
  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void theWarpSpecializedKernelMatchesTheReference(String label, TokenBatch q, TokenBatch d, TokenBatch pd) {
    assertVariantMatchesTheReference(warpSpecialized, "cuda wgmma_ws / " + label, q, d, pd);
    assertVariantMatchesTheReference(warpSpecializedMerge, "cuda wgmma_ws_merge / " + label, q, d, pd);
    assertVariantMatchesTheReference(warpSpecializedWide, "cuda wgmma_ws_r256 / " + label, q, d, pd);
  }

  /**
   * wgmma query groups on every case they apply to, on the wgmma kernel (4 queries per block) and on the
   * warp-specialized one (8 per pass); the rest run the default kernels.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void wgmmaQueryGroupsMatchTheReference(String label, TokenBatch q, TokenBatch d, TokenBatch pd) {
    assertVariantMatchesTheReference(wgmmaGroups, "cuda wgroups / " + label, q, d, pd);
    assertVariantMatchesTheReference(warpSpecializedGroups, "cuda wgmma_ws_q8 / " + label, q, d, pd);
  }

  /**
   * The warp-specialized kernel's query groups across their edges: 19 queries (a last group of 3), ragged and
   * masked queries with an empty one, documents empty, of one token and of several 128-token tiles, a tie
   * in every row and a NaN, for d = 16, 64 and 128 in both half types; scores, the training argmax, top-k
   * and resident documents against the reference.
   */
  @Test
  void queryGroupsOfEightKeepTiesNaNAndEmptyRows() {
    RandomBatches r = new RandomBatches();
    for (DType type : new DType[] {DType.BFLOAT16, DType.FLOAT16}) {
      for (int dim : new int[] {16, 64, 128}) {
        int nd = 150;
        int ld = 300;
        short[] bits = tiedHalfs(r, type, nd, ld, dim, 70, 200, 3, 250, 1);
        int[] lengths = raggedLengths(r, nd, ld, 3);
        lengths[4] = 129;
        TokenBatch d = TokenBatch.ofHalfs(type, bits, nd, ld, dim).withLengths(lengths);
        int[] queryLengths = new int[19];
        for (int i = 0; i < queryLengths.length; i++) {
          queryLengths[i] = 1 + r.rnd.nextInt(32);
        }
        queryLengths[5] = 0;
        queryLengths[6] = 32;
        TokenBatch q = r.padded(type, 19, 32, dim, 1).withLengths(queryLengths);
        String where = "wgmma_ws_q8 " + type + " d=" + dim + " (" + r + ")";
        float[][] all = assertAllPairsMatchTheReference(warpSpecializedGroups, q, d, where);
        TrainingScores ts = warpSpecializedGroups.scoresForTraining(q, d);
        for (int i = 0; i < q.size(); i++) {
          assertEquals(Backend.EMPTY_DOCUMENT_SCORE, all[i][1], where + " empty document");
          boolean anyValid = false;
          for (int s = 0; s < q.length(i); s++) {
            anyValid |= q.isValid(i, s);
          }
          if (anyValid) {
            assertTrue(Float.isNaN(all[i][3]), where + " NaN reaches the score of query " + i);
          } else {
            assertEquals(0f, all[i][3], where + " an empty query scores 0");
          }
          for (int s = 0; s < q.length(i); s++) {
            if (q.isValid(i, s)) {
              assertNotEquals(200, ts.argmax(i * nd, s), where + " a tie goes to the lower slot, row " + s);
            }
          }
        }
        try (ResidentBatch resident = warpSpecializedGroups.upload(d)) {
          assertArrayEquals(all, warpSpecializedGroups.scores(q, resident), where + " resident documents");
          ParityTest.assertTopKIsSortedScores(warpSpecializedGroups.topK(q, resident, 7), all, 7, where);
        }
      }
    }
  }

  /** The block kernels where the wgmma kernel would run by default. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void theBlockKernelsMatchTheReference(String label, TokenBatch q, TokenBatch d, TokenBatch pd) {
    assertVariantMatchesTheReference(blockKernels, "cuda nowgmma / " + label, q, d, pd);
  }

  private static void assertVariantMatchesTheReference(MaxSim variant, String where, TokenBatch q, TokenBatch d,
      TokenBatch pd) {
    assertAllPairsMatchTheReference(variant, q, d, where);
    float[] pw = variant.pairwise(q, pd);
    float[] refPw = reference.pairwise(q, pd);
    for (int b = 0; b < q.size(); b++) {
      ParityTest.assertScore(refPw[b], pw[b], Oracle.tolerance(q, b, pd, b), where + " pairwise");
    }
  }

  /**
   * All pairs against the reference, the training forward equal to inference with valid argmax, and top-k
   * equal to sorting; returns the scores.
   */
  private static float[][] assertAllPairsMatchTheReference(TokenBatch q, TokenBatch d, String where) {
    return assertAllPairsMatchTheReference(cuda, q, d, where);
  }

  private static float[][] assertAllPairsMatchTheReference(MaxSim cuda, TokenBatch q, TokenBatch d, String where) {
    float[][] all = cuda.scores(q, d);
    ParityTest.assertClose(reference.scores(q, d), all, q, d, where + " all-pairs");
    TrainingScores ts = cuda.scoresForTraining(q, d);
    assertArrayEquals(ParityTest.flatten(all), ts.scores(), where + " training forward = inference forward");
    ParityTest.assertArgmaxIsBest(ts, q, d, where);
    ParityTest.assertTopKIsSortedScores(cuda.topK(q, d, 5), all, 5, where);
    ParityTest.assertTopKIsSortedScores(cuda.topK(q, d, 9), all, 9, where);
    return all;
  }

  /**
   * Queries over enough documents that each of the streaming kernel's warps takes several (its bulk copies on
   * sm_90 where d fills its chunks, d = 32, 64, 96 and 128; d = 100 keeps the per-thread copies; 20,000 pairs are
   * over 4 a warp on GPUs of up to 312 SMs, 10,000 up to 156): one query against packed rows of 0-40 masked tokens,
   * one of 9 tokens (one m-tile) against padded rows of random lengths, and two queries (the static split, whose warps keep a query
   * across pairs) against the padded rows, in both half types; scores of the default and the forced streaming
   * kernel, and top-k, against the reference.
   */
  @Test
  void theStreamingKernelOverManyDocumentsPerWarpMatchesTheReference() {
    RandomBatches r = new RandomBatches();
    for (DType type : new DType[] {DType.BFLOAT16, DType.FLOAT16}) {
      for (int dim : new int[] {32, 64, 96, 100, 128}) {
        TokenBatch padded = r.padded(type, 10_000, 24, dim, 2);
        TokenBatch[] queries = {r.padded(type, 1, 32, dim, 1), r.padded(type, 1, 9, dim, 0),
            r.padded(type, 2, 32, dim, 2)};
        TokenBatch[] documents = {r.packed(type, 20_000, 0, 40, dim, true), padded, padded};
        for (int i = 0; i < queries.length; i++) {
          TokenBatch q = queries[i];
          TokenBatch d = documents[i];
          String where = "many documents per warp " + type + " d=" + dim + " layout " + i + " (" + r + ")";
          float[][] want = reference.scores(q, d);
          float[][] got = cuda.scores(q, d);
          ParityTest.assertClose(want, got, q, d, "cuda / " + where);
          ParityTest.assertClose(want, streaming.scores(q, d), q, d, "cuda stream / " + where);
          ParityTest.assertTopKIsSortedScores(cuda.topK(q, d, 10), got, 10, "cuda / " + where);
        }
      }
    }
  }

  /** More queries than a CUDA grid has rows (65,535): the device top-k takes them in groups, each in its place. */
  @Test
  void topKOfMoreQueriesThanAGridHasRows() {
    RandomBatches r = new RandomBatches();
    TokenBatch q = r.padded(DType.FLOAT32, 70_000, 2, 16, 0);
    TokenBatch d = r.padded(DType.FLOAT32, 40, 6, 16, 2);
    float[][] all = cuda.scores(q, d);
    ParityTest.assertTopKIsSortedScores(cuda.topK(q, d, 3), all, 3, r + " device selection");
    ParityTest.assertTopKIsSortedScores(cuda.topK(q, d, 40), all, 40, r + " k = Nd");
  }

  /** Queries uploaded like documents: the same scores and top-k, the upload shared, and usable after close. */
  @Test
  void residentQueriesScoreLikeHostQueries() {
    RandomBatches r = new RandomBatches();
    TokenBatch q = r.padded(DType.BFLOAT16, 40, 32, 128, 1);
    TokenBatch d = r.padded(DType.BFLOAT16, 300, 200, 128, 2);
    float[][] host = cuda.scores(q, d);
    int[][] hostTop = cuda.topK(q, d, 5).indices();
    try (ResidentBatch rd = cuda.upload(d)) {
      try (ResidentBatch rq = cuda.upload(q)) {
        assertArrayEquals(host, cuda.scores(q, rd), r + " resident queries and documents");
        assertArrayEquals(host, cuda.scores(q, d), r + " resident queries, host documents");
        assertArrayEquals(hostTop, cuda.topK(q, rd, 5).indices(), r + " top-k");
      }
      assertArrayEquals(host, cuda.scores(q, rd), r + " after the queries' handle closed");
    }
  }

  /**
   * Documents too large to stage through pinned memory whole (over 256 MiB) go to the device in pieces, for a call
   * and for an upload: the reference's scores, and the same top-k either way.
   */
  @Test
  void documentsTooLargeToStageWholeScoreAsTheReference() {
    RandomBatches r = new RandomBatches();
    TokenBatch q = r.padded(DType.FLOAT32, 2, 8, 128, 1);
    TokenBatch d = r.padded(DType.FLOAT32, 2200, 240, 128, 2); // 270 MB of fp32 tokens
    float[][] host = cuda.scores(q, d);
    ParityTest.assertClose(reference.scores(q, d), host, q, d, r + " documents copied in pieces");
    int[][] top = cuda.topK(q, d, 10).indices();
    try (ResidentBatch resident = cuda.upload(d)) {
      assertArrayEquals(host, cuda.scores(q, resident), r + " uploaded in pieces");
      assertArrayEquals(top, cuda.topK(q, resident, 10).indices(), r + " top-k of the upload");
    }
  }

  @Test
  void residentDocumentsScoreLikeHostDocumentsAndFreeTheirMemory() {
    RandomBatches r = new RandomBatches();
    TokenBatch q = r.padded(DType.FLOAT32, 3, 32, 128, 0);
    TokenBatch d = r.padded(DType.BFLOAT16, 500, 300, 128, 2);
    CudaBackend backend = GpuDevices.first(cuda);
    long before = backend.allocatedBytes().held();
    float[][] host = cuda.scores(q, d);
    try (ResidentBatch resident = cuda.upload(d)) {
      assertTrue(backend.allocatedBytes().held() > before);
      assertArrayEquals(host, cuda.scores(q, resident), r.toString());
      assertArrayEquals(cuda.topK(q, d, 7).indices(), cuda.topK(q, resident, 7).indices());
      resident.close();
      assertThrows(IllegalStateException.class, () -> cuda.scores(q, resident));
    }
  }

  /**
   * The query-group kernel (4 short queries per block; forced, since the streaming kernel takes these
   * launches by default) and, with the same inputs, the default choice.
   */
  @Test
  void queryGroupsMatchTheReference() {
    try (MaxSim groups = withVariant("groups")) {
      RandomBatches r = new RandomBatches();
      for (DType type : new DType[] {DType.BFLOAT16, DType.FLOAT16}) {
        TokenBatch q = r.padded(type, 5, 32, 64, 1); // 5 queries: the second group is partial
        TokenBatch d = r.packed(type, 600, 0, 30, 64, true); // empty and masked documents included
        assertAllPairsMatchTheReference(groups, q, d, "query groups " + type + " (" + r + ")");
        assertAllPairsMatchTheReference(q, d, "default kernel " + type + " (" + r + ")");
      }
    }
  }

  /**
   * Few pairs of long documents are split along Ld and merged: ragged lengths (empty, shorter than a slice, one
   * token), a NaN in a late slice, and ties in different slices (the lower slot wins).
   */
  @Test
  void splitDocumentsMatchTheReferenceAndKeepTiesAndNaN() {
    splitDocumentsCheck(cuda, "pairs");
  }

  /** The split-Ld case (long ragged documents, ties far apart, NaN late) on the unsplit streaming kernel. */
  @Test
  void theStreamingKernelKeepsTiesAndNaNOnLongDocuments() {
    splitDocumentsCheck(streaming, "streaming, unsplit");
  }

  /** The same on the wgmma kernel (sm_90), split along Ld there too. */
  @Test
  void theWarpgroupKernelKeepsTiesAndNaNOnSplitDocuments() {
    splitDocumentsCheck(warpgroups, "wgmma");
  }

  /**
   * Queries of several passes of rows (Lq = 300: 2 passes of 256 on the warp-specialized kernel by default,
   * 3 of 128 when forced narrow or on the wgmma kernel, spread over blocks there or serial when forced): ties
   * go to the lower slot in every pass, NaN reaches the score, empty and one-token documents, ragged queries
   * with masked rows.
   */
  @Test
  void longQueriesKeepTiesAndNaNWithTheirPassesSplitOrSerial() {
    RandomBatches r = new RandomBatches();
    int nd = 300;
    int ld = 200;
    int dim = 64;
    DType type = DType.BFLOAT16;
    short[] bits = tiedHalfs(r, type, nd, ld, dim, 50, 150, 4, 120, 7);
    TokenBatch d = TokenBatch.ofHalfs(type, bits, nd, ld, dim).withLengths(raggedLengths(r, nd, ld, 4));
    TokenBatch q = r.padded(type, 2, 300, dim, 1).withLengths(new int[] {300, 170});
    for (MaxSim variant : new MaxSim[] {cuda, warpSpecializedNarrow, warpgroups, serialPasses}) {
      String where = (variant == cuda ? "default" : variant == warpSpecializedNarrow ? "wgmma_ws_r128"
          : variant == warpgroups ? "wgmma, split passes" : "wgmma, serial passes") + " Lq=300 (" + r + ")";
      float[][] all = assertAllPairsMatchTheReference(variant, q, d, where);
      TrainingScores ts = variant.scoresForTraining(q, d);
      for (int i = 0; i < 2; i++) {
        assertTrue(Float.isNaN(all[i][4]), where + " NaN reaches the score");
        assertEquals(Backend.EMPTY_DOCUMENT_SCORE, all[i][1], where + " empty document");
        for (int s = 0; s < q.length(i); s++) {
          if (q.isValid(i, s)) {
            assertNotEquals(150, ts.argmax(i * nd, s), where + " a tie goes to the lower slot, row " + s);
          }
        }
      }
    }
  }

  /**
   * Random halves for {@code nd} documents of {@code ld} tokens: in document 0 token {@code tie} repeats token
   * {@code tiedWith} exactly (a tie in every row), and document {@code nanDoc} has a NaN at token {@code nanToken},
   * dimension {@code nanDim}.
   */
  private static short[] tiedHalfs(RandomBatches r, DType type, int nd, int ld, int dim, int tiedWith, int tie,
      int nanDoc, int nanToken, int nanDim) {
    short[] bits = r.halfs(type, nd * ld * dim);
    System.arraycopy(bits, tiedWith * dim, bits, tie * dim, dim);
    bits[(nanDoc * ld + nanToken) * dim + nanDim] = type == DType.BFLOAT16 ? (short) 0x7fc0 : (short) 0x7e00;
    return bits;
  }

  /** Random lengths 1..ld, with documents 0 and {@code fullDoc} whole, 1 empty and 2 of one token. */
  private static int[] raggedLengths(RandomBatches r, int nd, int ld, int fullDoc) {
    int[] lengths = new int[nd];
    for (int j = 0; j < nd; j++) {
      lengths[j] = 1 + r.rnd.nextInt(ld);
    }
    lengths[0] = ld;
    lengths[1] = 0;
    lengths[2] = 1;
    lengths[fullDoc] = ld;
    return lengths;
  }

  private static void splitDocumentsCheck(MaxSim cuda, String kernels) {
    RandomBatches r = new RandomBatches();
    int ld = 8192;
    int dim = 32;
    for (int queries : new int[] {1, 8}) {
      for (DType type : new DType[] {DType.BFLOAT16, DType.FLOAT16}) {
        int nd = 20;
        short[] bits = r.halfs(type, nd * ld * dim);
        // document 0: tiny tokens, V at 5000 and 7000, -V at 5500 and 7500: each tie spans two slices at every
        // slice size chosen here (512 or 1216 tokens)
        for (int e = 0; e < ld * dim; e++) {
          bits[e] = type.narrow(type.widen(bits[e]) * 1e-3f);
        }
        for (int k = 0; k < dim; k++) {
          short v = type.narrow(4f + k % 3);
          short minus = (short) (v ^ 0x8000);
          bits[5000 * dim + k] = v;
          bits[7000 * dim + k] = v;
          bits[5500 * dim + k] = minus;
          bits[7500 * dim + k] = minus;
        }
        bits[(4 * ld + 7000) * dim + 3] = type == DType.BFLOAT16 ? (short) 0x7fc0 : (short) 0x7e00; // NaN
        int[] lengths = new int[nd];
        for (int j = 0; j < nd; j++) {
          lengths[j] = r.rnd.nextInt(ld + 1);
        }
        lengths[0] = ld;
        lengths[1] = 0;
        lengths[2] = 1;
        lengths[3] = 600;
        lengths[4] = ld;
        TokenBatch d = TokenBatch.ofHalfs(type, bits, nd, ld, dim).withLengths(lengths);
        TokenBatch q = r.padded(type, queries, 32, dim, 1);
        String where = "split-Ld " + kernels + " Nq=" + queries + " " + type + " (" + r + ")";
        assertAllPairsMatchTheReference(cuda, q, d, where);
        TrainingScores ts = cuda.scoresForTraining(q, d);
        TrainingScores expected = reference.scoresForTraining(q, d);
        for (int i = 0; i < queries; i++) {
          assertTrue(Float.isNaN(ts.scoreMatrix()[i][4]), where + " NaN in slice 13 reaches the score");
          // a planted tie wins a row unless the row's dot product with it is near 0 (the reference says which)
          int ties = 0;
          for (int s = 0; s < 32; s++) {
            int want = expected.argmax(i * nd, s);
            if (q.isValid(i, s) && (want == 5000 || want == 5500)) {
              ties++;
              assertEquals(want, ts.argmax(i * nd, s), where + " tie goes to the lower slot");
            }
          }
          assertTrue(ties > 0, where + " some row is won by a planted tie");
        }
      }
    }
  }

  @Test
  void uploadingOneBatchTwiceSharesItAndClosingInAnyOrderFreesIt() {
    RandomBatches r = new RandomBatches();
    TokenBatch q = r.padded(DType.BFLOAT16, 2, 16, 64, 0);
    TokenBatch d = r.padded(DType.BFLOAT16, 50, 40, 64, 0);
    CudaBackend backend = GpuDevices.first(cuda);
    long before = backend.allocatedBytes().held();
    ResidentBatch first = cuda.upload(d);
    long once = backend.allocatedBytes().held();
    ResidentBatch second = cuda.upload(d);
    assertEquals(once, backend.allocatedBytes().held(), "the second upload shares the first");
    first.close();
    assertArrayEquals(cuda.scores(q, d), cuda.scores(q, second), "still resident for the second holder");
    second.close();
    assertEquals(before, backend.allocatedBytes().held(), "freed with the last holder");

    MaxSim other = MaxSim.builder().backend("cuda").build();
    ResidentBatch outlives = other.upload(d);
    other.close();
    outlives.close(); // after its MaxSim: quiet, nothing left to free
  }

  @Test
  void tenThousandSmallCallsLeaveDeviceMemoryWhereItStarted() {
    RandomBatches r = new RandomBatches();
    TokenBatch q = r.padded(DType.FLOAT16, 2, 8, 32, 1);
    TokenBatch d = r.packed(DType.BFLOAT16, 5, 1, 20, 32, true);
    cuda.scores(q, d); // scratch buffers reach their size
    CudaBackend backend = GpuDevices.first(cuda);
    long held = backend.allocatedBytes().held();
    long free = backend.deviceFreeBytes();
    for (int i = 0; i < 10_000; i++) {
      cuda.scores(q, d);
    }
    assertEquals(held, backend.allocatedBytes().held(), "bytes held by the backend");
    assertEquals(free, backend.deviceFreeBytes(), "driver's free device memory");
  }

  /**
   * Top-k selected on the device (several score blocks, several reduction passes) equals sorting the full
   * score matrix: higher score first, ties by lower index, NaN first; k beyond the device limit too.
   */
  @Test
  void topKOnTheDeviceEqualsSortingAtScale() {
    RandomBatches r = new RandomBatches();
    int nd = 200_000;
    float[] docs = r.floats(nd * 4 * 16);
    for (int j = 1000; j < 1010; j++) { // exact ties: documents 1000..1009 copy document 7
      System.arraycopy(docs, 7 * 4 * 16, docs, j * 4 * 16, 4 * 16);
    }
    docs[123_456 * 4 * 16] = Float.NaN; // a corrupt document ranks first, never hidden
    short[] bits = new short[docs.length];
    for (int i = 0; i < bits.length; i++) {
      bits[i] = DType.BFLOAT16.narrow(docs[i]);
    }
    TokenBatch d = TokenBatch.ofHalfs(DType.BFLOAT16, bits, nd, 4, 16);
    for (int nq : new int[] {1, 37}) {
      TokenBatch q = r.padded(DType.BFLOAT16, nq, 8, 16, 0);
      float[][] all = cuda.scores(q, d);
      for (int k : new int[] {1, 10, 100, 512, 600}) {
        TopK top = cuda.topK(q, d, k);
        ParityTest.assertTopKIsSortedScores(top, all, k, r + " nq=" + nq + " k=" + k);
        assertTrue(Float.isNaN(top.scores()[0][0]) && top.indices()[0][0] == 123_456, "NaN document first");
      }
    }
  }

  /**
   * NaN scores come back as {@link Float#NaN}'s bits (the GPU's own NaN is another pattern): scores of one and of
   * several rows, pairwise, top-k selected on the device and merged on the host, the training forward and a loss step
   * (its scores, and its loss as {@link Double#NaN}).
   */
  @Test
  void aNaNScoreComesBackAsFloatNaN() {
    int nd = 700;
    float[] docs = new float[nd * 2 * 4];
    java.util.Arrays.fill(docs, 0.5f);
    docs[3 * 8] = Float.NaN;
    docs[5 * 8 + 4] = Float.POSITIVE_INFINITY;
    docs[5 * 8 + 5] = Float.NEGATIVE_INFINITY;
    TokenBatch d = TokenBatch.ofFloats(docs, nd, 2, 4);
    int nan = Float.floatToRawIntBits(Float.NaN);
    for (int nq : new int[] {1, 2}) {
      float[] q = new float[nq * 4];
      java.util.Arrays.fill(q, 1f);
      TokenBatch queries = TokenBatch.ofFloats(q, nq, 1, 4);
      float[][] all = cuda.scores(queries, d);
      for (int i = 0; i < nq; i++) {
        for (int j : new int[] {3, 5}) {
          assertEquals(nan, Float.floatToRawIntBits(all[i][j]), nq + " queries, document " + j);
        }
      }
      for (int k : new int[] {2, 600}) {
        TopK top = cuda.topK(queries, d, k);
        assertEquals(nan, Float.floatToRawIntBits(top.scores()[0][1]), "top-" + k);
      }
      float[] training = cuda.scoresForTraining(queries, d).scores();
      assertEquals(nan, Float.floatToRawIntBits(training[3]), nq + " queries, training forward");
    }
    TokenBatch one = TokenBatch.ofFloats(java.util.Arrays.copyOfRange(docs, 3 * 8, 4 * 8), 1, 2, 4);
    TokenBatch oneQuery = TokenBatch.ofFloats(new float[] {1, 1, 1, 1}, 1, 1, 4);
    assertEquals(nan, Float.floatToRawIntBits(cuda.pairwise(oneQuery, one)[0]), "pairwise");
    TrainingStep step = cuda.lossCandidates(oneQuery, d, nd, Loss.contrastive(1f));
    assertEquals(nan, Float.floatToRawIntBits(step.scores()[0][3]), "loss step's score");
    assertEquals(Double.doubleToRawLongBits(Double.NaN), Double.doubleToRawLongBits(step.loss()), "loss");
  }

  /**
   * A score that rounds to zero is +0, as on the CPU, and documents tied at zero rank by index: queries of 32 tokens
   * whose every product underflows to -0 (a forward's butterfly sum of -0 maxima is -0), against fp32, bf16 and int8
   * documents, through scores, top-k selected on the device, candidates and the training forward.
   */
  @Test
  void aScoreThatRoundsToZeroComesBackAsPositiveZero() {
    int nd = 700;
    int lq = 32;
    float[] docs = new float[nd * 2 * 4];
    for (int i = 0; i < docs.length; i++) {
      docs[i] = i % 8 < 4 ? -1e-30f : -2e-30f;
    }
    short[] bf16 = new short[docs.length];
    for (int i = 0; i < docs.length; i++) {
      bf16[i] = DType.BFLOAT16.narrow(docs[i]);
    }
    float[] q = new float[2 * lq * 4];
    for (int i = 0; i < q.length; i++) {
      q[i] = (1 + i % 3) * 1e-30f;
    }
    TokenBatch queries = TokenBatch.ofFloats(q, 2, lq, 4);
    TokenBatch oneQuery = TokenBatch.ofFloats(java.util.Arrays.copyOf(q, lq * 4), 1, lq, 4);
    TokenBatch fp32 = TokenBatch.ofFloats(docs, nd, 2, 4);
    for (TokenBatch d : new TokenBatch[] {fp32, TokenBatch.ofHalfs(DType.BFLOAT16, bf16, nd, 2, 4),
        fp32.quantize(DType.INT8)}) {
      String where = d.dtype().toString();
      for (float[] row : cuda.scores(queries, d)) {
        for (int j = 0; j < nd; j++) {
          assertEquals(0, Float.floatToRawIntBits(row[j]), where + ", document " + j);
        }
      }
      assertEquals(0, Float.floatToRawIntBits(cuda.scores(oneQuery, d)[0][9]), where + ", one query");
      for (int k : new int[] {2, 600}) {
        TopK top = cuda.topK(queries, d, k);
        assertEquals(0, Float.floatToRawIntBits(top.scores()[1][1]), where + ", top-" + k);
        assertArrayEquals(new int[] {0, 1}, java.util.Arrays.copyOf(top.indices()[1], 2), where + ", top-" + k
            + ": ties at zero by index");
      }
      float[] candidates = cuda.candidates(queries, d, nd / 2)[1];
      assertEquals(0, Float.floatToRawIntBits(candidates[7]), where + ", candidates");
      if (!d.dtype().isQuantized()) {
        assertEquals(0, Float.floatToRawIntBits(cuda.scoresForTraining(queries, d).scores()[5]), where + ", training");
      }
    }
  }

  @Test
  void concurrentCallersAndAsyncCallsGetTheirOwnScores() throws Exception {
    RandomBatches r = new RandomBatches();
    TokenBatch d = r.padded(DType.BFLOAT16, 200, 64, 128, 2);
    java.util.List<TokenBatch> queries = new java.util.ArrayList<>();
    for (int i = 0; i < 8; i++) {
      queries.add(r.padded(DType.BFLOAT16, 2, 32, 128, 0));
    }
    float[][][] expected = new float[8][][];
    for (int i = 0; i < 8; i++) {
      expected[i] = cuda.scores(queries.get(i), d);
    }
    try (ResidentBatch resident = cuda.upload(d)) {
      java.util.List<java.util.concurrent.CompletableFuture<float[][]>> futures = new java.util.ArrayList<>();
      java.util.List<Thread> threads = new java.util.ArrayList<>();
      float[][][] fromThreads = new float[8][][];
      for (int i = 0; i < 8; i++) {
        int k = i;
        futures.add(cuda.scoresAsync(queries.get(i), resident));
        Thread t = new Thread(() -> fromThreads[k] = cuda.scores(queries.get(k), resident));
        threads.add(t);
        t.start();
      }
      for (int i = 0; i < 8; i++) {
        threads.get(i).join();
        assertArrayEquals(expected[i], futures.get(i).get(), "async " + i);
        assertArrayEquals(expected[i], fromThreads[i], "thread " + i);
      }
    }
  }

  /**
   * More asynchronous calls than the device keeps in flight (8), of several kinds, submitted back to back:
   * each completes, in order, with its own scores, bit for bit those of the synchronous call; a callback
   * that submits a call while every slot is taken does not hang; closing with calls in flight completes
   * them.
   */
  @Test
  void pipelinedAsyncCallsEachGetTheirOwnScores() throws Exception {
    RandomBatches r = new RandomBatches();
    TokenBatch d = r.packed(DType.BFLOAT16, 700, 1, 300, 128, true);
    TokenBatch d32 = r.padded(DType.FLOAT32, 50, 20, 33, 1);
    int calls = 40;
    TokenBatch[] queries = new TokenBatch[calls];
    float[][][] expected = new float[calls][][];
    for (int i = 0; i < calls; i++) {
      queries[i] = i % 5 == 4 ? r.padded(DType.FLOAT32, 3, 9, 33, 1) : r.padded(DType.BFLOAT16, 1 + i % 3, 32, 128, i % 2);
      expected[i] = cuda.scores(queries[i], queries[i].dtype() == DType.FLOAT32 ? d32 : d);
    }
    MaxSim m = MaxSim.builder().backend("cuda").build();
    java.util.List<java.util.concurrent.CompletableFuture<float[][]>> futures = new java.util.ArrayList<>();
    try (ResidentBatch resident = m.upload(d); ResidentBatch resident32 = m.upload(d32);
        ResidentBatch rq = m.upload(queries[3])) {
      java.util.concurrent.CompletableFuture<float[][]> chained = null;
      for (int i = 0; i < calls; i++) {
        futures.add(queries[i].dtype() == DType.FLOAT32 ? m.scoresAsync(queries[i], resident32)
            : i % 7 == 6 ? m.scoresAsync(queries[i], d) : m.scoresAsync(queries[i], resident));
        if (i == 0) { // its callback submits while this thread fills every slot
          chained = futures.get(0).thenCompose(first -> m.scoresAsync(queries[1], resident));
        }
      }
      for (int i = 0; i < calls; i++) {
        float[][] got = futures.get(i).get(60, java.util.concurrent.TimeUnit.SECONDS);
        for (int row = 0; row < got.length; row++) {
          assertArrayEquals(expected[i][row], got[row], "async call " + i + " row " + row + " " + r);
        }
      }
      assertArrayEquals(expected[1][0], chained.get(60, java.util.concurrent.TimeUnit.SECONDS)[0], "chained call");
      for (int i = 0; i < calls; i++) {
        futures.set(i, m.scoresAsync(queries[i], queries[i].dtype() == DType.FLOAT32 ? resident32 : resident));
      }
    }
    m.close(); // the last 40 calls were in flight when their documents closed
    for (int i = 0; i < calls; i++) {
      assertArrayEquals(expected[i][0], futures.get(i).get(10, java.util.concurrent.TimeUnit.SECONDS)[0],
          "call " + i + ", completed by close");
    }
  }

  /**
   * Calls complete in submission order, an empty one too: it has no device work, and completed at once it overtook
   * the calls in flight before it.
   */
  @Test
  void anEmptyAsyncCallCompletesAfterTheCallsBeforeIt() throws Exception {
    RandomBatches r = new RandomBatches();
    TokenBatch d = r.packed(DType.BFLOAT16, 2000, 1, 300, 128, true);
    TokenBatch q = r.padded(DType.BFLOAT16, 32, 32, 128, 0);
    TokenBatch noDocuments = TokenBatch.ofHalfs(DType.BFLOAT16, new short[0], 0, 1, 128);
    try (MaxSim m = MaxSim.builder().backend("cuda").build()) {
      java.util.List<java.util.concurrent.CompletableFuture<float[][]>> before = new java.util.ArrayList<>();
      for (int i = 0; i < 4; i++) {
        before.add(m.scoresAsync(q, d));
      }
      float[][] empty = m.scoresAsync(q, noDocuments).get(60, java.util.concurrent.TimeUnit.SECONDS);
      for (int i = 0; i < before.size(); i++) {
        assertTrue(before.get(i).isDone(), "call " + i + " was still running when the empty call after it completed");
      }
      assertEquals(32, empty.length);
      assertEquals(0, empty[0].length);
    }
  }

  @Test
  void useAfterCloseIsIllegalStateNotACrash() {
    MaxSim m = MaxSim.builder().backend("cuda").build();
    TokenBatch q = new RandomBatches().padded(DType.FLOAT32, 1, 2, 4, 0);
    m.scores(q, q);
    m.close();
    assertThrows(IllegalStateException.class, () -> m.scores(q, q));
  }
}
