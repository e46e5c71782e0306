package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.DType;

/**
 * Which forward kernel runs a launch, and on what grid: a pure function of the launch's shape and the GPU's
 * capabilities. Inference, training and top-k all plan here, so they choose the same kernel for a shape and
 * give the same bits. Rule numbers are the sections of docs/design/kernel-selection.md, which holds the
 * measurement behind each rule and the command that re-runs it.
 */
final class ForwardPlan {
  private ForwardPlan() {}

  static final int THREADS = 256;
  static final int MMA_THREADS = 128;
  static final int GROUP_QUERIES = 4;
  static final int GROUP_ROWS = 32;
  private static final int MMA_REGISTER_CHUNKS = 4;
  private static final int STREAM_MAX_CHUNKS = 4;
  private static final int STREAM_MIN_PAIRS_PER_SM = 4;
  /** The run-time pair queues of the streaming kernel's "_dyn" entries: 4 warps x 32 x 8 bytes. */
  static final int STREAM_QUEUE_BYTES = 4 * 32 * 8;
  /** The streaming kernel's tile barriers for inference on sm_90, before the queues: 4 warps x 32 x 8 bytes. */
  static final int STREAM_BARRIER_BYTES = 4 * 32 * 8;
  /** Shared memory above which a kernel needs the opt-in attribute. */
  static final int DEFAULT_SHARED_BYTES = 48 * 1024;
  /** Query fragments of one block-kernel pass: 32 rows even at d = 1024, and two blocks per SM on sm_80+. */
  private static final int MMA_FRAGMENT_BUDGET = 96 * 1024;
  private static final int MMA_STATIC_SHARED = 4 * 1024 + 512;
  /**
   * maxsim_forward_wgmma.cu: a ring stage (128 tokens x 128 bytes; int8 adds the tile's 128 scales), its
   * ring depths, group rows, pads.
   */
  private static final int WGMMA_STAGE_BYTES = 128 * 128;
  private static final int WGMMA_SCALE_BYTES = 128 * 4;
  private static final int[] WGMMA_STAGES = {4, 6};
  private static final int WGMMA_GROUP_ROWS = 128;
  private static final int WGMMA_ALIGN_PAD = 1024;
  private static final int WGMMA_STATIC_SHARED = 2048;
  /** maxsim_forward_wgmma_ws.cu: 3 warpgroups, pad + 192 KB ring, 64-row groups, 128-token tiles. */
  static final int WS_THREADS = 384;
  static final int WS_SHARED_BYTES = 1024 + 192 * 1024;
  private static final int WS_GROUP_ROWS = 64;
  static final int WS_TOKENS = 128;
  /** Its query groups: 8 queries of at most 32 tokens per 256-row pass. */
  static final int WS_GROUP_QUERIES = 8;
  private static final double WS_SLICE_ABOVE = 1.10;
  private static final double WS_BALANCE = 1.03;
  private static final int WS_MAX_SLICES = 8;
  /**
   * Its "_scaled" entries' static shared memory beyond the others': per ring stage (a tile of 64 halves a row at
   * d <= 64, the most stages), the tile's scales and up to 3 before them (the kernel's WS_SCALE_SLOT).
   */
  private static final int WS_SCALE_SHARED = (WS_SHARED_BYTES - 1024) / (WS_TOKENS * 64 * 2) * (WS_TOKENS + 4) * 4;
  /**
   * Rule 21: the most device memory a launch's expanded documents take (2 bytes a value), 250 MiB for 1000 documents
   * of 1024 tokens x 128; larger batches keep the kernels that expand each tile on its way (rules 18-20).
   */
  static final long EXPANDED_MAX_BYTES = 256L << 20;
  /** Rule 21: the query tokens above which, or the groups of 8 queries from which, expanding first pays. */
  private static final int EXPANDED_MIN_QUERY_ROWS = 640;
  private static final int EXPANDED_MIN_GROUPS = 3;
  private static final int SPLIT_BLOCKS_PER_SM = 8;
  private static final int SPLIT_BELOW_BLOCKS_PER_SM = 2;
  private static final int SPLIT_MIN_SLICE = 512;

  /** maxsim_forward_quant.cu: 64 dims of 8-bit documents (128 of 1-bit ones) per chunk, at most 128 dims. */
  private static final int QUANT_CHUNK_DIMS = 64;
  private static final int QUANT_MAX_DIM = 128;
  /** Its pair queues of the "_dyn" entries: 4 warps x 32 x 8 bytes. */
  static final int QUANT_QUEUE_BYTES = 4 * 32 * 8;
  /**
   * maxsim_forward_quant_wgmma.cu: one warpgroup, its ring (QW_RING_BYTES, at most 8 stages of 64 tokens), query
   * rows as B (at most 64 KB of them for 128 rows, else passes of 32), 32 rows per query slot.
   */
  static final int QW_RING_BYTES = 54 * 1024;
  static final int QW_MAX_STAGES = 8;
  private static final int QW_MAX_ROWS_BYTES = 64 * 1024;
  private static final int QW_MAX_DIM = 1024;
  /** Where both compressed kernels run, when the wgmma one measured faster (see quantWgmmaPays). */
  private static final int QW_MAX_ONE_PASS_ROWS = 128;
  private static final int QW_STAGE_TOKENS = 128;
  private static final int QW_MIN_GROUP_STAGES_PER_BLOCK = 8;
  private static final int QW_MIN_PAIRS_PER_BLOCK = 4;
  private static final int QW_LONG_DOCUMENT = 1024;
  /**
   * maxsim_forward_quant_tma.cu: a consumer warpgroup and a producer warp, 32 query rows, 64-dim chunks, at most
   * 128 dims; its dynamic shared memory: the rows (bf16, 128 bytes per chunk), the ring, 16 slots' tiles and
   * barriers (32 + 2 x 8 bytes each), the epilogue's maxima (2 x 4 x 32 floats), and the rows' weights and scales
   * (2 x 32 floats).
   */
  static final int QT_THREADS = 160;
  static final int QT_ROWS = 32;
  private static final int QT_MAX_DIM = 128;
  /** Its tensor-map entries: 8-bit documents of d up to 1024 in slices of 128 bytes. */
  private static final int QT_SLICE_DIMS = 128;
  private static final int QT_MAX_WIDE_DIM = 1024;
  static final int QT_RING_BYTES = 40 * 1024;
  static final int QT_SLOT_BYTES = 16 * (32 + 16);
  static final int QT_TOKENS = 64;
  /** Rows of the tensor map's box over 8-bit documents: a slot's tokens (one tile). */
  static final int QT_BOX_ROWS = QT_TOKENS;
  private static final int QT_MIN_DOCUMENTS_PER_QUERY = 2;
  private static final int QT_MIN_PAIRWISE_TILES_PER_BLOCK = 9;

  /**
   * The kernel families, each one .cu file (the block kernels two entry shapes); FFMA_SCALED and QUANT take
   * the launches with a compressed side.
   */
  enum Family {
    FFMA, WGMMA_GROUPS, STREAM, WGMMA_WS, WGMMA, BLOCK_GROUPS, BLOCK, FFMA_SCALED, QUANT, QUANT_WGMMA, QUANT_TMA,
    /** The warp-specialized kernel's "_scaled" entries over the documents expanded first (rule 21). */
    WGMMA_WS_EXPANDED
  }

