package dev.maxsim4j.internal.cuda.plan;

import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.DEFAULT_SHARED_BYTES;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.GROUP_QUERIES;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.GROUP_ROWS;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.MMA_REGISTER_CHUNKS;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.MMA_STATIC_SHARED;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.MMA_THREADS;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.QT_MAX_DIM;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.QT_RING_BYTES;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.QT_ROWS;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.QT_SLICE_DIMS;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.QT_SLOT_BYTES;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.QT_THREADS;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.QUANT_CHUNK_DIMS;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.QUANT_QUEUE_BYTES;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.QW_MAX_ROWS_BYTES;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.QW_MAX_STAGES;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.QW_RING_BYTES;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.STREAM_BARRIER_BYTES;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.STREAM_QUEUE_BYTES;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.THREADS;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.WGMMA_ALIGN_PAD;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.WGMMA_GROUP_ROWS;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.WGMMA_SCALE_BYTES;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.WGMMA_STAGES;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.WGMMA_STAGE_BYTES;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.WGMMA_STATIC_SHARED;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.WS_GROUP_QUERIES;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.WS_GROUP_ROWS;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.WS_SHARED_BYTES;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.WS_THREADS;
import static dev.maxsim4j.internal.cuda.plan.KernelGeometry.WS_TOKENS;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan.Family;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan.Plan;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan.Split;

/**
 * Each forward kernel family's launch for a shape: its entry point (named after the template parameters it is
 * instantiated with), grid, threads and dynamic shared memory, from the family's {@link KernelGeometry} and the GPU's
 * occupancy. {@link ForwardPlan}'s rules choose the family; a family's plan is built here.
 */
public final class FamilyPlans {
  private FamilyPlans() {}

  /** Query fragments of one block-kernel pass: 32 rows even at d = 1024, and two blocks per SM on sm_80+. */
  private static final int MMA_FRAGMENT_BUDGET = 96 * 1024;

  /**
   * Rule 21's forward: the warp-specialized plan of the launch with documents of the queries' type (query groups
   * where they apply, else passes of 128 or 256 rows), through its "_scaled" entry.
   */
  static Plan expanded(ForwardShape s, GpuCapabilities gpu) {
    ForwardShape half = ForwardPlan.halfDocuments(s);
    Plan p = ForwardPlan.wsQueryGroupsApply(half, gpu) ? wgmmaWsQueryGroups(half, gpu)
        : wgmmaWs(half, gpu, ForwardPlan.wsGroups(half), false);
    String type = "_" + suffix(s.queryType());
    String entry = p.entry().substring(0, p.entry().length() - type.length()) + "_scaled" + type;
    return new Plan(Family.WGMMA_WS_EXPANDED, p.module(), entry, p.blocks(), p.gridY(), p.threads(), p.sharedBytes(),
        p.optIn(), p.split(), p.leavesPartials(), p.rowsPerPass(), p.queryPasses(), p.wholeDevice(), false);
  }

  /** Rule 21's expansion of {@code documents} into operands of {@code type} (maxsim_expand.cu). */
  public static String expandEntry(DType documents, DType type) {
    return "maxsim_expand_" + suffix(documents) + "_" + suffix(type);
  }

  /** The fp32 FFMA kernel: a block per pair. */
  static Plan ffma(ForwardShape s) {
    String entry = "maxsim_forward_" + suffix(s.queryType()) + "_" + suffix(s.documentType());
    return new Plan(Family.FFMA, KernelModule.FORWARD, entry, s.pairs(), 1, THREADS, 0, false, Split.NONE, false, 0,
        1, false, false);
  }

  /** The FFMA kernel with each side's scales: a block per pair, any types, the argmax where asked. */
  static Plan ffmaScaled(ForwardShape s) {
    String entry = "maxsim_forward_scaled_" + suffix(s.queryType()) + "_" + suffix(s.documentType());
    return new Plan(Family.FFMA_SCALED, KernelModule.FORWARD_SCALED, entry, s.pairs(), 1, THREADS, 0, false,
        Split.NONE, false, 0, 1, false, false);
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
    long warps = (long) gpu.residentBlocks(KernelModule.FORWARD_QUANT, entry, MMA_THREADS, queueBytes)
        * gpu.multiprocessors() * 4;
    int blocks = (int) Math.max(1, (Math.min(s.pairs(), warps) + 3) / 4);
    return new Plan(Family.QUANT, KernelModule.FORWARD_QUANT, entry, blocks, 1, MMA_THREADS, queueBytes, dynamic,
        Split.NONE, false, 0, 1, false, dynamic);
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
    return new Plan(Family.QUANT_WGMMA, KernelModule.FORWARD_QUANT_WGMMA, l.entry(), blocks, 1, MMA_THREADS,
        l.sharedBytes(), l.sharedBytes() > DEFAULT_SHARED_BYTES, Split.NONE, false, 0, 1, false, false);
  }

  /** The wgmma compressed kernel's entry, dynamic shared memory and items for {@code s}. */
  record QuantWgmmaLaunch(String entry, boolean grouped, int sharedBytes, long items) {}

