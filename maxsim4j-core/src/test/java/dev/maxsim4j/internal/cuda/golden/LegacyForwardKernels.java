package dev.maxsim4j.internal.cuda.golden;

import dev.maxsim4j.internal.cuda.golden.LegacyFakes.Device;
import dev.maxsim4j.internal.cuda.golden.LegacyFakes.Lane;
import dev.maxsim4j.internal.cuda.golden.LegacyFakes.Params;
import dev.maxsim4j.internal.cuda.golden.LegacyFakes.DeviceTokens;

import dev.maxsim4j.DType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Which forward kernel runs a launch, and launching it: the rules that choose among the streaming kernel,
 * the wgmma kernels (sm_90), the block kernels and FFMA, each resting on an A/B run recorded in
 * docs/benchmarks.md, plus the split-Ld merge. CudaBackend calls it for inference, training and
 * top-k alike, so all three choose the same kernel for a shape and give the same bits. Used under the
 * backend's lock.
 */
final class LegacyForwardKernels {
  private static final String FORWARD = "maxsim_forward";
  private static final String FORWARD_MMA = "maxsim_forward_mma";
  private static final String FORWARD_STREAM = "maxsim_forward_stream";
  private static final String FORWARD_WGMMA = "maxsim_forward_wgmma";
  private static final String FORWARD_WGMMA_WS = "maxsim_forward_wgmma_ws";
  private static final String MERGE = "maxsim_merge";
  /** The scratch slots of the per-row partials that split launches leave for the merge. */
  private static final String PARTIAL_MAX = "partial-max";
  private static final String PARTIAL_ARGMAX = "partial-argmax";
  private static final int MERGE_WARPS = 8;
  private static final int SPLIT_BLOCKS_PER_SM = 8;
  private static final int SPLIT_BELOW_BLOCKS_PER_SM = 2;
  private static final int SPLIT_MIN_SLICE = 512;
  private static final int THREADS = 256;
  private static final int MMA_THREADS = 128;
  private static final int MMA_CHUNK = 32;
  private static final int MMA_LOAD_GROUP = 4;
  private static final int GROUP_QUERIES = 4;
  private static final int GROUP_ROWS = 32;
  private static final int MMA_REGISTER_CHUNKS = 4;
  private static final int STREAM_MAX_CHUNKS = 4;
  private static final int STREAM_MIN_PAIRS_PER_SM = 4;
  /** The "_dyn" streaming entries' per-warp pair queues (dynamic shared memory): 4 warps x 32 x 8 bytes. */
  private static final int STREAM_QUEUE_BYTES = 4 * 32 * 8;
  /**
   * Shared memory for the query fragments of one pass. Above 48 KB a kernel needs the opt-in attribute;
   * 96 KB holds 32 query rows even at d = 1024 (one pass, each document read once), and leaves room for
   * two blocks per SM on sm_80+ (whose opt-in maximum is at least 99 KB; less is clamped below).
   */
  private static final int MMA_FRAGMENT_BUDGET = 96 * 1024;
  private static final int MMA_STATIC_SHARED = 4 * 1024 + 512;
  /**
   * maxsim_forward_wgmma.cu: a ring stage (128 tokens x 64 halves), the ring depths it is built with, the
   * rows of a query group, the alignment pad of its dynamic shared memory, and a bound on its static shared
   * memory.
   */
  private static final int WGMMA_STAGE_BYTES = 128 * 128;
  private static final int[] WGMMA_STAGES = {4, 6};
  private static final int WGMMA_GROUP_ROWS = 128;
  private static final int WGMMA_ALIGN_PAD = 1024;
  private static final int WGMMA_STATIC_SHARED = 2048;
  /**
   * maxsim_forward_wgmma_ws.cu: two consumer warpgroups and a producer warpgroup, the alignment pad and
   * 192 KB of ring as dynamic shared memory, query rows of one wgmma (a row group; a warpgroup multiplies
   * one or two, so a pass has 128 or 256 rows) and document tokens per tile. Documents
   * are sliced only where the items would spread over the SMs more than {@value #WS_SLICE_ABOVE} of even
   * (slices need the merge launch, 11-19 µs on the H200, where a launch of 1000 items has a 5.5% tail of
   * ~4 µs), and then until within {@value #WS_BALANCE}, at most {@value #WS_MAX_SLICES}.
   */
  private static final int WS_THREADS = 384;
  private static final int WS_SHARED_BYTES = 1024 + 192 * 1024;
  private static final int WS_GROUP_ROWS = 64;
  private static final int WS_TOKENS = 128;
  private static final double WS_SLICE_ABOVE = 1.10;
  private static final double WS_BALANCE = 1.03;
  private static final int WS_MAX_SLICES = 8;

  private final Device device;
  private final Params params;
  /**
   * the variant, read once: forces a kernel variant for A/B measurements (null: by
   * rule). Families: "stream" (and "stream_n1", "stream_n2", "stream_r6"), "wgmma" (and "wgmma_serial"),
   * "wgmma_ws" (and "wgmma_ws_merge", "wgmma_ws_r128", "wgmma_ws_r256"), "wgroups", "nowgmma"; the block
   * kernels' "2", "2p", "2r", "2rp", "2n", "groups", "groupsplit", "pair", "nosplit", "k8"; "wide" keeps the
   * argmax in int32 and leaves the rules alone.
   */
  private final String forcedVariant = null;