  /**
   * A launch's kernel and grid: {@code blocks} x {@code gridY} blocks of {@code threads} with
   * {@code sharedBytes} of dynamic shared memory ({@code optIn}: above the default, set first). {@code split}:
   * document slices or query passes along grid.y, merged by a second launch where {@link Split#partials}.
   * {@code partials}: the blocks leave per-row partials for a merge launch. Family parameters:
   * {@code rowsPerPass} (block kernels), {@code passes} (warp-specialized and wgmma), {@code wholeDevice}
   * (ordered after the last such grid).
   */
  record Plan(Family family, KernelModule module, String entry, int blocks, int gridY, int threads, int sharedBytes,
      boolean optIn, Split split, boolean partials, int rowsPerPass, int passes, boolean wholeDevice,
      boolean runTimePairs) {

    /** The same launch through another entry point (tests run kernels only they build this way). */
    Plan withEntry(KernelModule module, String entry) {
      return new Plan(family, module, entry, blocks, gridY, threads, sharedBytes, optIn, split, partials, rowsPerPass,
          passes, wholeDevice, runTimePairs);
    }
  }

  /**
   * How a pair spreads over blocks along grid.y: {@code slices} of {@code sliceTokens} document tokens
   * (split-Ld), or the query's {@code passes} of rows (wgmma only); at most one above 1. For the
   * warp-specialized kernel, its slices (grid.y stays 1).
   */
  record Split(int slices, int sliceTokens, int passes) {
    static final Split NONE = new Split(1, 0, 1);

    static Split passes(int passes) {
      return new Split(1, 0, passes);
    }

    /** Whether blocks leave per-row partials for the merge launch rather than scores. */
    boolean partials() {
      return slices > 1 || passes > 1;
    }

    int gridY() {
      return slices * passes;
    }
  }

  // ---------------------------------------------------------------------------------------- the rule table

  /** The forward kernel and grid for {@code s} on {@code gpu}: the first rule that applies. */
  static Plan plan(ForwardShape s, GpuCapabilities gpu) {
    if (expandedPays(s, gpu)) {
      return expanded(s, gpu); // rule 21: compressed documents expanded once, then read as bf16 ones are, many times
    }
    return planUnexpanded(s, gpu);
  }

  /**
   * The rules but rule 21: for a launch whose expansion buffer the device cannot hold, which then takes the kernels
   * that expand each tile on their way (rules 18-20).
   */
  static Plan planUnexpanded(ForwardShape s, GpuCapabilities gpu) {
    if (s.queryType().isQuantized() || s.documentType().isQuantized()) {
      if (wgmmaCompressedPays(s, gpu)) {
        // rule 19: int8 and e4m3 documents through the wgmma kernel's tiles (int8 on both sides as stored)
        return wgmmaGroupsPay(s, gpu) ? wgmmaGroups(s, gpu) : wgmma(s, gpu, true);
      }
      if (quantTmaPays(s, gpu)) {
        return quantTma(s, gpu); // rule 20: short float queries against 8-bit and 1-bit documents, bulk copies
      }
      // rule 18: compressed documents expanded in registers for the tensor cores (wgmma on sm_90, else mma),
      // else FFMA on either side
      if (quantWgmmaPays(s, gpu)) {
        return quantWgmma(s, gpu);
      }
      return quantApplies(s, gpu) ? quant(s, gpu) : ffmaScaled(s);
    }
    boolean tensorCores = tensorCores(s, gpu);
    boolean wsQueryGroups = tensorCores && wsQueryGroupsPay(s, gpu);
    boolean wgmmaGroups = tensorCores && !wsQueryGroups && wgmmaGroupsPay(s, gpu);
    boolean stream = tensorCores && !wsQueryGroups && streamPays(s, gpu);
    if (s.argmax16() && !(wsQueryGroups || wgmmaGroups || stream)) {
      throw new IllegalStateException("an int16 argmax for " + s + " needs the streaming kernel or query groups"
          + " (the wgmma or the warp-specialized kernel's), which this launch does not take");
    }
    if (!tensorCores) {
      return ffma(s); // rule 1: the types allow no mma; FFMA is also the fp32-accuracy path
    }
    if (wsQueryGroups) {
      return wgmmaWsQueryGroups(s, gpu); // rule 2: eight short queries share each document tile
    }
    if (wgmmaGroups) {
      return wgmmaGroups(s, gpu); // rule 2: four short queries share each document tile
    }
    if (stream) {
      return stream(s, gpu); // rules 3-4: a warp per pair keeps enough copies in flight
    }
    if (wgmmaWsPays(s, gpu)) {
      return wgmmaWs(s, gpu, wsGroups(s), false); // rules 5-8: TMA producer, register-resident query rows
    }
    if (wgmmaPays(s, gpu)) {
      return wgmma(s, gpu, true); // rules 9-10: wgmma wherever its shared memory fits on sm_90
    }
    return block(s, gpu, queryGroupsPay(s, gpu)); // rules 11-13: mma.sync, groups while blocks abound
  }

  /** Rule 14: the training argmax is int16 where the forward has such entries and documents fit int16. */
  static boolean narrowArgmax(ForwardShape s, GpuCapabilities gpu) {
    return tensorCores(s, gpu) && (wsQueryGroupsPay(s, gpu) || streamPays(s, gpu) || wgmmaGroupsPay(s, gpu))
        && s.maxDocumentLength() < Short.MAX_VALUE;
  }

  /**
   * Rule 1: one half type on both sides, 16-byte rows; bf16 mma from sm_80, fp16 from sm_75 (m16n8k8); and one
   * m-tile of query fragments (1 KB per 32 dims) fits the block kernels' shared memory, as every other tensor-core
   * rule falls back to them.
   */
  static boolean tensorCores(ForwardShape s, GpuCapabilities gpu) {
    return s.queryType() == s.documentType() && s.dim() % 8 == 0
        && (s.queryType() == DType.BFLOAT16 && gpu.major() >= 8
            || s.queryType() == DType.FLOAT16 && (gpu.major() > 7 || gpu.major() == 7 && gpu.minor() >= 5))
        && 1024L * s.chunks() <= gpu.sharedMemoryPerBlockOptin() - MMA_STATIC_SHARED;
  }

  /**
   * Rule 18: compressed documents on tensor cores: sm_80+, inference, queries in a type whose values bf16 or
   * fp16 hold exactly (bf16, fp16 or compressed; fp32 queries keep fp32 accuracy on the FFMA kernel), d at
   * most 128 and a multiple of 16 (8-bit documents) or 32 (1-bit ones), so every copy is whole and aligned.
   */
  static boolean quantApplies(ForwardShape s, GpuCapabilities gpu) {
    DType q = s.queryType();
    DType d = s.documentType();
    boolean queries = q == DType.BFLOAT16 || q == DType.FLOAT16 || q.isQuantized();
    int multiple = d == DType.BINARY ? 32 : 16;
    return gpu.major() >= 8 && !s.argmax() && d.isQuantized() && queries && s.dim() <= QUANT_MAX_DIM
        && s.dim() % multiple == 0;
  }