  static QuantWgmmaLaunch quantWgmmaLaunch(ForwardShape s) {
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
  static int quantTmaRowSteps(ForwardShape s) {
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
  public static boolean readsTensorMap(Plan p) {
    return p.module().equals(KernelModule.FORWARD_QUANT_TMA_WIDE);
  }

  /** quantTmaSharedBytes in forward/maxsim_quant_tma.cuh, its query rows in 64-dim chunks. */
  static int quantTmaSharedBytes(ForwardShape s) {
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
    return new Plan(Family.WGMMA_GROUPS, KernelModule.FORWARD_WGMMA, ring.entry(), Math.multiplyExact(groups, segments),
        1, ring.threads(), ring.sharedBytes(), true, Split.NONE, false, 0, 1, false, false);
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
    long warps = (long) gpu.residentBlocks(KernelModule.FORWARD_STREAM, entry, MMA_THREADS, sharedBytes)
        * gpu.multiprocessors() * 4;
    int blocks = (int) ((Math.min(s.pairs(), warps) + 3) / 4);
    // any dynamic shared memory takes the block past the 48 KB of its rings, which needs the opt-in
    return new Plan(Family.STREAM, KernelModule.FORWARD_STREAM, entry, blocks, 1, MMA_THREADS, sharedBytes,
        sharedBytes > 0, Split.NONE, false, 0, 1, false, dynamic);
  }

  /**
   * Rules 6-8: the warp-specialized kernel, one block per SM over items (pass, pair, slice), with
   * {@code groups} row groups per warpgroup; slices only for an uneven spread ({@link ForwardPlan#wsSlices}) or
   * {@code partials}, where the merge launch sums per-row partials; a grid on every SM with several passes
   * is ordered after the last such grid on another lane, so its passes share documents through L2.
   */
  static Plan wgmmaWs(ForwardShape s, GpuCapabilities gpu, int groups, boolean partials) {
    String entry = "maxsim_forward_wgmma_ws_k" + (s.dim() <= 64 ? 1 : 2) + (groups == 2 ? "_r256" : "")
        + (s.argmax() ? "_argmax_" : "_") + suffix(s.queryType());
    int rows = 2 * groups * WS_GROUP_ROWS;
    int passes = Math.ceilDiv(s.maxQueryLength(), rows);
    int tiles = Math.max(1, Math.ceilDiv(s.maxDocumentLength(), WS_TOKENS));
    int slices = ForwardPlan.wsSlices((long) passes * s.pairs(), tiles, gpu.multiprocessors());
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
    Split split = ForwardPlan.splitFor(s.pairs(), s.maxDocumentLength(), gpu);
    int passes = Math.ceilDiv(s.maxQueryLength(), rows);
    // a grid row per pass where the grid holds them, else each block scans every pass itself
    if (split.slices() == 1 && passes > 1 && passes <= GpuCapabilities.MAX_GRID_Y && splitPasses) {
      split = Split.passes(passes);
    }
    long resident = (long) ring.perSm() * gpu.multiprocessors();
    int blocks = split.slices() > 1 ? s.pairs() : (int) Math.max(1, Math.min(s.pairs(), resident / split.passes()));
    return new Plan(Family.WGMMA, KernelModule.FORWARD_WGMMA, ring.entry(), blocks, split.gridY(), ring.threads(),
        ring.sharedBytes(), true, split, split.leavesPartials(), 0, passes, false, false);
  }

  /**
   * Rules 11-13: the block (mma.sync) kernels: 4 queries per block where {@code groups} (documents whole), else a
   * pair per block, split-Ld for few pairs with long documents.
   */
  static Plan block(ForwardShape s, GpuCapabilities gpu, boolean groups) {
    int chunks = s.chunks();
    if (groups) {
      long groupBlocks = (long) s.perQuery() * groups(s.queries());
      int shared = groupFragmentBytes(s);
      return new Plan(Family.BLOCK_GROUPS, KernelModule.FORWARD_MMA, "maxsim_forward_group4_" + suffix(s.queryType()),
          Math.toIntExact(groupBlocks), 1, MMA_THREADS, shared, blockOptIn(shared), Split.NONE, false, 0, 1, false,
          false);
    }
    Split split = ForwardPlan.splitFor(s.pairs(), s.maxDocumentLength(), gpu);
    int mTiles = s.maxQueryLength() <= 32 ? 2 : 8;
    int tilesPerPass = Math.max(1, Math.min(mTiles, fragmentBudget(gpu) / (chunks * 1024)));
    int shared = tilesPerPass * chunks * 1024;
    // rule 12: fragments in registers with the next loads issued early while d <= 128, else two n-tiles a step
    String variant = mTiles == 8 ? "8n" : chunks <= MMA_REGISTER_CHUNKS ? "2rp" : "2n";
    String entry = "maxsim_forward_mma" + variant + "_" + suffix(s.queryType());
    return new Plan(Family.BLOCK, KernelModule.FORWARD_MMA, entry, s.pairs(), split.gridY(), MMA_THREADS, shared,
        blockOptIn(shared), split, split.leavesPartials(), 16 * tilesPerPass, 1, false, false);
  }

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

  static boolean wgmmaFits(int rows, ForwardShape s, GpuCapabilities gpu) {
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

  static int groupFragmentBytes(ForwardShape s) {
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
  static int fragmentBudget(GpuCapabilities gpu) {
    return Math.min(MMA_FRAGMENT_BUDGET, gpu.sharedMemoryPerBlockOptin() - MMA_STATIC_SHARED);
  }

  static int groups(int queries) {
    return Math.ceilDiv(queries, GROUP_QUERIES);
  }

  /** {@code t}'s part of an entry point's name. */
  static String suffix(DType t) {
    return KernelType.of(t).suffix();
  }
}
