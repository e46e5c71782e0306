package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Compressed tokens (int8, fp8 e4m3, 1-bit) on the CUDA backend against the float64 reference on their
 * dequantized values: every pairing of a compressed side with every other type, on the tensor-core kernels
 * for compressed documents (d a multiple of 16, or 32 for 1-bit), the wgmma kernel for int8 on both sides
 * (sm_90) and the FFMA kernel (the rest: d = 1, 3, 33, 127, 513, fp32 queries), over one-token, ragged,
 * masked, all-masked and empty rows, queries
 * of several 32-row passes, negative and zero scales; all pairs, pairwise, candidates, top-k, resident
 * documents and calls in flight. Tolerance: {@link Oracle#tolerance}, the fp32 accumulation bound on the
 * dequantized values (every kernel multiplies exact values and accumulates in fp32).
 */
@GpuTest
class CudaCompressedTest {
  private static final DType[] COMPRESSED = {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY};
  private static MaxSim reference;
  private static MaxSim cuda;
  /**
   * The compressed-document kernels forced wherever they apply, so each is checked on every case whichever the
   * rules pick: the bulk-copy kernel (rule 20, sm_90) and the mma.sync kernel (rule 18), and the bulk-copy kernel
   * reading 1-bit rows of d <= 64 as 128 dims (the entries d = 65-120 take) and 8-bit rows of 16-48 dims as 64.
   */
  private static final String[] FORCED = {"quant_tma", "quant_mma", "quant_tma_bf16", "quant_tma_c2", "quant_tma_k4"};
  private static MaxSim[] forced;

  @BeforeAll
  static void open() {
    reference = MaxSim.builder().backend("reference").build();
    cuda = MaxSim.builder().backend("cuda").build();
    forced = new MaxSim[FORCED.length];
    for (int i = 0; i < FORCED.length; i++) {
      forced[i] = CudaParityTest.withVariant(FORCED[i]);
    }
  }

  @AfterAll
  static void close() {
    if (cuda != null) {
      cuda.close();
      reference.close();
      for (MaxSim m : forced) {
        m.close();
      }
    }
  }

  /** A batch of {@code type}: random floats, quantized where compressed; masking as RandomBatches.padded. */
  static TokenBatch batch(RandomBatches r, DType type, int n, int l, int d, int masking) {
    TokenBatch floats = r.padded(DType.FLOAT32, n, l, d, masking);
    if (type == DType.FLOAT32) {
      return floats;
    }
    TokenBatch b = type.isQuantized() ? TokenBatch.ofFloats(r.floats(n * l * d), n, l, d).quantize(type)
        : TokenBatch.ofHalfs(type, r.halfs(type, n * l * d), n, l, d);
    return masking == 0 ? b : sameRows(b, floats);
  }

  /** {@code b} with the mask or lengths of {@code like}. */
  private static TokenBatch sameRows(TokenBatch b, TokenBatch like) {
    boolean[] mask = new boolean[like.size() * like.maxLength()];
    int[] lengths = new int[like.size()];
    boolean masked = false;
    for (int i = 0; i < like.size(); i++) {
      lengths[i] = like.length(i);
      for (int t = 0; t < like.length(i); t++) {
        mask[i * like.maxLength() + t] = like.isValid(i, t);
        masked |= !like.isValid(i, t);
      }
    }
    TokenBatch out = b.withLengths(lengths);
    return masked ? out.withMask(mask) : out;
  }

  static Stream<Arguments> cases() {
    RandomBatches r = new RandomBatches();
    List<Arguments> cases = new ArrayList<>();
    DType[] queryTypes = {DType.BFLOAT16, DType.FLOAT16, DType.FLOAT32, DType.INT8, DType.FLOAT8_E4M3, DType.BINARY};
    // {d, Lq, Ld}: the tensor-core kernels' dims, the FFMA kernel's awkward ones, then wider d and longer
    // queries (on sm_90: several stages per tile, several passes of query rows)
    int[][] shapes = {{128, 32, 300}, {64, 17, 40}, {32, 1, 1}, {48, 33, 9}, {96, 70, 64}, {16, 5, 130}, {1, 4, 7},
        {3, 9, 5}, {33, 12, 20}, {127, 6, 11}, {513, 3, 4}, {256, 140, 70}, {512, 40, 33}, {1024, 8, 65},
        {48, 20, 77}, {112, 32, 129}};
    for (DType dt : COMPRESSED) {
      for (DType qt : queryTypes) {
        int[] s = shapes[Math.floorMod(dt.ordinal() * 7 + qt.ordinal() * 3, 6)]; // a tensor-core shape each
        cases.add(Arguments.of(qt + " x " + dt + " d=" + s[0] + " Lq=" + s[1] + " Ld=" + s[2] + " (" + r + ")",
            batch(r, qt, 3, s[1], s[0], 1), batch(r, dt, 9, s[2], s[0], 2), batch(r, dt, 3, s[2], s[0], 0)));
      }
      for (int[] s : shapes) {
        cases.add(Arguments.of("BFLOAT16 x " + dt + " d=" + s[0] + " Lq=" + s[1] + " Ld=" + s[2] + " (" + r + ")",
            batch(r, DType.BFLOAT16, 3, s[1], s[0], 2), batch(r, dt, 9, s[2], s[0], 1),
            batch(r, dt, 3, s[2], s[0], 2)));
      }
      // int8 and e4m3 on both sides (int8 on sm_90: rule 19's and rule 20's kernels on the integer tensor cores):
      // 32, 64 and 128 rows per pass, several passes, narrow and wide d, rows read in one or two 64-dim chunks
      if (dt != DType.BINARY) {
        int[][] eightBit = {{128, 32, 300}, {16, 1, 1}, {48, 17, 130}, {64, 50, 64}, {128, 100, 257}, {256, 140, 70},
            {1024, 8, 65}, {64, 20, 100}, {80, 7, 65}, {112, 32, 129}};
        for (int[] s : eightBit) {
          cases.add(Arguments.of(dt + " x " + dt + " d=" + s[0] + " Lq=" + s[1] + " Ld=" + s[2] + " (" + r + ")",
              batch(r, dt, 3, s[1], s[0], 1), batch(r, dt, 9, s[2], s[0], 2), batch(r, dt, 3, s[2], s[0], 0)));
        }
      }
      // compressed queries against uncompressed documents
      for (DType docs : new DType[] {DType.BFLOAT16, DType.FLOAT32}) {
        cases.add(Arguments.of(dt + " x " + docs + " d=40 (" + r + ")", batch(r, dt, 3, 20, 40, 1),
            batch(r, docs, 9, 30, 40, 2), batch(r, docs, 3, 30, 40, 0)));
      }
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void everyCallMatchesTheReference(String label, TokenBatch q, TokenBatch d, TokenBatch pd) {
    String where = "cuda / " + label;
    float[][] all = cuda.scores(q, d);
    ParityTest.assertClose(reference.scores(q, d), all, q, d, where + " all-pairs");
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
    ParityTest.assertTopKIsSortedScores(cuda.topK(q, d, 5), all, 5, where);
    for (int i = 0; i < FORCED.length; i++) {
      String kernel = where + " (" + FORCED[i] + " where it applies)";
      ParityTest.assertClose(reference.scores(q, d), forced[i].scores(q, d), q, d, kernel + " all-pairs");
      float[] forcedPw = forced[i].pairwise(q, pd);
      for (int b = 0; b < q.size(); b++) {
        ParityTest.assertScore(refPw[b], forcedPw[b], Oracle.tolerance(q, b, pd, b), kernel + " pairwise");
      }
    }
    try (ResidentBatch rd = cuda.upload(d)) {
      assertArrayEquals(all, cuda.scores(q, rd), where + " resident documents");
      assertArrayEquals(all, cuda.scoresAsync(q, rd).join(), where + " in flight");
    }
  }

  /** The rules' kernels and each forced one score {@code q} x {@code d} as the reference does. */
  private static void assertEveryKernelClose(TokenBatch q, TokenBatch d, String where) {
    float[][] expected = reference.scores(q, d);
    ParityTest.assertClose(expected, cuda.scores(q, d), q, d, where);
    for (int i = 0; i < FORCED.length; i++) {
      ParityTest.assertClose(expected, forced[i].scores(q, d), q, d, where + " (" + FORCED[i] + ")");
    }
  }

  private static byte[] randomBytes(RandomBatches r, int n) {
    byte[] data = new byte[n];
    for (int i = 0; i < n; i++) {
      data[i] = (byte) r.rnd.nextInt(256);
    }
    return data;
  }

  /** Random bytes of {@code type} and scales of either sign or zero, a token's scale per token. */
  private static TokenBatch signedScales(RandomBatches r, DType type, int n, int l, int dim) {
    byte[] data = new byte[Math.toIntExact(n * l * type.bytesPerToken(dim))];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) r.rnd.nextInt(256);
    }
    float[] scales = new float[n * l];
    for (int i = 0; i < scales.length; i++) {
      int kind = r.rnd.nextInt(4);
      scales[i] = kind == 0 ? 0f : kind == 1 ? -(float) r.rnd.nextDouble() : (float) r.rnd.nextDouble() * 0.1f;
    }
    return TokenBatch.ofBytes(type, data, scales, n, l, dim);
  }

  /**
   * 1-bit queries against 1-bit documents, both with scales of either sign or zero: each dot product times the
   * pair's scale product before the max, so a negative query scale picks the max of the scaled products (narrow
   * tokens too, ragged queries and documents; the bulk-copy kernel at d up to 128 with 32 query tokens or fewer).
   */
  @Test
  void oneBitQueriesWithScalesOfEitherSignScoreTheScaledProducts() {
    RandomBatches r = new RandomBatches();
    for (int dim : new int[] {128, 48, 33, 1}) {
      for (int lq : new int[] {1, 7, 32}) {
        TokenBatch q = signedScales(r, DType.BINARY, 3, lq, dim).withLengths(new int[] {lq, Math.max(1, lq / 2), lq});
        TokenBatch d = signedScales(r, DType.BINARY, 12, 70, dim)
            .withLengths(new int[] {70, 1, 64, 65, 0, 70, 33, 70, 2, 70, 69, 70});
        assertEveryKernelClose(q, d, "BINARY x BINARY d=" + dim + " Lq=" + lq + " signed scales (" + r + ")");
      }
    }
  }

  /**
   * Scale products past fp32's largest (3e19 x 3e19), for 1-bit, int8 and e4m3 on both sides: a dot product of 0
   * still scores 0, where the product of 0 and an infinite scale product reads NaN, and the others an infinity of
   * their sign. One query token in each query carries the huge scale, so no score sums infinities of both signs;
   * d small or even, so dot products of 0 are common, on every kernel, including the bulk-copy kernel's fold that
   * takes care only where a tile's products can overflow.
   */
  @Test
  void scaleProductsPastFp32KeepZeroDotProductsAtZero() {
    RandomBatches r = new RandomBatches();
    for (DType type : COMPRESSED) {
      for (int dim : type == DType.BINARY ? new int[] {128, 48, 2} : new int[] {128, 16}) {
        int nq = 3;
        int lq = 5;
        float[] qScales = new float[nq * lq];
        for (int i = 0; i < qScales.length; i++) {
          qScales[i] = i % lq == 2 ? (i / lq % 2 == 0 ? 3e19f : -3e19f) : 1f + i;
        }
        int nd = 8;
        int ld = 40;
        float[] dScales = new float[nd * ld];
        for (int i = 0; i < dScales.length; i++) {
          int kind = r.rnd.nextInt(4);
          dScales[i] = kind == 0 ? 3e19f : kind == 1 ? -3e19f : kind == 2 ? 0f : 0.5f;
        }
        int bytes = Math.toIntExact(type.bytesPerToken(dim));
        TokenBatch qs = TokenBatch.ofBytes(type, sparseBytes(r, type, nq * lq * bytes), qScales, nq, lq, dim);
        TokenBatch ds = TokenBatch.ofBytes(type, sparseBytes(r, type, nd * ld * bytes), dScales, nd, ld, dim);
        assertEveryKernelClose(qs, ds, type + " x " + type + " d=" + dim + " scale products past fp32 (" + r + ")");
      }
    }
  }

  /** Random bytes of {@code type}, 8-bit ones mostly zero (so that dot products of 0 are common), no fp8 NaN. */
  private static byte[] sparseBytes(RandomBatches r, DType type, int n) {
    if (type == DType.BINARY) {
      return randomBytes(r, n);
    }
    byte[] data = new byte[n];
    for (int i = 0; i < n; i++) {
      int v = r.rnd.nextInt(3) == 0 ? r.rnd.nextInt(1, 8) : 0;
      data[i] = (byte) (type == DType.INT8 ? (r.rnd.nextBoolean() ? -v : v) : v == 0 ? 0 : 0x30 + v
          | (r.rnd.nextBoolean() ? 0x80 : 0));
    }
    return data;
  }

  /**
   * Scales as given: negative (a max of the scaled products, not of the raw ones), zero, and mixed across
   * the tokens of one document, on every kernel (d = 128 and 256, tensor cores; d = 33, FFMA), every byte value of
   * each type (fp8: but its NaNs).
   */
  @Test
  void negativeAndZeroScalesScoreTheScaledProducts() {
    RandomBatches r = new RandomBatches();
    for (DType type : COMPRESSED) {
      for (int dim : new int[] {128, 256, 33}) {
        int n = 20;
        int l = 50;
        int bytesPerToken = Math.toIntExact(type.bytesPerToken(dim));
        byte[] data = new byte[n * l * bytesPerToken];
        for (int i = 0; i < data.length; i++) {
          data[i] = (byte) (type == DType.FLOAT8_E4M3 ? r.rnd.nextInt(0x7f) | (r.rnd.nextBoolean() ? 0x80 : 0)
              : r.rnd.nextInt(256));
        }
        float[] scales = new float[n * l];
        for (int i = 0; i < scales.length; i++) {
          int kind = r.rnd.nextInt(4);
          scales[i] = kind == 0 ? 0f : kind == 1 ? -(float) r.rnd.nextDouble() : (float) r.rnd.nextDouble() * 0.1f;
        }
        TokenBatch d = TokenBatch.ofBytes(type, data, scales, n, l, dim);
        for (DType qt : new DType[] {DType.BFLOAT16, DType.FLOAT16, type}) {
          for (int lq : new int[] {32, 40}) {
            TokenBatch q = batch(r, qt, 4, lq, dim, 2);
            assertEveryKernelClose(q, d, qt + " x " + type + " d=" + dim + " Lq=" + lq + " scales (" + r + ")");
          }
        }
      }
    }
  }

  /**
   * Products far below a dot product's largest (2^-10 .. 2^-18 of it) still count, as fp32 accumulation keeps
   * them: e4m3 and int8 on both sides, 33 query tokens (the wgmma kernels' launches), the largest at the first
   * dimension or elsewhere, small ones of both signs. (The fp8 tensor cores drop those below 2^-13 of the
   * running sum: 0.77% of |q||d| here, which is why e4m3 x e4m3 does not run on them.)
   */
  @Test
  void productsFarBelowTheLargestStillCount() {
    int lq = 33;
    for (DType type : new DType[] {DType.FLOAT8_E4M3, DType.INT8}) {
      // e4m3: 1.0 (0x38) and 2^-4 .. 2^-9; int8: 127 and 1 .. 8
      byte one = type == DType.INT8 ? (byte) 127 : 0x38;
      byte[] smalls = type == DType.INT8 ? new byte[] {8, 4, 2, 1}
          : new byte[] {0x18, 0x10, 0x0c, 0x08, 0x04, 0x02, 0x01};
      for (byte small : smalls) {
        for (int dim : new int[] {32, 128}) {
          byte[] q = new byte[lq * dim];
          byte[] d = new byte[2 * dim];
          java.util.Arrays.fill(q, small);
          java.util.Arrays.fill(d, small);
          for (int s = 0; s < lq; s++) {
            q[s * dim] = one;
          }
          d[0] = one;
          d[dim + 5] = one; // a second document whose large product is elsewhere
          for (int k = dim + 6; k < 2 * dim; k += 3) {
            d[k] = (byte) (type == DType.INT8 ? -small : small | 0x80); // negative ones too
          }
          TokenBatch qb = TokenBatch.ofBytes(type, q, null, 1, lq, dim);
          TokenBatch db = TokenBatch.ofBytes(type, d, null, 2, 1, dim);
          ParityTest.assertClose(reference.scores(qb, db), cuda.scores(qb, db), qb, db,
              type + " x " + type + " small=" + small + " d=" + dim);
        }
      }
    }
  }

  /** An fp8 NaN byte (0x7f or 0xff) makes its document's score NaN on every kernel, the others as the reference. */
  @Test
  void anFp8NanByteMakesTheScoreNan() {
    RandomBatches r = new RandomBatches();
    for (int dim : new int[] {64, 256, 33}) {
      for (byte nan : new byte[] {0x7f, (byte) 0xff}) {
        int n = 6;
        int l = 40;
        byte[] data = new byte[n * l * dim];
        for (int i = 0; i < data.length; i++) {
          data[i] = (byte) (r.rnd.nextInt(0x7f) | (r.rnd.nextBoolean() ? 0x80 : 0)); // every byte but the NaNs
        }
        data[(2 * l + 17) * dim + 5] = nan; // document 2
        TokenBatch d = TokenBatch.ofBytes(DType.FLOAT8_E4M3, data, null, n, l, dim);
        for (DType qt : new DType[] {DType.BFLOAT16, DType.FLOAT8_E4M3}) {
          TokenBatch q = batch(r, qt, 2, 32, dim, 0);
          float[][] s = cuda.scores(q, d);
          for (int i = 0; i < 2; i++) {
            for (int j = 0; j < n; j++) {
              assertEquals(j == 2, Float.isNaN(s[i][j]),
                  qt + " d=" + dim + " query " + i + " document " + j + ": " + s[i][j]);
            }
          }
          assertEveryKernelClose(q, d, qt + " x fp8 NaN byte d=" + dim + " (" + r + ")");
        }
      }
    }
  }

  /**
   * Documents that end on either side of a 64-token tile and of a slot (the bulk-copy kernel's units: lengths 1,
   * 63-65, 127-129, 192, 255-257, 319-321 and 513) and masked tokens inside a tile, against queries of 1, 31 and 32
   * tokens with masked rows, bf16 and fp16, one query and three, and without a mask: 1-bit documents at d = 128
   * (two words a thread, five tiles a slot) and 8-bit ones at d = 16, 32, 48 (the c1k entries, one k-step per 16
   * dims), 64 (four tiles a slot) and 128 (two), each tile
   * expanded from its slot's bytes just before its wgmmas; the last document (513 tokens) has masked tokens in every
   * tile of its slots.
   */
  @Test
  void documentsEndingAroundATileMatchTheReference() {
    RandomBatches r = new RandomBatches();
    int[] lengths = {1, 63, 64, 65, 127, 128, 129, 300, 2, 64, 192, 257, 255, 256, 319, 320, 321, 513};
    int width = 513;
    for (DType type : COMPRESSED) {
      for (int dim : type == DType.BINARY ? new int[] {128} : new int[] {16, 32, 48, 64, 128}) {
        TokenBatch floats = r.padded(DType.FLOAT32, lengths.length, width, dim, 0);
        TokenBatch d = floats.quantize(type).withLengths(lengths).withMask(maskingDocument3(lengths.length, width));
        for (DType qt : new DType[] {DType.BFLOAT16, DType.FLOAT16}) {
          for (int lq : new int[] {1, 31, 32}) {
            // one query: several all-pairs queries against 1-bit documents are rule 18's query groups, which the
            // bulk-copy kernel, forced or not, leaves to it
            for (int queries : new int[] {1, 3}) {
              TokenBatch q = batch(r, qt, queries, lq, dim, 1);
              assertEveryKernelClose(q, d, qt + " x " + type + " d=" + dim + " Nq=" + queries + " Lq=" + lq + " ("
                  + r + ")");
            }
          }
        }
        // no mask at all: whole slots skip the per-token validity test, which only this case reaches
        TokenBatch unmasked = floats.quantize(type).withLengths(lengths);
        assertEveryKernelClose(batch(r, DType.BFLOAT16, 1, 32, dim, 1), unmasked,
            "bf16 x unmasked " + type + " d=" + dim + " (" + r + ")");
      }
    }
  }

  /**
   * A mask of n rows of width tokens where document 3 (65 tokens long in these tests) and the last document have
   * every 7th token masked: in both of document 3's tiles, and in every tile of a long last document's slots.
   */
  private static boolean[] maskingDocument3(int n, int width) {
    boolean[] mask = new boolean[n * width];
    for (int i = 0; i < mask.length; i++) {
      int row = i / width;
      mask[i] = row != 3 && row != n - 1 || i % width % 7 != 0;
    }
    return mask;
  }

  /**
   * 8-bit documents wider than 128 dims (rule 20's tensor-map entries: a slot per 128-byte slice of a tile, the
   * products summed over the slices): d = 144 and 320 (a last slice mostly past d, whose columns arrive as zeros),
   * 256, 512 and 1024 (2, 4 and 8 slices), documents ending on either side of a tile with masked tokens, one and
   * three queries of 1 and 32 tokens with masked rows, bf16 and fp16.
   */
  @Test
  void documentsWiderThan128MatchTheReference() {
    RandomBatches r = new RandomBatches();
    int[] lengths = {1, 63, 64, 65, 0, 128, 129, 300, 2, 193};
    int width = 300;
    for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3}) {
      for (int dim : new int[] {144, 256, 320, 512, 1024}) {
        TokenBatch floats = r.padded(DType.FLOAT32, lengths.length, width, dim, 0);
        TokenBatch d = floats.quantize(type).withLengths(lengths).withMask(maskingDocument3(lengths.length, width));
        for (DType qt : new DType[] {DType.BFLOAT16, DType.FLOAT16}) {
          for (int lq : new int[] {1, 32}) {
            for (int queries : new int[] {1, 3}) {
              TokenBatch q = batch(r, qt, queries, lq, dim, 1);
              assertEveryKernelClose(q, d, qt + " x " + type + " d=" + dim + " Nq=" + queries + " Lq=" + lq + " ("
                  + r + ")");
            }
          }
        }
      }
    }
  }

  /**
   * Packed documents of ragged lengths with masked tokens, whose first tokens fall anywhere: within one launch the
   * bulk-copy kernel copies the scales of some tiles with one bulk copy (16-byte aligned) and of others a lane at a
   * time.
   */
  @Test
  void packedRaggedDocumentsMatchTheReference() {
    RandomBatches r = new RandomBatches();
    for (DType type : COMPRESSED) {
      for (int dim : type == DType.BINARY ? new int[] {128} : new int[] {64, 128, 320}) {
        TokenBatch d = r.packed(type, 40, 60, 200, dim, true);
        for (DType qt : new DType[] {DType.BFLOAT16, DType.FLOAT16}) {
          TokenBatch q = batch(r, qt, 1, 32, dim, 1);
          assertEveryKernelClose(q, d, qt + " x packed " + type + " d=" + dim + " (" + r + ")");
        }
      }
    }
  }

  /**
   * bf16 queries against 8-bit documents whatever the span of their values' exponents (where an fp16 operand with a
   * power-of-two scale would be exact, and where it would not), in one launch and one at a time: unit-scale
   * values, values near 2^-30 and near 2^20, a span of 40 exponents, a subnormal value, all zeros, and tokens near
   * 2^-30 beside tokens near 2^20 (a power of two each).
   */
  @Test
  void bf16QueriesOfEveryExponentSpanMatchTheReference() {
    RandomBatches r = new RandomBatches();
    int queries = 7;
    int lq = 32;
    for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3}) {
      for (int dim : new int[] {48, 128}) {
        float[] v = r.floats(queries * lq * dim);
        for (int i = 0; i < v.length; i++) {
          int query = i / (lq * dim);
          v[i] = switch (query) {
            case 1 -> Math.scalb(v[i], -30);
            case 2 -> Math.scalb(v[i], 20);
            case 3 -> i % 17 == 0 ? Math.scalb(v[i], -40) : v[i];
            case 4 -> i % (lq * dim) == 5 ? Float.MIN_NORMAL / 4 : v[i];
            case 5 -> 0f;
            case 6 -> Math.scalb(v[i], (i / dim) % 2 == 0 ? -30 : 20);
            default -> v[i];
          };
        }
        short[] bits = new short[v.length];
        for (int i = 0; i < v.length; i++) {
          bits[i] = DType.BFLOAT16.narrow(v[i]);
        }
        TokenBatch q = TokenBatch.ofHalfs(DType.BFLOAT16, bits, queries, lq, dim);
        TokenBatch d = batch(r, type, 6, 100, dim, 1);
        assertEveryKernelClose(q, d, "bf16 spans x " + type + " d=" + dim + " (" + r + ")");
        for (int i = 0; i < queries; i++) {
          TokenBatch one = TokenBatch.ofHalfs(DType.BFLOAT16,
              java.util.Arrays.copyOfRange(bits, i * lq * dim, (i + 1) * lq * dim), 1, lq, dim);
          assertEveryKernelClose(one, d, "bf16 span " + i + " x " + type + " d=" + dim + " (" + r + ")");
        }
      }
    }
  }

  /**
   * bf16 query tokens near 2^120 and near 2^-100 against 8-bit documents on the bulk-copy kernel through their fp16
   * copy (forced: the rules make it for large calls only): each token goes in times its own power of two, so dot
   * products with the stored bytes (up to 127 or 448) do not overflow where the scores of the dequantized values
   * are finite.
   */
  @Test
  void bf16QueriesFarFromOneKeepTheirScoresThroughTheFp16Copy() {
    RandomBatches r = new RandomBatches();
    for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3}) {
      for (int dim : new int[] {48, 128}) {
        for (int power : new int[] {120, -100}) {
          float[] v = r.floats(4 * dim);
          short[] bits = new short[v.length];
          for (int i = 0; i < v.length; i++) {
            bits[i] = DType.BFLOAT16.narrow(Math.scalb(v[i], power));
          }
          TokenBatch q = TokenBatch.ofHalfs(DType.BFLOAT16, bits, 1, 4, dim);
          TokenBatch d = batch(r, type, 6, 100, dim, 1);
          float[][] expected = reference.scores(q, d);
          String where = "bf16 near 2^" + power + " x " + type + " d=" + dim + " (" + r + ")";
          for (float e : expected[0]) {
            assertTrue(Float.isFinite(e), where + ": the reference " + e);
          }
          ParityTest.assertClose(expected, forced[0].scores(q, d), q, d, where + " (" + FORCED[0] + ")");
        }
      }
    }
  }

  /** Documents with no valid token score -1e9 on every kernel, beside scored ones, every call. */
  @Test
  void emptyAndAllMaskedDocumentsScoreMinusOneBillion() {
    RandomBatches r = new RandomBatches();
    for (DType type : COMPRESSED) {
      for (int dim : new int[] {128, 256, 33}) {
        TokenBatch floats = r.padded(DType.FLOAT32, 6, 20, dim, 0);
        boolean[] mask = new boolean[6 * 20];
        java.util.Arrays.fill(mask, true);
        java.util.Arrays.fill(mask, 20, 40, false); // document 1 all masked
        TokenBatch d = floats.quantize(type).withLengths(new int[] {20, 20, 0, 5, 1, 20}).withMask(mask);
        for (DType qt : new DType[] {DType.BFLOAT16, type}) {
          TokenBatch q = batch(r, qt, 2, 32, dim, 0);
          float[][] s = cuda.scores(q, d);
          for (float[] row : s) {
            assertEquals(-1e9f, row[1], 0f, qt + " x " + type + " all masked");
            assertEquals(-1e9f, row[2], 0f, qt + " x " + type + " empty");
            assertTrue(row[3] > -1e8f, qt + " x " + type + " scored");
          }
          assertEveryKernelClose(q, d, qt + " x " + type + " d=" + dim + " (" + r + ")");
        }
      }
    }
  }

  /**
   * A corpus large enough for the run-time pair queue (one query, bf16 or of the documents' type: rule 20 on sm_90)
   * and for warps that hold several queries, or (queries of the documents' type) query groups;
   * with the compressed-document kernels forced, many pairs
   * per block and several queries per block; 8-bit documents also at d = 256 (rule 20's tensor-map entries). Blocks'
   * first pairs here showed a schedule-sensitive defect of that kernel (docs/design/kernel-selection.md, rule 20).
   */
  @Test
  void manyDocumentsMatchTheReferenceWithOneQueryAndWithSeveral() {
    for (DType type : COMPRESSED) {
      for (int dim : type == DType.BINARY ? new int[] {128} : new int[] {128, 256}) {
        manyDocumentsMatchTheReference(type, dim);
      }
    }
  }

  private static void manyDocumentsMatchTheReference(DType type, int dim) {
    RandomBatches r = new RandomBatches();
    TokenBatch d = batch(r, type, dim == 128 ? 3000 : 1000, 40, dim, 2); // 1000: still more than the blocks at d = 256
    for (int queries : new int[] {1, 5}) {
      for (DType qt : new DType[] {DType.BFLOAT16, type}) {
        String where = qt + " x " + type + " d=" + dim + " Nq=" + queries + " (" + r + ")";
        TokenBatch q = batch(r, qt, queries, 32, dim, 1);
        float[][] all = cuda.scores(q, d);
        float[][] expected = reference.scores(q, d);
        ParityTest.assertClose(expected, all, q, d, where);
        ParityTest.assertTopKIsSortedScores(cuda.topK(q, d, 10), all, 10, where + " top-k");
        // each forced kernel twice in a row: blocks or warps that take many pairs at run time, switch queries
        // inside a block, and find their work counters zeroed by the launch before
        for (int i = 0; i < FORCED.length; i++) {
          for (int call = 0; call < 2; call++) {
            ParityTest.assertClose(expected, forced[i].scores(q, d), q, d, where + " (" + FORCED[i] + ", call "
                + call + ")");
          }
        }
        try (ResidentBatch rd = cuda.upload(d)) {
          List<CompletableFuture<float[][]>> inFlight = new ArrayList<>();
          for (int i = 0; i < 12; i++) {
            inFlight.add(cuda.scoresAsync(q, rd));
          }
          for (CompletableFuture<float[][]> f : inFlight) {
            assertArrayEquals(all, f.join(), where + " in flight");
          }
        }
      }
    }
  }

  /**
   * One int8 or e4m3 query of 32 tokens against 3,000 masked, ragged documents of its own type, at every width rule 20
   * reads such rows in (16-48 dims as d/16 k-steps, 64, and 96 and 128 as two chunks, the second of 96 half past d),
   * three calls in a row (blocks take pairs at run time), its top-k, and the forced kernels.
   */
  @Test
  void ownTypeQueriesAgainstManyDocumentsMatchTheReference() {
    RandomBatches r = new RandomBatches();
    for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3}) {
      for (int dim : new int[] {16, 32, 48, 64, 96, 128}) {
        String where = type + " x " + type + " d=" + dim + " (" + r + ")";
        TokenBatch q = batch(r, type, 1, 32, dim, 1);
        TokenBatch d = batch(r, type, 3000, 40, dim, 2);
        float[][] expected = reference.scores(q, d);
        float[][] first = cuda.scores(q, d);
        ParityTest.assertClose(expected, first, q, d, where);
        for (int call = 1; call < 3; call++) {
          assertArrayEquals(first, cuda.scores(q, d), where + ", call " + call);
        }
        ParityTest.assertTopKIsSortedScores(cuda.topK(q, d, 10), first, 10, where + " top-k");
        for (int i = 0; i < FORCED.length; i++) { // rows read as 64 or 128 dims, and rule 18's kernel
          ParityTest.assertClose(expected, forced[i].scores(q, d), q, d, where + " (" + FORCED[i] + ")");
        }
      }
    }
  }

  /**
   * A pair of a query of at most 32 bf16 or fp16 tokens and an int8 or e4m3 document of 16, 32 or 48 dims scores the
   * same bits whichever kernel its launch takes: all pairs of many queries (rule 19's query groups) and candidates,
   * 3 or 4 a query (rule 20 at any size), both summing k-step j over dims 16j..16j+15. (From 64 dims on, rule 20's
   * k-steps interleave the dims and rule 19's do not: docs/design/kernel-selection.md, rule 20.)
   */
  @Test
  void aPairScoresTheSameBitsInQueryGroupsAsAmongCandidates() {
    RandomBatches r = new RandomBatches();
    int queries = 64;
    for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3}) {
      for (int dim : new int[] {16, 32, 48}) {
        for (DType qt : new DType[] {DType.BFLOAT16, DType.FLOAT16}) {
          int perQuery = qt == DType.BFLOAT16 ? 3 : 4; // 3: below rule 20's 4 a query for wider rows
          String where = qt + " x " + type + " d=" + dim + " (" + r + ")";
          TokenBatch q = batch(r, qt, queries, 32, dim, 1);
          TokenBatch d = batch(r, type, queries * perQuery, 100, dim, 2);
          float[][] all = cuda.scores(q, d); // against the reference: the cases above
          float[][] cand = cuda.candidates(q, d, perQuery);
          for (int b = 0; b < queries; b++) {
            for (int c = 0; c < perQuery; c++) {
              assertEquals(all[b][b * perQuery + c], cand[b][c], 0f, where + " query " + b + ", candidate " + c);
            }
          }
        }
      }
    }
  }
}