  /**
   * Rule 18 on sm_90: as {@link #quantApplies}, with d up to 1024, the widest the GPU tests run (documents
   * stream through in 128-dim stages; the query rows stay in shared memory).
   */
  static boolean quantWgmmaApplies(ForwardShape s, GpuCapabilities gpu) {
    DType q = s.queryType();
    DType d = s.documentType();
    boolean queries = q == DType.BFLOAT16 || q == DType.FLOAT16 || q.isQuantized();
    int multiple = d == DType.BINARY ? 32 : 16;
    return gpu.major() == 9 && !s.argmax() && d.isQuantized() && queries && s.dim() <= QW_MAX_DIM
        && s.dim() % multiple == 0;
  }

  /**
   * Rule 19: int8 or e4m3 documents on sm_90 with bf16 or fp16 queries or queries of their own type, inference,
   * d a multiple of 16 (whole 16-byte loads) up to 1024 (the widest the GPU tests run): the wgmma kernel, where
   * its shared memory fits. int8 on both sides
   * is multiplied as stored (s32 accumulators, exact); everything else is expanded, exactly, to bf16 or fp16
   * on its way into the tiles (e4m3 on both sides to fp16). Not on the fp8 tensor cores: they add into a 13-bit
   * mantissa (products below 2^-13 of the running sum are dropped), where every kernel's contract is fp32
   * accumulation. Each product is scaled in the fold.
   */
  static boolean wgmmaCompressedApplies(ForwardShape s, GpuCapabilities gpu) {
    DType q = s.queryType();
    DType d = s.documentType();
    boolean documents = eightBit(d);
    boolean queries = q == DType.BFLOAT16 || q == DType.FLOAT16 || q == d;
    return gpu.major() == 9 && documents && queries && !s.argmax() && s.dim() % 16 == 0 && s.dim() <= QW_MAX_DIM
        && wgmmaFits(wgmmaRows(s.maxQueryLength()), s, gpu);
  }

  /**
   * Rule 19: where that kernel applies, it runs where it measured faster than the compressed-document kernels
   * of rule 18: queries of more than 32 tokens, query groups, and d over 128 (where the mma.sync kernel does not
   * run) unless rule 20's tensor-map entries take it. One query of at most 32 tokens per pair reads the documents
   * faster on the mma.sync kernel, a warp per pair.
   */
  static boolean wgmmaCompressedPays(ForwardShape s, GpuCapabilities gpu) {
    return wgmmaCompressedApplies(s, gpu) && (s.maxQueryLength() > GROUP_ROWS || wgmmaGroupsPay(s, gpu)
        || !quantApplies(s, gpu) && !quantTmaPays(s, gpu));
  }

  /**
   * Rule 20: int8 or e4m3 documents with d a multiple of 16 up to 128, or 1-bit documents with any d up to 128,
   * against bf16 or fp16 queries, or 1-bit documents against 1-bit queries (+-1 exact in bf16), int8 documents
   * of d up to 128 against int8 queries (from 64 dims multiplied as stored on the integer tensor cores, below exact
   * in bf16) and e4m3 ones against e4m3 queries (exact in fp16), each dot product then times the pair's scale
   * product as rule 18's kernels round it, of at most 32 tokens on sm_90, inference: a
   * document's tokens are contiguous, so
   * the kernel's producer warp copies each tile with one bulk copy (8-bit tiles are whole 16-byte units; 1-bit
   * ones narrower than 16 bytes a token from the unit holding the first) and the consumers spend their
   * instructions on expanding and multiplying (1-bit rows as 128 dims, or 64 at d <= 64, zero in the query past
   * d). Query groups stay where they share each expanded tile: rule 19's for 8-bit documents (asked first), rule
   * 18's wgmma groups for 1-bit ones where d is a multiple of 32.
   */
  static boolean quantTmaApplies(ForwardShape s, GpuCapabilities gpu) {
    DType q = s.queryType();
    DType d = s.documentType();
    boolean eightBit = eightBit(d) && s.dim() % 16 == 0
        && (s.dim() <= QT_MAX_DIM || s.dim() <= QT_MAX_WIDE_DIM && gpu.tensorMaps());
    boolean bits = d == DType.BINARY && s.dim() <= QT_MAX_DIM
        && (s.dim() % 32 != 0 || !quantWgmmaLaunch(s).grouped());
    // 8-bit queries of d over 128 stay with rule 19, whose tiles multiply the stored bytes too
    boolean ownType = q == d && (bits || eightBit(d) && s.dim() <= QT_MAX_DIM);
    boolean queries = q == DType.BFLOAT16 || q == DType.FLOAT16 || ownType;
    return gpu.major() == 9 && (eightBit || bits) && queries && !s.argmax() && s.maxQueryLength() <= QT_ROWS
        && quantTmaSharedBytes(s) <= gpu.sharedMemoryPerBlockOptin();
  }

  /**
   * Rule 20: ... and pays wherever it applies for 1-bit documents, and for 8-bit documents wherever a query has at
   * least 2 of them (its rows are loaded once for them) or each resident block takes one pair (as one query against one
   * document; docs/design/kernel-selection.md holds both measurements). Launches where most pairs have a query of their
   * own (pairwise) and the blocks take several, a query load per pair, not timed, take it from 9 tiles of 64 tokens per
   * resident block (4 blocks per SM) and leave fewer to the mma.sync kernel of rule 18, which balances single pairs
   * across warps. Tiles are counted at the longest document's length: a ragged batch may count more than it holds.
   * 8-bit documents of d over 128, and of 16, 32 or 48 dims (the c1k entries, d/16 k-steps), take it at any size: the
   * alternative for small launches (rule 19's kernel over 128, rule 18's mma.sync kernel at 16-48) groups the
   * dimensions into its k-steps otherwise, so a pair scored among few candidates would differ in the last bit from the
   * same pair in all pairs. At 16-48 this kernel's k-steps are those of rule 19's tiles, which take such rows in query
   * groups.
   */
  static boolean quantTmaPays(ForwardShape s, GpuCapabilities gpu) {
    if (!quantTmaApplies(s, gpu)) {
      return false;
    }
    if (s.documentType() == DType.BINARY || s.perQuery() >= QT_MIN_DOCUMENTS_PER_QUERY || quantTmaSlices(s) > 0
        || quantTmaRowSteps(s) < 4) {
      return true;
    }
    Plan p = quantTma(s, gpu);
    long tiles = (long) s.pairs() * Math.ceilDiv(s.maxDocumentLength(), QT_TOKENS);
    long resident = (long) gpu.residentBlocks(p.module(), p.entry(), QT_THREADS, p.sharedBytes())
        * gpu.multiprocessors();
    return s.pairs() <= resident || tiles >= QT_MIN_PAIRWISE_TILES_PER_BLOCK * resident;
  }

  /**
   * Rule 20, bf16 queries: a launch of bf16 queries against int8 or e4m3 documents that takes the bulk-copy kernel
   * reads the queries' exact fp16 copy where they have one ({@link HalfOperands}), through the fp16 entries: an 8-bit
   * word expands into fp16 operands in 5 instructions, into bf16 ones in 7. 1-bit documents keep bf16 (not timed).
   */
  static boolean halfOperandsPay(ForwardShape s, Plan p) {
    return p.family() == Family.QUANT_TMA && s.queryType() == DType.BFLOAT16 && eightBit(s.documentType());
  }

