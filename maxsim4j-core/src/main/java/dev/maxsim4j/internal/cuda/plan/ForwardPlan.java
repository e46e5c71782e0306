package dev.maxsim4j.internal.cuda.plan;

import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.GROUP_QUERIES;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.GROUP_ROWS;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.MMA_STATIC_SHARED;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.MMA_THREADS;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.QT_MAX_DIM;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.QT_MAX_WIDE_DIM;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.QT_ROWS;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.QT_THREADS;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.QT_TOKENS;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.QUANT_MAX_DIM;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.QW_MAX_DIM;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.QW_STAGE_TOKENS;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.STREAM_MAX_CHUNKS;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.WGMMA_GROUP_ROWS;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.WGMMA_STATIC_SHARED;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.WS_GROUP_QUERIES;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.WS_GROUP_ROWS;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.WS_SCALE_SHARED;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.WS_SHARED_BYTES;

import dev.maxsim4j.DType;

/**
 * Which forward kernel runs a launch: a pure function of the launch's shape and the GPU's capabilities, as a table of
 * rules ({@link #plan}), each with the predicates it asks and its thresholds; the chosen family's entry point, grid
 * and shared memory are {@link FamilyPlans}'. Inference, training and top-k all plan here, so they choose the same
 * kernel for a shape and give the same bits. Rule numbers are the sections of docs/design/kernel-selection.md, which
 * holds the measurement behind each rule and the command that re-runs it.
 */
public final class ForwardPlan {
  private ForwardPlan() {}

  /** Rule 3: pairs per SM from which the streaming kernel pays. */
  private static final int STREAM_MIN_PAIRS_PER_SM = 4;
  /** Rules 2 and 7: the unevenness of items over SMs above which slices pay, and the one they aim for. */
  private static final double WS_SLICE_ABOVE = 1.10;
  private static final double WS_BALANCE = 1.03;
  private static final int WS_MAX_SLICES = 8;
  /** Rule 11: split-Ld aims for 8 blocks per SM, below 2 blocks per SM, in slices of at least 512 tokens. */
  private static final int SPLIT_BLOCKS_PER_SM = 8;
  private static final int SPLIT_BELOW_BLOCKS_PER_SM = 2;
  private static final int SPLIT_MIN_SLICE = 512;
  /** Rule 18: where the wgmma compressed kernel measured faster than the mma.sync one (see quantWgmmaPays). */
  private static final int QW_MAX_ONE_PASS_ROWS = 128;
  private static final int QW_MIN_GROUP_STAGES_PER_BLOCK = 8;
  private static final int QW_MIN_PAIRS_PER_BLOCK = 4;
  private static final int QW_LONG_DOCUMENT = 1024;
  /** Rule 20: documents per query, or tiles per resident block for pairwise launches, from which it pays. */
  private static final int QT_MIN_DOCUMENTS_PER_QUERY = 2;
  private static final int QT_MIN_PAIRWISE_TILES_PER_BLOCK = 9;
  /**
   * Rule 21: the most device memory a launch's expanded documents take (2 bytes a value), 250 MiB for 1000 documents
   * of 1024 tokens x 128; larger batches keep the kernels that expand each tile on its way (rules 18-20).
   */
  public static final long EXPANDED_MAX_BYTES = 256L << 20;
  /** Rule 21: the query tokens above which, or the groups of 8 queries from which, expanding first pays. */
  private static final int EXPANDED_MIN_QUERY_ROWS = 640;
  private static final int EXPANDED_MIN_GROUPS = 3;