  /**
   * The tensor maps the warp-specialized kernel reads documents through, by the documents they were encoded
   * for (a record: equal batches share a map), the {@value #DOCUMENT_MAPS} last used: a caller alternating a
   * few corpora (the bench rotates up to 8 copies) encodes each once. A launch copies its map, so reusing an
   * entry's memory for the next launch is safe.
   */
  private static final int DOCUMENT_MAPS = 8;
  private final Map<DeviceTokens, MemorySegment> documentMaps = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<DeviceTokens, MemorySegment> eldest) {
      return size() > DOCUMENT_MAPS;
    }
  };

  /** Where launches go: the device's own stream, or another lane for a call kept in flight. */
  private Lane lane;

  LegacyForwardKernels(Device device, Params params) {
    this.device = device;
    this.params = params;
    this.lane = device.main;
  }

  /** Makes the following launches go to {@code lane} (with its scratch and work counters) until changed back. */
  void use(Lane lane) {
    this.lane = lane;
  }

  /**
   * Launches one forward over {@code pairs} pairs. Tensor cores when queries and documents share a half
   * type, d is a multiple of 8 (16-byte rows) and the GPU supports that type's mma, in this order: wgmma
   * query groups ({@link #wgmmaGroupsPay}), the streaming kernel ({@link #streamPays}), the
   * warp-specialized wgmma kernel ({@link #wgmmaWsPays}, sm_90), the wgmma kernel ({@link #wgmmaPays}),
   * the block kernels; otherwise the fp32 FFMA kernel, which is also the
   * fp32-accuracy path for fp32 inputs. Few pairs with long documents are split along Ld
   * ({@link #splitFor}) and merged by a second launch. Inference, training and top-k choose the same way,
   * so they give the same bits.
   */
  void launch(DeviceTokens q, DeviceTokens d, int mode, int perQuery, int docOffset, int pairs,
      long scores, long argmax, int argmaxStride, int maxQueryLength, int queries) {
    launch(q, d, mode, perQuery, docOffset, pairs, scores, argmax, argmaxStride, maxQueryLength, queries,
        false);
  }

  /** As above; {@code argmax16}: the argmax is int16 (only where {@link #narrowArgmax} said so). */
  void launch(DeviceTokens q, DeviceTokens d, int mode, int perQuery, int docOffset, int pairs,
      long scores, long argmax, int argmaxStride, int maxQueryLength, int queries, boolean argmax16) {
    boolean tensorCores = tensorCores(q, d);
    boolean wgmmaGroups = tensorCores && wgmmaGroupsPay(mode, queries, perQuery, maxQueryLength, q);
    if (argmax16 && !(wgmmaGroups || tensorCores && streamPays(pairs, maxQueryLength, chunks(q)))) {
      throw new IllegalStateException("an int16 argmax needs the streaming kernel or wgmma query groups");
    }
    if (!tensorCores) {
      String kernel = FORWARD + "_" + suffix(q.dtype()) + "_" + suffix(d.dtype());
      params.set(q.data(), q.rowStart(), q.rowLength(), q.mask(), d.data(), d.rowStart(), d.rowLength(), d.mask(),
          d.validCount(), q.dim(), mode, perQuery, docOffset, 0L, scores, argmax, argmaxStride);
      device.launch(device.function(FORWARD, kernel), kernel, pairs, 1, THREADS, 0, lane.stream, params.pointers());
      return;
    }
    int chunks = chunks(q);
    if (wgmmaGroups) {
      launchWgmmaGroups(q, d, perQuery, docOffset, pairs, scores, argmax, argmaxStride, queries, argmax16);
      return;
    }
    if (streamPays(pairs, maxQueryLength, chunks)) {
      launchStream(q, d, mode, perQuery, docOffset, pairs, scores, argmax, argmaxStride, chunks, argmax16);
      return;
    }
    if (wgmmaWsPays(maxQueryLength, q.dim())) {
      launchWgmmaWs(q, d, mode, perQuery, docOffset, pairs, scores, argmax, argmaxStride, maxQueryLength);
      return;
    }
    if (wgmmaPays(maxQueryLength, q.dim())) {
      launchWgmma(q, d, mode, perQuery, docOffset, pairs, scores, argmax, argmaxStride, maxQueryLength);
      return;
    }
    String module = q.dtype() == DType.FLOAT16 && "k8".equals(forcedVariant) ? FORWARD_MMA + "_k8" : FORWARD_MMA;
    long groupBlocks = (long) perQuery * ((queries + GROUP_QUERIES - 1) / GROUP_QUERIES);
    // query groups are split along Ld only when forced ("groupsplit"): on 16x32x32x8192 the split groups
    // measured 0.213 ms against 0.197 unsplit one-pair blocks (docs/benchmarks.md)
    boolean groupSplit = "groupsplit".equals(forcedVariant);
    Split forGroups = groupSplit ? splitFor(groupBlocks, d.maxLength(), true) : Split.NONE;
    boolean groups = mode == 0 && docOffset == 0 && queryGroupsPay(queries, groupBlocks * forGroups.slices(),
        maxQueryLength, chunks, groupSplit || "groups".equals(forcedVariant));
    Split split = groups ? forGroups : splitFor(pairs, d.maxLength(), false);
    long partialMax = partialMax(split, pairs, maxQueryLength);
    long partialArgmax = partialArgmax(split, pairs, maxQueryLength);
    String kernel;
    int blocks;
    int sharedBytes;
    if (groups) {
      kernel = FORWARD + "_group4_" + suffix(q.dtype());
      sharedBytes = GROUP_ROWS * GROUP_QUERIES / 16 * chunks * 1024;
      blocks = Math.toIntExact(groupBlocks);
      params.set(q.data(), q.rowStart(), q.rowLength(), q.mask(), d.data(), d.rowStart(), d.rowLength(), d.mask(),
          d.validCount(), q.dim(), queries, perQuery, scores, argmax, argmaxStride, split.sliceTokens(), partialMax,
          partialArgmax, maxQueryLength);
    } else {
      int mTiles = maxQueryLength <= 32 ? 2 : 8;
      int tilesPerPass = Math.max(1, Math.min(mTiles, fragmentBudget() / (chunks * 1024)));
      sharedBytes = tilesPerPass * chunks * 1024;
      kernel = FORWARD + "_mma" + mmaVariant(mTiles, chunks) + "_" + suffix(q.dtype());
      blocks = pairs;
      params.set(q.data(), q.rowStart(), q.rowLength(), q.mask(), d.data(), d.rowStart(), d.rowLength(), d.mask(),
          d.validCount(), q.dim(), mode, perQuery, docOffset, 0L, scores, argmax, argmaxStride, 16 * tilesPerPass,
          split.sliceTokens(), partialMax, partialArgmax, maxQueryLength);
    }
    MemorySegment fn = device.function(module, kernel);
    if (sharedBytes > 48 * 1024) {
      device.allowDynamicSharedMemory(fn, sharedBytes);
    }
    device.launch(fn, kernel, blocks, split.gridY(), MMA_THREADS, sharedBytes, lane.stream, params.pointers());
    mergeSlices(split, q, d, mode, perQuery, docOffset, pairs, scores, argmax, argmaxStride, maxQueryLength);
  }

  /** Per (pair, slice, query row) maxima of a split launch ({@link Split}); 0 when not split. */
  private long partialMax(Split split, int pairs, int maxQueryLength) {
    return split.partials() ? partials(PARTIAL_MAX, pairs, split.slices(), maxQueryLength) : 0L;
  }

  private long partialArgmax(Split split, int pairs, int maxQueryLength) {
    return split.partials() ? partials(PARTIAL_ARGMAX, pairs, split.slices(), maxQueryLength) : 0L;
  }

  /** The scratch of one of the per-row partial arrays ({@code slot}): a 4-byte entry per (pair, slice, row). */
  private long partials(String slot, int pairs, int slices, int maxQueryLength) {
    return lane.scratch(slot, 4L * pairs * slices * maxQueryLength);
  }

  /**
   * The second launch of a split forward: merges the slices in order and sums the rows (maxsim_merge.cu);
   * split passes left their rows as one slice.
   */
  private void mergeSlices(Split split, DeviceTokens q, DeviceTokens d, int mode, int perQuery, int docOffset,
      int pairs, long scores, long argmax, int argmaxStride, int maxQueryLength) {
    if (!split.partials()) {
      return;
    }
    // split passes leave one slice covering every document: any slice length past the longest will do
    int sliceTokens = split.slices() > 1 ? split.sliceTokens() : Math.max(1, d.maxLength());
    merge(split.slices(), sliceTokens, q, d, mode, perQuery, docOffset, pairs, scores, argmax, argmaxStride,
        maxQueryLength);
  }

  /** Merges {@code slices} slices of {@code sliceTokens} tokens: the partials are always read. */
  private void merge(int slices, int sliceTokens, DeviceTokens q, DeviceTokens d, int mode, int perQuery,
      int docOffset, int pairs, long scores, long argmax, int argmaxStride, int maxQueryLength) {
    params.set(partials(PARTIAL_MAX, pairs, slices, maxQueryLength),
        partials(PARTIAL_ARGMAX, pairs, slices, maxQueryLength), slices,
        sliceTokens, maxQueryLength, q.rowStart(), q.rowLength(), q.mask(), d.rowLength(), d.validCount(),
        mode, perQuery, docOffset, scores, argmax, argmaxStride, (long) pairs);
    device.launch(device.function(MERGE, "maxsim_merge_slices"), "maxsim_merge_slices",
        (pairs + MERGE_WARPS - 1) / MERGE_WARPS, 1, MERGE_WARPS * 32, 0, lane.stream, params.pointers());
  }

  /**
   * Whether the warpgroup kernel (maxsim_forward_wgmma.cu: wgmma, sm_90 only) runs a launch: on sm_90 it
   * takes every launch the streaming kernel did not take. A/B on the H200 against the block kernels
   * (docs/benchmarks.md, v13): 1x1000x128x1024x128 0.265 -> 0.083 ms, 1x1000x1024x1024x128 2.04 -> 0.63,
   * 1x1000x32x300x512 0.134 -> 0.088, 16x32x32x8192x128 0.192 -> 0.166; where the streaming kernel applies
   * it is as fast (1x1000x32x300x128) or, lacking query reuse, slower (128x128x32x300x128 0.176 -> 0.329).
   * Property values: "wgmma" (or "wgmma_serial") forces it wherever its shared memory fits; "nowgmma" or a
   * block-kernel variant name turns it off.
   */
  private boolean wgmmaPays(int maxQueryLength, int dim) {
    if (device.major != 9 || wgmmaSharedBytes(wgmmaRows(maxQueryLength), WGMMA_STAGES[0], dim)
        > device.sharedMemoryPerBlockOptin - WGMMA_STATIC_SHARED) {
      return false;
    }
    if (forcedVariant != null && !forcedVariant.equals("wide") && !forcedVariant.equals("nosplit")) {
      return forcedVariant.startsWith("wgmma");
    }
    return true;
  }

  /** Query rows per pass: 32 or 64 (one warpgroup) for short queries, 128 (two warpgroups) beyond. */
  private static int wgmmaRows(int maxQueryLength) {
    return maxQueryLength <= 32 ? 32 : maxQueryLength <= 64 ? 64 : 128;
  }

  /** The alignment pad, one pass of query rows (all of d) and the ring. */
  private static int wgmmaSharedBytes(int rows, int stages, int dim) {
    return WGMMA_ALIGN_PAD + (dim + 63) / 64 * rows * 128 + stages * WGMMA_STAGE_BYTES;
  }

  /** A wgmma kernel, its dynamic shared memory and the blocks one SM holds. */
  private record WgmmaLaunch(String kernel, MemorySegment function, int threads, int sharedBytes, int perSm) {}

  /**
   * The deepest ring that still keeps two blocks per SM (two blocks hide each other's barriers and
   * epilogues); failing that, the deepest that fits.
   */
  private WgmmaLaunch wgmmaLaunch(int rows, int dim, java.util.function.IntFunction<String> kernelForStages) {
    int threads = rows > 64 ? 256 : 128;
    WgmmaLaunch fallback = null;
    for (int i = WGMMA_STAGES.length - 1; i >= 0; i--) {
      int stages = WGMMA_STAGES[i];
      int bytes = wgmmaSharedBytes(rows, stages, dim);
      if (bytes > device.sharedMemoryPerBlockOptin - WGMMA_STATIC_SHARED) {
        continue;
      }
      String kernel = kernelForStages.apply(stages);
      MemorySegment fn = device.function(FORWARD_WGMMA, kernel);
      device.allowDynamicSharedMemory(fn, bytes);
      WgmmaLaunch launch = new WgmmaLaunch(kernel, fn, threads, bytes,
          device.residentBlocksPerMultiprocessor(fn, threads, bytes));
      if (launch.perSm() >= 2) {
        return launch;
      }
      if (fallback == null) {
        fallback = launch;
      }
    }
    return fallback;
  }

  /**
   * Whether wgmma query groups (maxsim_forward_wgmma.cu, sm_90: four queries of at most 32 tokens stacked
   * as the 128 rows of one block, so a document tile feeds all four) run an all-pairs launch: every launch
   * of several such queries with at least half an item (document, 4 queries) per SM; fewer items leave SMs
   * idle, and those launches keep the per-pair kernels, which split long documents. Since v16 a block keeps
   * one group's rows for its whole run (groupRun) and multiplies a document's last tokens 64 wide; A/B on
   * the H200 against the streaming kernel (docs/benchmarks.md, v16; kernel ms): 128x128x32x300x128 0.179 ->
   * 0.114, 32x32 0.022 -> 0.014, 2x10000 0.342 -> 0.262, 8x1000 0.095 -> 0.061, 512x1000 5.52 -> 3.30,
   * and the training steps 128x128 0.413 -> 0.343 ms, 256x256 1.408 -> 1.201. Property value "wgroups"
   * forces them where they apply; any other forced variant turns them off.
   */
  private boolean wgmmaGroupsPay(int mode, int queries, int documents, int maxQueryLength, DeviceTokens q) {
    if (device.major != 9 || mode != 0 || queries < 2 || maxQueryLength > GROUP_ROWS
        || wgmmaSharedBytes(WGMMA_GROUP_ROWS, WGMMA_STAGES[0], q.dim())
            > device.sharedMemoryPerBlockOptin - WGMMA_STATIC_SHARED) {
      return false;
    }
    if (forcedVariant != null && !forcedVariant.equals("wide") && !forcedVariant.equals("nosplit")) {
      return forcedVariant.equals("wgroups");
    }
    long items = (long) documents * ((queries + GROUP_QUERIES - 1) / GROUP_QUERIES);
    return 2 * items >= device.multiprocessors;
  }

  /**
   * Query groups, never split along Ld: each block one group of 4 queries against one of S segments of the
   * documents, S as many as the GPU holds blocks for every group (at least 1: more groups than that run in
   * waves); see groupRun in maxsim_forward_wgmma.cu.
   */
  private void launchWgmmaGroups(DeviceTokens q, DeviceTokens d, int documents, int docOffset, int pairs,
      long scores, long argmax, int argmaxStride, int queries, boolean argmax16) {
    String saved = argmax == 0 ? "_" : argmax16 ? "_argmax16_" : "_argmax_";
    WgmmaLaunch launch = wgmmaLaunch(WGMMA_GROUP_ROWS, q.dim(), stages -> FORWARD + "_wgmma_g4_s" + stages + saved
        + suffix(q.dtype()));
    int groups = (queries + GROUP_QUERIES - 1) / GROUP_QUERIES;
    int segments = Math.max(1, Math.min(documents, launch.perSm() * device.multiprocessors / groups));
    int blocks = Math.multiplyExact(groups, segments);
    params.set(q.data(), q.rowStart(), q.rowLength(), q.mask(), d.data(), d.rowStart(), d.rowLength(), d.mask(),
        d.validCount(), q.dim(), 0, documents, docOffset, (long) pairs, scores, argmax, argmaxStride, 0, 0L, 0L, 0,
        0);
    device.launch(launch.function(), launch.kernel(), blocks, 1, launch.threads(), launch.sharedBytes(),
        lane.stream, params.pointers());
  }

  /**
   * Persistent blocks, each a contiguous run of pairs, as many as the GPU holds at once (one pair per
   * block when split along Ld). A query of several passes (over 128 rows) has its passes spread over
   * grid.y (Split.passes): a block then loads its rows once, where running a pair's passes one after
   * another reloads them for each pass, draining the copy ring (maxsim_split.cuh); the merge launch sums
   * the rows. Property value "wgmma_serial" keeps the passes in one block, for A/B runs.
   */
  private void launchWgmma(DeviceTokens q, DeviceTokens d, int mode, int perQuery, int docOffset, int pairs,
      long scores, long argmax, int argmaxStride, int maxQueryLength) {
    int rows = wgmmaRows(maxQueryLength);
    String saved = argmax != 0 ? "_argmax_" : "_";
    WgmmaLaunch launch = wgmmaLaunch(rows, q.dim(), stages -> FORWARD + "_wgmma_r" + rows + "_s" + stages + saved
        + suffix(q.dtype()));
    Split split = splitFor(pairs, d.maxLength(), false);
    int passes = (maxQueryLength + rows - 1) / rows;
    if (split.slices() == 1 && passes > 1 && !"wgmma_serial".equals(forcedVariant)) {
      split = Split.passes(passes);
    }
    long resident = (long) launch.perSm() * device.multiprocessors;
    int blocks = split.slices() > 1 ? pairs : (int) Math.max(1, Math.min(pairs, resident / split.passes()));
    params.set(q.data(), q.rowStart(), q.rowLength(), q.mask(), d.data(), d.rowStart(), d.rowLength(), d.mask(),
        d.validCount(), q.dim(), mode, perQuery, docOffset, (long) pairs, scores, argmax, argmaxStride,
        split.sliceTokens(), partialMax(split, pairs, maxQueryLength), partialArgmax(split, pairs, maxQueryLength),
        maxQueryLength, split.passes() > 1 ? 1 : 0);
    device.launch(launch.function(), launch.kernel(), blocks, split.gridY(), launch.threads(), launch.sharedBytes(),
        lane.stream, params.pointers());
    mergeSlices(split, q, d, mode, perQuery, docOffset, pairs, scores, argmax, argmaxStride, maxQueryLength);
  }

  /**
   * Whether the warp-specialized wgmma kernel (maxsim_forward_wgmma_ws.cu, sm_90, d <= 128) runs a launch:
   * queries of more than 64 tokens (two warpgroups of 64 rows), so every launch the wgmma kernel would run
   * with 128-row passes. A/B on the H200 against the wgmma kernel (docs/benchmarks.md, v22-v24):
   * 1x1000x1024x1024x128 kernel 0.55-0.58 -> 0.42-0.45 ms, per call in flight 0.59 -> 0.45-0.48;
   * 1x1000x128x1024x128 per call in flight 0.0685 -> 0.0589, awaited 0.097 -> 0.089 (v24d: sums in the
   * kernel and no slices; before v24 its slices and merge launch made it slower there). Property values
   * "wgmma_ws" (and the other "wgmma_ws_" ones) force it wherever d <= 128 (any Lq); any other forced
   * variant turns it off.
   */
  private boolean wgmmaWsPays(int maxQueryLength, int dim) {
    if (device.major != 9 || dim > 128 || !device.tensorMaps
        || WS_SHARED_BYTES > device.sharedMemoryPerBlockOptin - WGMMA_STATIC_SHARED) {
      return false;
    }
    if (forcedVariant != null && !forcedVariant.equals("wide") && !forcedVariant.equals("nosplit")) {
      return forcedVariant.startsWith("wgmma_ws");
    }
    return maxQueryLength > WS_GROUP_ROWS;
  }

  /**
   * Row groups of 64 per consumer warpgroup in the warp-specialized kernel: 2 (passes of 256 rows, each
   * document tile read from L2 once per 256 rows instead of 128) for queries of more than 128 tokens, else
   * 1. A/B on the H200 (docs/benchmarks.md, v25, v25b): 1x1000x1024x1024x128 0.445-0.466 -> 0.372-0.385 ms a
   * kernel, 1x1000x256x1024x128 0.126-0.133 -> 0.110-0.118. Property values "wgmma_ws_r128" and
   * "wgmma_ws_r256" force 1 and 2 (and the kernel).
   */
  private int wsGroups(int maxQueryLength) {
    if ("wgmma_ws_r128".equals(forcedVariant)) {
      return 1;
    }
    if ("wgmma_ws_r256".equals(forcedVariant)) {
      return 2;
    }
    return maxQueryLength > 2 * WS_GROUP_ROWS ? 2 : 1;
  }

  /**
   * One block per SM over items (pass, pair, slice); slices only for launches whose items would spread
   * unevenly over the SMs ({@link #wsSlices}). Without slices the kernel writes the scores itself (its
   * epilogue warp adds each pass's rows, the pair's last pass the passes); with slices each item leaves
   * per-row partials that the merge launch sums. Property value "wgmma_ws_merge": partials and the merge
   * in every launch, an A/B variant.
   */
  private void launchWgmmaWs(DeviceTokens q, DeviceTokens d, int mode, int perQuery, int docOffset, int pairs,
      long scores, long argmax, int argmaxStride, int maxQueryLength) {
    int groups = wsGroups(maxQueryLength);
    String kernel = FORWARD_WGMMA_WS + "_k" + (q.dim() <= 64 ? 1 : 2) + (groups == 2 ? "_r256" : "")
        + (argmax != 0 ? "_argmax_" : "_") + suffix(q.dtype());
    MemorySegment fn = device.function(FORWARD_WGMMA_WS, kernel);
    device.allowDynamicSharedMemory(fn, WS_SHARED_BYTES);
    int rows = 2 * groups * WS_GROUP_ROWS;
    int passes = (maxQueryLength + rows - 1) / rows;
    int tiles = Math.max(1, (d.maxLength() + WS_TOKENS - 1) / WS_TOKENS);
    int slices = wsSlices((long) passes * pairs, tiles, device.multiprocessors);
    int sliceTokens = (tiles + slices - 1) / slices * WS_TOKENS;
    slices = (tiles * WS_TOKENS + sliceTokens - 1) / sliceTokens;
    long items = (long) passes * pairs * slices;
    int blocks = (int) Math.max(1, Math.min(items, device.multiprocessors));
    // without slices the kernel sums the scores itself (its epilogue warp), no merge launch; "wgmma_ws_merge"
    // forces per-row partials and the merge, for A/B runs (docs/benchmarks.md, v24)
    boolean partials = slices > 1 || "wgmma_ws_merge".equals(forcedVariant);
    params.set(q.data(), q.rowStart(), q.rowLength(), q.mask(), d.rowStart(), d.rowLength(), d.mask(),
        d.validCount(), q.dim(), mode, perQuery, docOffset, (long) pairs, passes, slices, sliceTokens,
        partials ? partials(PARTIAL_MAX, pairs, slices, maxQueryLength) : 0L,
        partials ? partials(PARTIAL_ARGMAX, pairs, slices, maxQueryLength) : 0L, maxQueryLength,
        partials ? 0L : scores, partials ? 0L : argmax, argmaxStride,
        partials ? 0L : lane.scratch("ws-pass-sums", 4L * pairs * passes),
        partials ? 0L : lane.zeroedScratch("ws-arrivals", 4L * pairs), documentsMap(d));
    // a grid on every SM that reads each document once per pass runs after the last such grid on another
    // lane, not interleaved with it (its passes share the document through L2 only while they run
    // together); a grid of one pass overlaps the other lane's, which fills its tail
    boolean wholeDevice = blocks == device.multiprocessors && passes > 1;
    if (wholeDevice) {
      device.orderWholeDeviceLaunch(lane);
    }
    device.launch(fn, kernel, blocks, 1, WS_THREADS, WS_SHARED_BYTES, lane.stream, params.pointers());
    if (wholeDevice) {
      device.markWholeDeviceLaunch(lane);
    }
    if (partials) {
      merge(slices, sliceTokens, q, d, mode, perQuery, docOffset, pairs, scores, argmax, argmaxStride,
          maxQueryLength);
    }
  }

  /**
   * 1 where {@code items} spread over the SMs within {@value #WS_SLICE_ABOVE} of even; else slices (a power
   * of two, at most one per tile) until {@code items} x slices spread within {@value #WS_BALANCE}.
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

  /** The tensor map over {@code d}'s tokens in ring stages: boxes of 128 tokens x 64 halves. */
  private MemorySegment documentsMap(DeviceTokens d) {
    MemorySegment map = documentMaps.get(d);
    if (map == null) {
      map = Arena.ofAuto().allocate(128, 64);
      LegacyFakes.encodeTiled2d(map, d.dtype() == DType.BFLOAT16, d.data(), Math.max(1, d.storedTokens()), d.dim(),
          WS_TOKENS, 64);
      documentMaps.put(d, map);
    }
    return map;
  }

  /** bf16 mma needs sm_80; fp16 has tensor cores from sm_75 (m16n8k8, see maxsim_forward_mma.cu). */
  private boolean tensorCores(DeviceTokens q, DeviceTokens d) {
    return q.dtype() == d.dtype() && q.dim() % 8 == 0
        && (q.dtype() == DType.BFLOAT16 && device.major >= 8
            || q.dtype() == DType.FLOAT16 && (device.major > 7 || device.major == 7 && device.minor >= 5));
  }

  private static int chunks(DeviceTokens q) {
    return (q.dim() + MMA_CHUNK - 1) / MMA_CHUNK;
  }

  /**
   * Whether a device-only training step keeps its argmax in int16: the streaming kernel runs the forward
   * (the one forward with an int16 variant) and every document is shorter than 32768 tokens. Half the
   * argmax memory (256x256x32x300: 8 -> 4 MiB of the op's 29.3). The property value "wide" keeps int32.
   */
  boolean narrowArgmax(DeviceTokens q, DeviceTokens d, int mode, int perQuery, int pairs, int maxQueryLength,
      int queries) {
    return tensorCores(q, d) && (streamPays(pairs, maxQueryLength, chunks(q))
        || wgmmaGroupsPay(mode, queries, perQuery, maxQueryLength, q))
        && d.maxLength() < Short.MAX_VALUE && !"wide".equals(forcedVariant);
  }

  /**
   * The warp-per-pair streaming kernel (maxsim_forward_stream.cu, sm_80+) takes every launch it applies to
   * (queries of at most 32 tokens, d <= 128) with at least {@value #STREAM_MIN_PAIRS_PER_SM} pairs per SM,
   * after wgmma query groups (sm_90, several queries) had their pick. A/B on the H200 (docs/benchmarks.md,
   * v12): faster than the block kernel on every such shape (1x10000x32x300x128 0.264 -> 0.216 ms); on
   * 16x32x32x8192 (512 pairs) 1.8x slower: too few warps to keep enough tiles in flight. Property values:
   * "stream" (or "stream_n1", "stream_n2", "stream_r6": kernel variants) forces it wherever it applies; any
   * other name turns it off.
   */
  private boolean streamPays(int pairs, int maxQueryLength, int chunks) {
    if (maxQueryLength > 32 || chunks > STREAM_MAX_CHUNKS || device.major < 8) {
      return false;
    }
    if (forcedVariant != null && !forcedVariant.equals("wide")) {
      return forcedVariant.startsWith("stream");
    }
    return pairs >= (long) STREAM_MIN_PAIRS_PER_SM * device.multiprocessors;
  }

  /**
   * One warp per pair, the grid sized to the warps the GPU holds at once. Inference over one query (or one
   * pair per query) takes the "_dyn" entries, whose warps take half their pairs at run time from the
   * device's work counters (1x10000x32x300x128 0.217 -> 0.189 ms with the prefetch hint, docs/benchmarks.md
   * v15); with several queries a static split keeps each warp on one query's fragments.
   */
  private void launchStream(DeviceTokens q, DeviceTokens d, int mode, int perQuery, int docOffset, int pairs,
      long scores, long argmax, int argmaxStride, int chunks, boolean argmax16) {
    // A/B variants for d in (32, 64] and (96, 128]: "stream_n1" / "stream_n2" (n-tiles per step; n1 exists
    // for c2, n2 for c4), "stream_r6" (6 KB ring); "stream" forces the default entries
    String variant = switch (forcedVariant == null ? "" : forcedVariant) {
      case "stream_n1" -> chunks == 2 ? "_n1" : "";
      case "stream_n2" -> chunks == 4 ? "_n2" : "";
      case "stream_r6" -> chunks % 2 == 0 ? "_r6" : "";
      default -> "";
    };
    boolean queriesShared = perQuery > 1 && pairs > perQuery;
    boolean dynamic = argmax == 0 && !queriesShared && variant.isEmpty();
    String saved = argmax == 0 ? "_" : argmax16 ? "_argmax16_" : "_argmax_";
    String kernel = FORWARD + "_stream_c" + chunks + (dynamic ? "_dyn" : variant) + saved + suffix(q.dtype());
    MemorySegment fn = device.function(FORWARD_STREAM, kernel);
    int queueBytes = dynamic ? STREAM_QUEUE_BYTES : 0;
    if (dynamic) {
      device.allowDynamicSharedMemory(fn, queueBytes);
    }
    long warps = (long) device.residentBlocksPerMultiprocessor(fn, MMA_THREADS, queueBytes) * device.multiprocessors
        * 4;
    int blocks = (int) ((Math.min(pairs, warps) + 3) / 4);
    params.set(q.data(), q.rowStart(), q.rowLength(), q.mask(), d.data(), d.rowStart(), d.rowLength(), d.mask(),
        d.validCount(), q.dim(), mode, perQuery, docOffset, (long) pairs, scores, argmax, argmaxStride,
        dynamic ? lane.workCounters() : 0L);
    device.launch(fn, kernel, blocks, 1, MMA_THREADS, queueBytes, lane.stream, params.pointers());
  }

  /**
   * How a launch spreads a pair over blocks along grid.y: {@code slices} of {@code sliceTokens} document
   * tokens each (split-Ld), or the query's {@code passes} of rows (wgmma only); at most one above 1.
   */
  private record Split(int slices, int sliceTokens, int passes) {
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

  /**
   * Split-Ld for launches of too few blocks with long documents: below {@value #SPLIT_BELOW_BLOCKS_PER_SM}
   * blocks per SM (or when {@code forced}), slices of at least {@value #SPLIT_MIN_SLICE} tokens until the
   * grid has {@value #SPLIT_BLOCKS_PER_SM} blocks per SM. Measured on the H200: 4x8x32x32768 0.529 -> 0.075
   * ms, 2x16x32x8192 0.144 -> 0.028; 16x32x32x8192 (512 pairs, ~4 blocks per SM already) gained nothing.
   * The property values "nosplit" and "stream*" (the streaming kernel does not split) turn it off.
   */
  private Split splitFor(long blocks, int maxDocumentLength, boolean forced) {
    long wanted = (long) SPLIT_BLOCKS_PER_SM * device.multiprocessors;
    boolean fewBlocks = blocks < (long) SPLIT_BELOW_BLOCKS_PER_SM * device.multiprocessors;
    boolean off = forcedVariant != null && (forcedVariant.equals("nosplit") || forcedVariant.startsWith("stream"));
    if (!(fewBlocks || forced) || maxDocumentLength < 2 * SPLIT_MIN_SLICE || off) {
      return Split.NONE;
    }
    long slices = Math.min(Math.max(2, (wanted + blocks - 1) / blocks), maxDocumentLength / SPLIT_MIN_SLICE);
    int step = 64; // a multiple of every kernel's token step (warps x 8 x n-tiles)
    int sliceTokens = (int) ((maxDocumentLength + slices - 1) / slices + step - 1) / step * step;
    int count = (maxDocumentLength + sliceTokens - 1) / sliceTokens;
    return count < 2 ? Split.NONE : new Split(count, sliceTokens, 1);
  }

  /** Dynamic shared memory a tensor-core launch may use for query fragments on this device. */
  private int fragmentBudget() {
    return Math.min(MMA_FRAGMENT_BUDGET, device.sharedMemoryPerBlockOptin - MMA_STATIC_SHARED);
  }

  /**
   * Whether stacking 4 queries per block pays. A/B on the H200 (docs/results/ab-groups-*): 8x1000 and
   * 128x128 (x32x300x128) 22% and 10% faster; 16x32x32x8192 1.6x slower, because 4 groups x 32 documents
   * is 128 blocks for 132 SMs. So: only while the groups (with their split-Ld slices, counted in
   * {@code blocks}) still give several blocks per SM. The property value "pair" turns groups off, "groups"
   * forces them (since v12 the streaming kernel takes the launches groups used to win).
   */
  private boolean queryGroupsPay(int queries, long blocks, int maxQueryLength, int chunks, boolean forced) {
    return queries > 1 && maxQueryLength <= GROUP_ROWS
        && GROUP_ROWS * GROUP_QUERIES / 16 * chunks * 1024 <= fragmentBudget()
        && (forced || blocks >= 4L * device.multiprocessors)
        && !"pair".equals(forcedVariant);
  }

  /**
   * Which tensor-core variant (see maxsim_forward_mma.cu) runs a launch. By an A/B run of every applicable
   * variant on the H200 (docs/benchmarks.md, docs/results/ab-variants-*): for d <= 128 the variant with
   * query fragments in registers and the next n-tile's loads issued early ("2rp") was fastest on every
   * shape but d = 64, where plain "2" was ~5% ahead (within run-to-run spread); beyond d = 128, two n-tiles
   * per step ("2n"); beyond 32 query rows per pass, "8n". The system property the variant
   * forces a variant where it applies, for such measurements.
   */
  private String mmaVariant(int mTiles, int chunks) {
    if (mTiles == 8) {
      return "8n";
    }
    boolean fitsRegisters = chunks <= MMA_LOAD_GROUP && chunks <= MMA_REGISTER_CHUNKS;
    String forced = forcedVariant;
    if (forced != null) {
      boolean applies = switch (forced) {
        case "2", "2n" -> true;
        case "2p" -> chunks <= MMA_LOAD_GROUP;
        case "2r", "2rp" -> fitsRegisters;
        default -> false;
      };
      if (applies) {
        return forced;
      }
    }
    return fitsRegisters ? "2rp" : "2n";
  }

  static String suffix(DType t) {
    return switch (t) {
      case FLOAT32 -> "f32";
      case FLOAT16 -> "f16";
      case BFLOAT16 -> "bf16";
    };
  }
}