  /**
   * Rule 21: compressed documents of d a multiple of 16 up to 128 (8-bit ones from 64) against bf16 or fp16 queries
   * on sm_90, inference, their expanded values within {@link #EXPANDED_MAX_BYTES}: a launch expands them into a
   * device buffer of the queries' type (exactly) and the warp-specialized kernel reads them through its tensor map as
   * it reads bf16 documents, each product times its document token's scale in the fold (the "_scaled" entries).
   * 8-bit rows of 16-48 dims stay with rules 19 and 20, whose k-steps sum the same dims, so a pair scores the same
   * bits in query groups as among candidates.
   */
  static boolean expandedApplies(ForwardShape s, GpuCapabilities gpu) {
    DType q = s.queryType();
    DType d = s.documentType();
    return (q == DType.BFLOAT16 || q == DType.FLOAT16) && d.isQuantized() && !s.argmax() && s.dim() % 16 == 0
        && (d == DType.BINARY || s.dim() >= 64) && 2L * s.dim() * s.documentTokens() <= EXPANDED_MAX_BYTES
        && wgmmaWsApplies(s, gpu)
        && WS_SHARED_BYTES + WS_SCALE_SHARED <= gpu.sharedMemoryPerBlockOptin() - WGMMA_STATIC_SHARED;
  }

  /**
   * Whether some launch of {@code queries} against {@code documents} may take rule 21 on {@code gpu}: the types, d
   * and device it needs, and more than {@value #EXPANDED_MIN_QUERY_ROWS} query tokens or more queries than two groups
   * hold. A top-k call under a memory budget counts the expansion's buffer only then.
   */
  static boolean expansionPossible(DType queries, int queryRows, int maxQueryLength, DType documents, int dim,
      GpuCapabilities gpu) {
    ForwardShape s = new ForwardShape(PairLayout.ALL_PAIRS, queryRows, 1, 0, queryRows, maxQueryLength, 1, dim,
        queries, documents, false, false, 0);
    return expandedApplies(s, gpu) && (maxQueryLength > EXPANDED_MIN_QUERY_ROWS
        || queryRows > (EXPANDED_MIN_GROUPS - 1) * WS_GROUP_QUERIES);
  }

  /**
   * Rule 21: ... and pays where the same launch with documents of the queries' type takes the warp-specialized
   * kernel and reads each document tile often enough: queries of more than {@value #EXPANDED_MIN_QUERY_ROWS} tokens
   * (passes of 256 rows, against rule 19's of 128, each of which expands every tile again), or at least
   * {@value #EXPANDED_MIN_GROUPS} groups of 8 queries: where it starts to pay on int8 documents (measured in
   * docs/design/kernel-selection.md, rule 21).
   */
  static boolean expandedPays(ForwardShape s, GpuCapabilities gpu) {
    if (!expandedApplies(s, gpu)) {
      return false;
    }
    ForwardShape half = halfDocuments(s);
    if (wsQueryGroupsPay(half, gpu)) {
      return Math.ceilDiv(s.queries(), WS_GROUP_QUERIES) >= EXPANDED_MIN_GROUPS;
    }
    return s.maxQueryLength() > EXPANDED_MIN_QUERY_ROWS && plan(half, gpu).family() == Family.WGMMA_WS;
  }

  /**
   * Rule 21's forward: the warp-specialized plan of the launch with documents of the queries' type (query groups
   * where they apply, else passes of 128 or 256 rows), through its "_scaled" entry.
   */
  static Plan expanded(ForwardShape s, GpuCapabilities gpu) {
    ForwardShape half = halfDocuments(s);
    Plan p = wsQueryGroupsApply(half, gpu) ? wgmmaWsQueryGroups(half, gpu)
        : wgmmaWs(half, gpu, wsGroups(half), false);
    String type = "_" + suffix(s.queryType());
    String entry = p.entry().substring(0, p.entry().length() - type.length()) + "_scaled" + type;
    return new Plan(Family.WGMMA_WS_EXPANDED, p.module(), entry, p.blocks(), p.gridY(), p.threads(), p.sharedBytes(),
        p.optIn(), p.split(), p.partials(), p.rowsPerPass(), p.passes(), p.wholeDevice(), false);
  }

  /** Rule 21's expansion of {@code documents} into operands of {@code type} (maxsim_expand.cu). */
  static String expandEntry(DType documents, DType type) {
    return "maxsim_expand_" + suffix(documents) + "_" + suffix(type);
  }

  /** {@code s} with documents of its queries' type: what rule 21's expansion leaves. */
  static ForwardShape halfDocuments(ForwardShape s) {
    return s.withDocumentType(s.queryType());
  }

  /** int8 or e4m3: one byte a value, every value exact in bf16 and fp16. */
  static boolean eightBit(DType t) {
    return t == DType.INT8 || t == DType.FLOAT8_E4M3;
  }

  /** Rule 2: several all-pairs queries of at most 32 tokens on sm_90, with half an item per SM. */
  static boolean wgmmaGroupsPay(ForwardShape s, GpuCapabilities gpu) {
    long items = (long) s.perQuery() * groups(s.queries());
    return wgmmaGroupsApply(s, gpu) && 2 * items >= gpu.multiprocessors();
  }

  /** Rule 2: where wgmma query groups exist: sm_90, all pairs, several queries of at most 32 tokens. */
  static boolean wgmmaGroupsApply(ForwardShape s, GpuCapabilities gpu) {
    return gpu.major() == 9 && s.layout() == PairLayout.ALL_PAIRS && s.queries() >= 2
        && s.maxQueryLength() <= GROUP_ROWS && wgmmaFits(WGMMA_GROUP_ROWS, s, gpu);
  }

  /**
   * Rule 2: where the warp-specialized kernel's query groups exist: as rule 5 (sm_90, d <= 128, tensor maps),
   * all pairs, several queries of at most 32 tokens.
   */
  static boolean wsQueryGroupsApply(ForwardShape s, GpuCapabilities gpu) {
    return wgmmaWsApplies(s, gpu) && s.layout() == PairLayout.ALL_PAIRS && s.queries() >= 2
        && s.maxQueryLength() <= GROUP_ROWS;
  }

  /**
   * Rule 2: ... and pays for more queries than one group of 4 on the wgmma kernel (2 to 4 queries leave most of a
   * pass's 8 slots empty), with at least an item (group of 8, document) per SM (with fewer, the wgmma kernel's
   * two blocks per SM measured as fast or faster), unless its items spread over the SMs more than 1.10 times as
   * unevenly as the wgmma groups' documents over their blocks: each block takes a run of whole items, so 133
   * items on 132 SMs take two items' time, where the wgmma kernel's blocks may split the documents more evenly.
   */
  static boolean wsQueryGroupsPay(ForwardShape s, GpuCapabilities gpu) {
    long items = (long) s.perQuery() * Math.ceilDiv(s.queries(), WS_GROUP_QUERIES);
    if (!wsQueryGroupsApply(s, gpu) || s.queries() <= GROUP_QUERIES || items < gpu.multiprocessors()) {
      return false;
    }
    double alternative = wgmmaGroupsApply(s, gpu)
        ? unevenness(s.perQuery(), wgmmaGroups(s, gpu).blocks() / groups(s.queries())) : 1;
    return unevenness(items, gpu.multiprocessors()) <= WS_SLICE_ABOVE * alternative;
  }