  /**
   * The kernel families: a kernel and how its launches are shaped, each planned by its own builder in
   * {@link FamilyPlans}. Some share a .cu file (WGMMA and WGMMA_GROUPS, BLOCK and BLOCK_GROUPS, WGMMA_WS and
   * WGMMA_WS_EXPANDED) and QUANT_TMA has a second module for d over 128. Compressed sides go to FFMA_SCALED, QUANT,
   * QUANT_WGMMA, QUANT_TMA and WGMMA_WS_EXPANDED, and int8 or e4m3 documents also to WGMMA and WGMMA_GROUPS (rule 19).
   */
  public enum Family {
    FFMA, WGMMA_GROUPS, STREAM, WGMMA_WS, WGMMA, BLOCK_GROUPS, BLOCK, FFMA_SCALED, QUANT, QUANT_WGMMA, QUANT_TMA,
    /** The warp-specialized kernel's "_scaled" entries over the documents expanded first (rule 21). */
    WGMMA_WS_EXPANDED
  }

  /**
   * A launch's kernel and grid: {@code blocks} x {@code gridY} blocks of {@code threads} with
   * {@code sharedBytes} of dynamic shared memory ({@code optIn}: above the default, set first). {@code split}:
   * document slices or query passes along grid.y. {@code leavesPartials}: the blocks leave per-row partials, which
   * a merge launch reduces to scores. Family parameters: {@code rowsPerPass} (block kernels), {@code queryPasses}
   * (the warp-specialized and wgmma kernels' passes of query rows, wherever they run), {@code wholeDevice} (ordered
   * after the last such grid), {@code runTimePairs} (blocks take pairs at run time from work counters).
   */
  public record Plan(Family family, KernelModule module, String entry, int blocks, int gridY, int threads,
      int sharedBytes, boolean optIn, Split split, boolean leavesPartials, int rowsPerPass, int queryPasses,
      boolean wholeDevice, boolean runTimePairs) {}

  /**
   * How a pair spreads over blocks along grid.y: {@code slices} of {@code sliceTokens} document tokens
   * (split-Ld), or the query's {@code passes} of rows (wgmma only); at most one above 1. For the
   * warp-specialized kernel, its slices (grid.y stays 1).
   */
  public record Split(int slices, int sliceTokens, int passes) {
    static final Split NONE = new Split(1, 0, 1);

    static Split passes(int passes) {
      return new Split(1, 0, passes);
    }

    /** Whether blocks leave per-row partials for the merge launch rather than scores. */
    public boolean leavesPartials() {
      return slices > 1 || passes > 1;
    }

    int gridY() {
      return slices * passes;
    }
  }

  /** The forward kernel and grid for {@code s} on {@code gpu}: the first rule that applies. */
  public static Plan plan(ForwardShape s, GpuCapabilities gpu) {
    if (expandedPays(s, gpu)) {
      // rule 21: compressed documents expanded once, then read as bf16 ones are, many times
      return FamilyPlans.expanded(s, gpu);
    }
    return planUnexpanded(s, gpu);
  }

  /**
   * The rules but rule 21: for a launch whose expansion buffer the device cannot hold, which then takes the kernels
   * that expand each tile on their way (rules 18-20).
   */
  public static Plan planUnexpanded(ForwardShape s, GpuCapabilities gpu) {
    if (s.queryType().isQuantized() || s.documentType().isQuantized()) {
      if (wgmmaCompressedPays(s, gpu)) {
        // rule 19: int8 and e4m3 documents through the wgmma kernel's tiles (int8 on both sides as stored)
        return wgmmaGroupsPay(s, gpu) ? FamilyPlans.wgmmaGroups(s, gpu) : FamilyPlans.wgmma(s, gpu, true);
      }
      if (quantTmaPays(s, gpu)) {
        // rule 20: short float queries against 8-bit and 1-bit documents, bulk copies
        return FamilyPlans.quantTma(s, gpu);
      }
      // rule 18: compressed documents expanded in registers for the tensor cores (wgmma on sm_90, else mma),
      // else FFMA on either side
      if (quantWgmmaPays(s, gpu)) {
        return FamilyPlans.quantWgmma(s, gpu);
      }
      return quantApplies(s, gpu) ? FamilyPlans.quant(s, gpu) : FamilyPlans.ffmaScaled(s);
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
      return FamilyPlans.ffma(s); // rule 1: the types allow no mma; FFMA is also the fp32-accuracy path
    }
    if (wsQueryGroups) {
      return FamilyPlans.wgmmaWsQueryGroups(s, gpu); // rule 2: eight short queries share each document tile
    }
    if (wgmmaGroups) {
      return FamilyPlans.wgmmaGroups(s, gpu); // rule 2: four short queries share each document tile
    }
    if (stream) {
      return FamilyPlans.stream(s, gpu); // rules 3-4: a warp per pair keeps enough copies in flight
    }
    if (wgmmaWsPays(s, gpu)) {
      return FamilyPlans.wgmmaWs(s, gpu, wsGroups(s), false); // rules 5-8: TMA producer, register-resident query rows
    }
    if (wgmmaPays(s, gpu)) {
      return FamilyPlans.wgmma(s, gpu, true); // rules 9-10: wgmma wherever its shared memory fits on sm_90
    }
    return FamilyPlans.block(s, gpu, queryGroupsPay(s, gpu)); // rules 11-13: mma.sync, groups while blocks abound
  }