  /** Rule 3: queries of at most 32 tokens, d <= 128, sm_80+, at least 4 pairs per SM. */
  static boolean streamApplies(ForwardShape s, GpuCapabilities gpu) {
    return s.maxQueryLength() <= 32 && s.chunks() <= STREAM_MAX_CHUNKS && gpu.major() >= 8;
  }

  private static boolean streamPays(ForwardShape s, GpuCapabilities gpu) {
    return streamApplies(s, gpu) && s.pairs() >= (long) STREAM_MIN_PAIRS_PER_SM * gpu.multiprocessors();
  }

  /** Rule 5: the warp-specialized kernel exists on this GPU for d <= 128 (sm_90, tensor maps, 193 KB). */
  static boolean wgmmaWsApplies(ForwardShape s, GpuCapabilities gpu) {
    return gpu.major() == 9 && s.dim() <= 128 && gpu.tensorMaps()
        && WS_SHARED_BYTES <= gpu.sharedMemoryPerBlockOptin() - WGMMA_STATIC_SHARED;
  }

  /** Rule 5: ... and pays for queries of more than 64 tokens (two consumer warpgroups of rows). */
  private static boolean wgmmaWsPays(ForwardShape s, GpuCapabilities gpu) {
    return wgmmaWsApplies(s, gpu) && s.maxQueryLength() > WS_GROUP_ROWS;
  }

  /** Rule 6: passes of 256 rows (two row groups per warpgroup) for queries of more than 128 tokens. */
  static int wsGroups(ForwardShape s) {
    return s.maxQueryLength() > 2 * WS_GROUP_ROWS ? 2 : 1;
  }

  /** Rule 9: on sm_90 the wgmma kernel takes the rest, where its 4-stage ring fits. */
  static boolean wgmmaPays(ForwardShape s, GpuCapabilities gpu) {
    return gpu.major() == 9 && wgmmaFits(wgmmaRows(s.maxQueryLength()), s, gpu);
  }

  /** Rule 13: 4 queries per block-kernel block while that still gives 4 blocks per SM. */
  static boolean queryGroupsPay(ForwardShape s, GpuCapabilities gpu) {
    long groupBlocks = (long) s.perQuery() * groups(s.queries());
    return queryGroupsApply(s, gpu) && groupBlocks >= 4L * gpu.multiprocessors();
  }

  /** Rule 13: where block-kernel query groups exist: all pairs from the first document, queries of <= 32. */
  static boolean queryGroupsApply(ForwardShape s, GpuCapabilities gpu) {
    return s.layout() == PairLayout.ALL_PAIRS && s.docOffset() == 0 && s.queries() > 1
        && s.maxQueryLength() <= GROUP_ROWS && groupFragmentBytes(s) <= fragmentBudget(gpu);
  }

  /**
   * Rule 11: split-Ld below 2 blocks per SM when documents reach 1024 tokens: slices of at least 512 tokens,
   * enough for 8 blocks per SM ({@code forced}: whatever the blocks).
   */
  static Split splitFor(long blocks, int maxDocumentLength, boolean forced, GpuCapabilities gpu) {
    long wanted = (long) SPLIT_BLOCKS_PER_SM * gpu.multiprocessors();
    boolean fewBlocks = blocks < (long) SPLIT_BELOW_BLOCKS_PER_SM * gpu.multiprocessors();
    if (!(fewBlocks || forced) || maxDocumentLength < 2 * SPLIT_MIN_SLICE) {
      return Split.NONE;
    }
    long slices = Math.min(Math.max(2, (wanted + blocks - 1) / blocks), maxDocumentLength / SPLIT_MIN_SLICE);
    int step = 64; // a multiple of every kernel's token step (warps x 8 x n-tiles)
    int sliceTokens = (int) ((maxDocumentLength + slices - 1) / slices + step - 1) / step * step;
    int count = Math.ceilDiv(maxDocumentLength, sliceTokens);
    return count < 2 ? Split.NONE : new Split(count, sliceTokens, 1);
  }

  /**
   * Rule 7: 1 where {@code items} spread over the SMs within 1.10 of even; else slices (a power of two, at
   * most one per tile and 8) until {@code items} x slices spread within 1.03.
   */
  static int wsSlices(long items, int tiles, int multiprocessors) {
    int slices = 1;
    if (unevenness(items, multiprocessors) <= WS_SLICE_ABOVE) {
      return slices;
    }
    while (slices * 2 <= Math.min(tiles, WS_MAX_SLICES) && unevenness(items * slices, multiprocessors) > WS_BALANCE) {
      slices *= 2;
    }
    return slices;
  }

  /** The busiest SM's items over the mean, with {@code items} in equal runs over the SMs. */
  private static double unevenness(long items, int multiprocessors) {
    double mean = (double) items / multiprocessors;
    return items >= multiprocessors ? Math.ceil(mean) / mean : 1 / mean;
  }

  // ------------------------------------------------------------------------------------- family plans

  /** The fp32 FFMA kernel: a block per pair. */
  static Plan ffma(ForwardShape s) {
    String entry = "maxsim_forward_" + suffix(s.queryType()) + "_" + suffix(s.documentType());
    return new Plan(Family.FFMA, KernelModule.FORWARD, entry, s.pairs(), 1, THREADS, 0, false, Split.NONE, false, 0, 1, false,
        false);
  }

  /** The FFMA kernel with each side's scales: a block per pair, any types, the argmax where asked. */
  static Plan ffmaScaled(ForwardShape s) {
    String entry = "maxsim_forward_scaled_" + suffix(s.queryType()) + "_" + suffix(s.documentType());
    return new Plan(Family.FFMA_SCALED, KernelModule.FORWARD_SCALED, entry, s.pairs(), 1, THREADS, 0, false, Split.NONE, false, 0,
        1, false, false);
  }

  /**
   * Rule 18: the tensor-core kernel for compressed documents, a warp per pair, the grid the warps the GPU
   * holds at once; pairs taken partly at run time where queries are not shared (as rule 4).
   */
  static Plan quant(ForwardShape s, GpuCapabilities gpu) {
    boolean dynamic = !s.queriesShared();
    int chunkDims = s.documentType() == DType.BINARY ? 2 * QUANT_CHUNK_DIMS : QUANT_CHUNK_DIMS;
    int chunks = (s.dim() + chunkDims - 1) / chunkDims;
    String entry = "maxsim_forward_quant_c" + chunks + (dynamic ? "_dyn_" : "_") + suffix(s.queryType()) + "_"
        + suffix(s.documentType());
    int queueBytes = dynamic ? QUANT_QUEUE_BYTES : 0;
    long warps = (long) gpu.residentBlocks(KernelModule.FORWARD_QUANT, entry, MMA_THREADS, queueBytes) * gpu.multiprocessors()
        * 4;
    int blocks = (int) Math.max(1, (Math.min(s.pairs(), warps) + 3) / 4);
    return new Plan(Family.QUANT, KernelModule.FORWARD_QUANT, entry, blocks, 1, MMA_THREADS, queueBytes, dynamic, Split.NONE,
        false, 0, 1, false, dynamic);
  }

  /**
   * Rule 18 on sm_90: the wgmma kernel where the mma.sync one cannot run (d over 128); and, for bf16 or fp16
   * queries, where it measured faster: queries of 33 to 128 tokens (one pass instead of one per 32 rows; longer
   * ones take several passes, which measured slower), query groups with at least 8 document stages of 128
   * tokens per resident block, and long documents with at least 4 pairs per resident block. One short query
   * against short documents, and few items, stay on the mma.sync kernel, which balances them at run time. (Rule
   * 19 is asked first: of int8 and e4m3 documents this kernel keeps what that one leaves, e.g. long documents.)
   */
  static boolean quantWgmmaPays(ForwardShape s, GpuCapabilities gpu) {
    if (!quantWgmmaApplies(s, gpu)) {
      return false;
    }
    if (!quantApplies(s, gpu)) {
      return true;
    }
    DType q = s.queryType();
    if (q != DType.BFLOAT16 && q != DType.FLOAT16) {
      return false; // compressed queries scale every product by a row scale, which the wgmma fold pays for
    }
    if (s.maxQueryLength() > GROUP_ROWS) {
      return s.maxQueryLength() <= QW_MAX_ONE_PASS_ROWS;
    }
    QuantWgmmaLaunch l = quantWgmmaLaunch(s);
    long resident = (long) gpu.residentBlocks(KernelModule.FORWARD_QUANT_WGMMA, l.entry(), MMA_THREADS, l.sharedBytes())
        * gpu.multiprocessors();
    long stages = Math.ceilDiv(s.maxDocumentLength(), QW_STAGE_TOKENS);
    return l.grouped() ? l.items() * stages >= QW_MIN_GROUP_STAGES_PER_BLOCK * resident
        : s.maxDocumentLength() >= QW_LONG_DOCUMENT && l.items() >= QW_MIN_PAIRS_PER_BLOCK * resident;
  }

  /**
   * Rule 18 on sm_90: a warpgroup per block, persistent blocks, each a contiguous run of items: groups of 4
   * all-pairs queries of at most 32 tokens against a document, or pairs with 32 query rows per pass (128 for
   * longer queries while their rows fit).
   */
  static Plan quantWgmma(ForwardShape s, GpuCapabilities gpu) {
    QuantWgmmaLaunch l = quantWgmmaLaunch(s);
    long resident = (long) gpu.residentBlocks(KernelModule.FORWARD_QUANT_WGMMA, l.entry(), MMA_THREADS, l.sharedBytes())
        * gpu.multiprocessors();
    int blocks = (int) Math.max(1, Math.min(l.items(), resident));
    return new Plan(Family.QUANT_WGMMA, KernelModule.FORWARD_QUANT_WGMMA, l.entry(), blocks, 1, MMA_THREADS, l.sharedBytes(),
        l.sharedBytes() > DEFAULT_SHARED_BYTES, Split.NONE, false, 0, 1, false, false);
  }

  /** The wgmma compressed kernel's entry, dynamic shared memory and items for {@code s}. */
  private record QuantWgmmaLaunch(String entry, boolean grouped, int sharedBytes, long items) {}

  private static QuantWgmmaLaunch quantWgmmaLaunch(ForwardShape s) {
    boolean bits = s.documentType() == DType.BINARY;
    int chunks = !bits && s.dim() <= 64 ? 1 : bits ? 1 : 2;
    boolean wide = quantWgmmaRowBytes(s, chunks, 128) <= QW_MAX_ROWS_BYTES;
    boolean grouped = wide && s.layout() == PairLayout.ALL_PAIRS && s.queries() >= 2
        && s.maxQueryLength() <= GROUP_ROWS;
    int rows = grouped || wide && s.maxQueryLength() > GROUP_ROWS ? 128 : GROUP_ROWS;
    String entry = "maxsim_forward_quant_wgmma" + (grouped ? "_g" : "_p") + rows + "_c" + chunks + "_"
        + suffix(s.queryType()) + "_" + suffix(s.documentType());
    // a stage: each thread's 2 rows per m-tile (two m-tiles for 32 rows), their pieces and their scales
    int stageRows = 2 * (rows == GROUP_ROWS ? 2 : 1);
    int stageBytes = stageRows * MMA_THREADS * (chunks * (bits ? 4 : 16) + 4);
    int stages = Math.min(QW_MAX_STAGES, QW_RING_BYTES / stageBytes);
    // then the epilogue's maxima [2][4][rows], the rows' scales and validity, and 4 slot sums
    int sharedBytes = quantWgmmaRowBytes(s, chunks, rows) + stages * stageBytes + (10 * rows + 4) * 4;
    long items = grouped ? (long) groups(s.queries()) * s.perQuery() : s.pairs();
    return new QuantWgmmaLaunch(entry, grouped, sharedBytes, items);
  }

  /** The query rows' bytes in shared memory: {@code rows} x d rounded up to whole stages, in bf16. */
  private static int quantWgmmaRowBytes(ForwardShape s, int chunks, int rows) {
    int stageDims = chunks * (s.documentType() == DType.BINARY ? 128 : 64);
    int stagesPerTile = (s.dim() + stageDims - 1) / stageDims;
    return stagesPerTile * stageDims * 2 * rows;
  }

  /**
   * Rule 20: the bulk-copy kernel, persistent blocks as many as the GPU holds, each taking its first pair and
   * then one at a time at run time.
   */
  static Plan quantTma(ForwardShape s, GpuCapabilities gpu) {
    // 1-bit tokens of fewer than 16 bytes start anywhere in a slot: their entry reads each word as two
    boolean narrow = s.documentType() == DType.BINARY && (s.dim() + 7) / 8 != 16;
    String layout = quantTmaSlices(s) > 0 ? "_w" + quantTmaSlices(s)
        : "_c" + quantTmaChunks(s) + (quantTmaRowSteps(s) < 4 ? "k" + quantTmaRowSteps(s) : "");
    String entry = "maxsim_forward_quant_tma" + layout + "_" + suffix(s.queryType()) + "_" + suffix(s.documentType())
        + (narrow ? "_narrow" : "");
    int shared = quantTmaSharedBytes(s);
    KernelModule module = quantTmaSlices(s) > 0 ? KernelModule.FORWARD_QUANT_TMA_WIDE : KernelModule.FORWARD_QUANT_TMA;
    long resident = (long) gpu.residentBlocks(module, entry, QT_THREADS, shared) * gpu.multiprocessors();
    int blocks = (int) Math.max(1, Math.min(s.pairs(), resident));
    return new Plan(Family.QUANT_TMA, module, entry, blocks, 1, QT_THREADS, shared, true, Split.NONE,
        false, 0, 1, false, false);
  }

  /** 64-dim chunks of the query rows: 1 at d <= 64 (1-bit rows then read as 64 dims, a halfword a thread), else 2. */
  private static int quantTmaChunks(ForwardShape s) {
    return s.dim() <= 64 ? 1 : 2;
  }

  /**
   * The k-steps of 16 dims an 8-bit row of at most 64 dims takes, d / 16 (the "c1k" entries): fewer than 4 expand
   * and multiply only the row's own bytes, where the 64-dim entry reads those past it too; 4 for every other row.
   */
  private static int quantTmaRowSteps(ForwardShape s) {
    return s.documentType() != DType.BINARY && s.dim() < 64 ? s.dim() / 16 : 4;
  }

  /**
   * The tensor-map entries' slices of 128 dims for 8-bit documents of d over 128 (2, 4 or 8: the fewest that hold
   * d); 0 for the bulk-copy entries.
   */
  static int quantTmaSlices(ForwardShape s) {
    if (s.documentType() == DType.BINARY || s.dim() <= QT_MAX_DIM) {
      return 0;
    }
    int slices = 2;
    while (slices * QT_SLICE_DIMS < s.dim()) {
      slices *= 2;
    }
    return slices;
  }