  /** Rule 14: the training argmax is int16 where the forward has such entries and documents fit int16. */
  public static boolean narrowArgmax(ForwardShape s, GpuCapabilities gpu) {
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
        && FamilyPlans.wgmmaFits(FamilyPlans.wgmmaRows(s.maxQueryLength()), s, gpu);
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
        && (s.dim() % 32 != 0 || !FamilyPlans.quantWgmmaLaunch(s).grouped());
    // 8-bit queries of d over 128 stay with rule 19, whose tiles multiply the stored bytes too
    boolean ownType = q == d && (bits || eightBit(d) && s.dim() <= QT_MAX_DIM);
    boolean queries = q == DType.BFLOAT16 || q == DType.FLOAT16 || ownType;
    return gpu.major() == 9 && (eightBit || bits) && queries && !s.argmax() && s.maxQueryLength() <= QT_ROWS
        && FamilyPlans.quantTmaSharedBytes(s) <= gpu.sharedMemoryPerBlockOptin();
  }

  /**
   * Rule 20: ... and pays wherever it applies for 1-bit documents, and for 8-bit documents wherever a query has at
   * least 2 of them (its rows are loaded once for them) or each resident block takes one pair (as one query against one
   * document; docs/design/kernel-selection.md holds both measurements). Launches where most pairs have a query of their
   * own (pairwise) and the blocks take several, a query load per pair, take it from 9 tiles of 64 tokens per
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
    if (s.documentType() == DType.BINARY || s.perQuery() >= QT_MIN_DOCUMENTS_PER_QUERY
        || FamilyPlans.quantTmaSlices(s) > 0 || FamilyPlans.quantTmaRowSteps(s) < 4) {
      return true;
    }
    Plan p = FamilyPlans.quantTma(s, gpu);
    long tiles = (long) s.pairs() * Math.ceilDiv(s.maxDocumentLength(), QT_TOKENS);
    long resident = (long) gpu.residentBlocks(p.module(), p.entry(), QT_THREADS, p.sharedBytes())
        * gpu.multiprocessors();
    return s.pairs() <= resident || tiles >= QT_MIN_PAIRWISE_TILES_PER_BLOCK * resident;
  }

  /**
   * Rule 20, bf16 queries: a launch of bf16 queries against int8 or e4m3 documents that takes the bulk-copy kernel
   * reads the queries' exact fp16 copy where they have one (the backend's HalfOperands), through the fp16 entries:
   * an 8-bit word expands into fp16 operands in 5 instructions, into bf16 ones in 7. 1-bit documents keep bf16 (not
   * timed).
   */
  public static boolean halfOperandsPay(ForwardShape s, Plan p) {
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
  public static boolean expansionPossible(DType queries, int queryRows, int maxQueryLength, DType documents, int dim,
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

  /** {@code s} with documents of its queries' type: what rule 21's expansion leaves. */
  static ForwardShape halfDocuments(ForwardShape s) {
    return s.withDocumentType(s.queryType());
  }

  /** int8 or e4m3: one byte a value, every value exact in bf16 and fp16. */
  public static boolean eightBit(DType t) {
    return t == DType.INT8 || t == DType.FLOAT8_E4M3;
  }

  /** Rule 2: several all-pairs queries of at most 32 tokens on sm_90, with half an item per SM. */
  static boolean wgmmaGroupsPay(ForwardShape s, GpuCapabilities gpu) {
    long items = (long) s.perQuery() * FamilyPlans.groups(s.queries());
    return wgmmaGroupsApply(s, gpu) && 2 * items >= gpu.multiprocessors();
  }

  /** Rule 2: where wgmma query groups exist: sm_90, all pairs, several queries of at most 32 tokens. */
  static boolean wgmmaGroupsApply(ForwardShape s, GpuCapabilities gpu) {
    return gpu.major() == 9 && s.layout() == PairLayout.ALL_PAIRS && s.queries() >= 2
        && s.maxQueryLength() <= GROUP_ROWS && FamilyPlans.wgmmaFits(WGMMA_GROUP_ROWS, s, gpu);
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
        ? unevenness(s.perQuery(), FamilyPlans.wgmmaGroups(s, gpu).blocks() / FamilyPlans.groups(s.queries())) : 1;
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
    return gpu.major() == 9 && FamilyPlans.wgmmaFits(FamilyPlans.wgmmaRows(s.maxQueryLength()), s, gpu);
  }

  /** Rule 13: 4 queries per block-kernel block while that still gives 4 blocks per SM. */
  static boolean queryGroupsPay(ForwardShape s, GpuCapabilities gpu) {
    long groupBlocks = (long) s.perQuery() * FamilyPlans.groups(s.queries());
    return queryGroupsApply(s, gpu) && groupBlocks >= 4L * gpu.multiprocessors();
  }

  /** Rule 13: where block-kernel query groups exist: all pairs from the first document, queries of <= 32. */
  static boolean queryGroupsApply(ForwardShape s, GpuCapabilities gpu) {
    return s.layout() == PairLayout.ALL_PAIRS && s.docOffset() == 0 && s.queries() > 1
        && s.maxQueryLength() <= GROUP_ROWS && FamilyPlans.groupFragmentBytes(s) <= FamilyPlans.fragmentBudget(gpu);
  }

  /**
   * Rule 11: split-Ld below 2 blocks per SM when documents reach 1024 tokens: slices of at least 512 tokens,
   * enough for 8 blocks per SM.
   */
  static Split splitFor(long blocks, int maxDocumentLength, GpuCapabilities gpu) {
    long wanted = (long) SPLIT_BLOCKS_PER_SM * gpu.multiprocessors();
    boolean fewBlocks = blocks < (long) SPLIT_BELOW_BLOCKS_PER_SM * gpu.multiprocessors();
    if (!fewBlocks || maxDocumentLength < 2 * SPLIT_MIN_SLICE) {
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
    FamilyPlans.QuantWgmmaLaunch l = FamilyPlans.quantWgmmaLaunch(s);
    long resident = (long) gpu.residentBlocks(KernelModule.FORWARD_QUANT_WGMMA, l.entry(), MMA_THREADS, l.sharedBytes())
        * gpu.multiprocessors();
    long stages = Math.ceilDiv(s.maxDocumentLength(), QW_STAGE_TOKENS);
    return l.grouped() ? l.items() * stages >= QW_MIN_GROUP_STAGES_PER_BLOCK * resident
        : s.maxDocumentLength() >= QW_LONG_DOCUMENT && l.items() >= QW_MIN_PAIRS_PER_BLOCK * resident;
  }
}