  /** Whether {@code p}'s kernel reads compressed documents through a tensor map (the "_w" entries of rule 20). */
  static boolean readsTensorMap(Plan p) {
    return p.module().equals(KernelModule.FORWARD_QUANT_TMA_WIDE);
  }

  /** quantTmaSharedBytes in forward/maxsim_quant_tma.cuh, its query rows in 64-dim chunks. */
  private static int quantTmaSharedBytes(ForwardShape s) {
    int rowChunks = quantTmaSlices(s) > 0 ? 2 * quantTmaSlices(s) : quantTmaChunks(s);
    return rowChunks * QT_ROWS * 128 + QT_RING_BYTES + QT_SLOT_BYTES + 10 * QT_ROWS * 4;
  }

  /**
   * wgmma query groups, never split along Ld: each block one group of 4 queries against one of as many
   * document segments as the GPU holds blocks for every group.
   */
  static Plan wgmmaGroups(ForwardShape s, GpuCapabilities gpu) {
    String saved = !s.argmax() ? "_" : s.argmax16() ? "_argmax16_" : "_argmax_";
    Ring ring = ring(WGMMA_GROUP_ROWS, s, gpu,
        stages -> "maxsim_forward_wgmma_g4_s" + stages + saved + wgmmaTypes(s));
    int groups = groups(s.queries());
    int segments = Math.max(1, Math.min(s.perQuery(), ring.perSm() * gpu.multiprocessors() / groups));
    return new Plan(Family.WGMMA_GROUPS, KernelModule.FORWARD_WGMMA, ring.entry(), Math.multiplyExact(groups, segments), 1,
        ring.threads(), ring.sharedBytes(), true, Split.NONE, false, 0, 1, false, false);
  }

  /**
   * Rule 4: the streaming kernel, a warp per pair, the grid the warps the GPU holds at once; inference whose
   * queries are not shared takes the "_dyn" entries (half the pairs taken at run time).
   */
  static Plan stream(ForwardShape s, GpuCapabilities gpu) {
    return stream(s, gpu, !s.argmax() && !s.queriesShared());
  }

  /** The streaming kernel, its warps taking half their pairs at run time where {@code dynamic}. */
  static Plan stream(ForwardShape s, GpuCapabilities gpu, boolean dynamic) {
    String saved = !s.argmax() ? "_" : s.argmax16() ? "_argmax16_" : "_argmax_";
    String entry = "maxsim_forward_stream_c" + s.chunks() + (dynamic ? "_dyn" : "") + saved + suffix(s.queryType());
    // the tile barriers of sm_90's bulk copies, which inference takes
    int sharedBytes = (gpu.major() >= 9 && !s.argmax() ? STREAM_BARRIER_BYTES : 0)
        + (dynamic ? STREAM_QUEUE_BYTES : 0);
    long warps = (long) gpu.residentBlocks(KernelModule.FORWARD_STREAM, entry, MMA_THREADS, sharedBytes) * gpu.multiprocessors()
        * 4;
    int blocks = (int) ((Math.min(s.pairs(), warps) + 3) / 4);
    // any dynamic shared memory takes the block past the 48 KB of its rings, which needs the opt-in
    return new Plan(Family.STREAM, KernelModule.FORWARD_STREAM, entry, blocks, 1, MMA_THREADS, sharedBytes, sharedBytes > 0,
        Split.NONE, false, 0, 1, false, dynamic);
  }

  /**
   * Rules 6-8: the warp-specialized kernel, one block per SM over items (pass, pair, slice), with
   * {@code groups} row groups per warpgroup; slices only for an uneven spread ({@link #wsSlices}) or
   * {@code partials}, where the merge launch sums per-row partials; a grid on every SM with several passes
   * is ordered after the last such grid on another lane, so its passes share documents through L2.
   */
  static Plan wgmmaWs(ForwardShape s, GpuCapabilities gpu, int groups, boolean partials) {
    String entry = "maxsim_forward_wgmma_ws_k" + (s.dim() <= 64 ? 1 : 2) + (groups == 2 ? "_r256" : "")
        + (s.argmax() ? "_argmax_" : "_") + suffix(s.queryType());
    int rows = 2 * groups * WS_GROUP_ROWS;
    int passes = Math.ceilDiv(s.maxQueryLength(), rows);
    int tiles = Math.max(1, Math.ceilDiv(s.maxDocumentLength(), WS_TOKENS));
    int slices = wsSlices((long) passes * s.pairs(), tiles, gpu.multiprocessors());
    long sliceTokens = (long) Math.ceilDiv(tiles, slices) * WS_TOKENS;
    if (sliceTokens > Integer.MAX_VALUE) {
      // the kernel takes a slice's tokens as an int: one slice of whole tiles over such documents would pass it
      throw new IllegalArgumentException("documents of " + s.maxDocumentLength() + " tokens: a slice of "
          + Math.ceilDiv(tiles, slices) + " tiles of " + WS_TOKENS + " tokens holds " + sliceTokens + " tokens,"
          + " more than an int; expected documents of at most " + (Integer.MAX_VALUE / WS_TOKENS * WS_TOKENS)
          + " tokens for the warp-specialized kernel");
    }
    slices = (int) Math.ceilDiv((long) tiles * WS_TOKENS, sliceTokens);
    long items = (long) passes * s.pairs() * slices;
    int blocks = (int) Math.max(1, Math.min(items, gpu.multiprocessors()));
    boolean wholeDevice = blocks == gpu.multiprocessors() && passes > 1;
    return new Plan(Family.WGMMA_WS, KernelModule.FORWARD_WGMMA_WS, entry, blocks, 1, WS_THREADS, WS_SHARED_BYTES,
        true, new Split(slices, (int) sliceTokens, 1), slices > 1 || partials, 0, passes, wholeDevice, false);
  }

  /**
   * Rule 2: the warp-specialized kernel with query groups, one block per SM over items (group of 8 queries,
   * document) in group-major order; scores written by the kernel (one pass, no slices).
   */
  static Plan wgmmaWsQueryGroups(ForwardShape s, GpuCapabilities gpu) {
    String saved = !s.argmax() ? "_" : s.argmax16() ? "_argmax16_" : "_argmax_";
    String entry = "maxsim_forward_wgmma_ws_k" + (s.dim() <= 64 ? 1 : 2) + "_q" + WS_GROUP_QUERIES + saved
        + suffix(s.queryType());
    long items = (long) s.perQuery() * Math.ceilDiv(s.queries(), WS_GROUP_QUERIES);
    int blocks = (int) Math.max(1, Math.min(items, gpu.multiprocessors()));
    return new Plan(Family.WGMMA_WS, KernelModule.FORWARD_WGMMA_WS, entry, blocks, 1, WS_THREADS, WS_SHARED_BYTES,
        true, Split.NONE, false, 0, 1, false, false);
  }

  /**
   * Rules 9-11: the wgmma kernel, persistent blocks as many as the GPU holds; split-Ld for few pairs with
   * long documents, else ({@code splitPasses}) a query of several passes spread over grid.y so each block
   * loads its rows once.
   */
  static Plan wgmma(ForwardShape s, GpuCapabilities gpu, boolean splitPasses) {
    int rows = wgmmaRows(s.maxQueryLength());
    String saved = s.argmax() ? "_argmax_" : "_";
    Ring ring = ring(rows, s, gpu,
        stages -> "maxsim_forward_wgmma_r" + rows + "_s" + stages + saved + wgmmaTypes(s));
    Split split = splitFor(s.pairs(), s.maxDocumentLength(), false, gpu);
    int passes = Math.ceilDiv(s.maxQueryLength(), rows);
    if (split.slices() == 1 && passes > 1 && splitPasses) {
      split = Split.passes(passes);
    }
    long resident = (long) ring.perSm() * gpu.multiprocessors();
    int blocks = split.slices() > 1 ? s.pairs() : (int) Math.max(1, Math.min(s.pairs(), resident / split.passes()));
    return new Plan(Family.WGMMA, KernelModule.FORWARD_WGMMA, ring.entry(), blocks, split.gridY(), ring.threads(),
        ring.sharedBytes(), true, split, split.partials(), 0, passes, false, false);
  }

  /**
   * Rules 11-13: the block (mma.sync) kernels: 4 queries per block where {@code groups} (split along Ld only
   * where {@code groupSplit}), else a pair per block, split-Ld for few pairs with long documents.
   */
  static Plan block(ForwardShape s, GpuCapabilities gpu, boolean groups) {
    return block(s, gpu, groups, false);
  }

  static Plan block(ForwardShape s, GpuCapabilities gpu, boolean groups, boolean groupSplit) {
    int chunks = s.chunks();
    if (groups) {
      long groupBlocks = (long) s.perQuery() * groups(s.queries());
      Split split = groupSplit ? splitFor(groupBlocks, s.maxDocumentLength(), true, gpu) : Split.NONE;
      int shared = groupFragmentBytes(s);
      return new Plan(Family.BLOCK_GROUPS, KernelModule.FORWARD_MMA, "maxsim_forward_group4_" + suffix(s.queryType()),
          Math.toIntExact(groupBlocks), split.gridY(), MMA_THREADS, shared, blockOptIn(shared), split,
          split.partials(), 0, 1, false, false);
    }
    Split split = splitFor(s.pairs(), s.maxDocumentLength(), false, gpu);
    int mTiles = s.maxQueryLength() <= 32 ? 2 : 8;
    int tilesPerPass = Math.max(1, Math.min(mTiles, fragmentBudget(gpu) / (chunks * 1024)));
    int shared = tilesPerPass * chunks * 1024;
    // rule 12: fragments in registers with the next loads issued early while d <= 128, else two n-tiles a step
    String variant = mTiles == 8 ? "8n" : chunks <= MMA_REGISTER_CHUNKS ? "2rp" : "2n";
    return new Plan(Family.BLOCK, KernelModule.FORWARD_MMA, "maxsim_forward_mma" + variant + "_" + suffix(s.queryType()), s.pairs(),
        split.gridY(), MMA_THREADS, shared, blockOptIn(shared), split, split.partials(), 16 * tilesPerPass,
        1, false, false);
  }

  // ------------------------------------------------------------------------------------------- helpers

  /** A wgmma entry for a ring depth, its threads, dynamic shared memory and the blocks one SM holds. */
  private record Ring(String entry, int threads, int sharedBytes, int perSm) {}

  /** The deepest ring that still keeps two blocks per SM (they hide each other's barriers); else the deepest. */
  private static Ring ring(int rows, ForwardShape s, GpuCapabilities gpu,
      java.util.function.IntFunction<String> entry) {
    int threads = rows > 64 ? 256 : 128;
    Ring fallback = null;
    for (int i = WGMMA_STAGES.length - 1; i >= 0; i--) {
      int stages = WGMMA_STAGES[i];
      int bytes = wgmmaSharedBytes(rows, stages, s);
      if (bytes > gpu.sharedMemoryPerBlockOptin() - WGMMA_STATIC_SHARED) {
        continue;
      }
      String name = entry.apply(stages);
      Ring ring = new Ring(name, threads, bytes, gpu.residentBlocks(KernelModule.FORWARD_WGMMA, name, threads, bytes));
      if (ring.perSm() >= 2) {
        return ring;
      }
      if (fallback == null) {
        fallback = ring;
      }
    }
    return fallback;
  }

  private static boolean wgmmaFits(int rows, ForwardShape s, GpuCapabilities gpu) {
    return wgmmaSharedBytes(rows, WGMMA_STAGES[0], s) <= gpu.sharedMemoryPerBlockOptin() - WGMMA_STATIC_SHARED;
  }

  /** Query rows per wgmma pass: 32 or 64 (one warpgroup) for short queries, 128 (two warpgroups) beyond. */
  static int wgmmaRows(int maxQueryLength) {
    return maxQueryLength <= 32 ? 32 : maxQueryLength <= 64 ? 64 : 128;
  }

  /**
   * The alignment pad, one pass of query rows (all of d as the tensor cores take it, in 128-byte k-chunks) and
   * the ring, whose stages carry their tile's document scales where a side is compressed.
   */
  private static int wgmmaSharedBytes(int rows, int stages, ForwardShape s) {
    long rowBytes = (long) s.dim() * (isInt8Pair(s) ? 1 : 2);
    boolean scaled = s.queryType().isQuantized() || s.documentType().isQuantized();
    int stageBytes = WGMMA_STAGE_BYTES + (scaled ? WGMMA_SCALE_BYTES : 0);
    return WGMMA_ALIGN_PAD + (int) ((rowBytes + 127) / 128) * rows * 128 + stages * stageBytes;
  }

  /** int8 on both sides: the wgmma kernel multiplies the bytes as stored, 128 per k-chunk. */
  private static boolean isInt8Pair(ForwardShape s) {
    return s.queryType() == DType.INT8 && s.documentType() == DType.INT8;
  }

  /** The wgmma entries' type suffix: one type for both sides, else the queries' then the documents'. */
  private static String wgmmaTypes(ForwardShape s) {
    return s.queryType() == s.documentType() ? suffix(s.queryType())
        : suffix(s.queryType()) + "_" + suffix(s.documentType());
  }

  private static int groupFragmentBytes(ForwardShape s) {
    return GROUP_ROWS * GROUP_QUERIES / 16 * s.chunks() * 1024;
  }

  /**
   * Whether a block kernel with {@code shared} bytes of fragments needs the opt-in: without it the dynamic shared
   * memory may only take what its static arrays leave of 48 KB.
   */
  private static boolean blockOptIn(int shared) {
    return shared + MMA_STATIC_SHARED > DEFAULT_SHARED_BYTES;
  }

  /** Dynamic shared memory a block kernel may use for query fragments on this GPU. */
  private static int fragmentBudget(GpuCapabilities gpu) {
    return Math.min(MMA_FRAGMENT_BUDGET, gpu.sharedMemoryPerBlockOptin() - MMA_STATIC_SHARED);
  }

  private static int groups(int queries) {
    return Math.ceilDiv(queries, GROUP_QUERIES);
  }

  static String suffix(DType t) {
    return switch (t) {
      case FLOAT32 -> "f32";
      case FLOAT16 -> "f16";
      case BFLOAT16 -> "bf16";
      case INT8 -> "s8";
      case FLOAT8_E4M3 -> "e4m3";
      case BINARY -> "b1";
    };
  }
}
