package dev.maxsim4j.internal.cuda.plan;

/**
 * What the forward kernels are compiled with, as the planner sizes their launches: the threads, tiles, query rows,
 * rings and shared memory of each family, copied from the .cu file each group names. KernelConstantsTest evaluates
 * the kernels' {@code constexpr} threads, tiles, rows, rings, stages, scale slots and queues and compares them with
 * these. The rest are template arguments and entry names in the kernels rather than constants (the wgmma kernel's
 * ring depths, the query groups, the dimension limits): PlanEntriesExistTest finds every planned entry in its fatbin,
 * and the kernels trap where a launch gives them less shared memory than they lay out (the alignment pads).
 */
public final class KernelGeometry {
  private KernelGeometry() {}

  /** Shared memory above which a kernel needs the opt-in attribute (CUDA's default limit). */
  public static final int DEFAULT_SHARED_BYTES = 48 * 1024;

  // maxsim_forward.cu and maxsim_forward_scaled.cu: the FFMA kernels, a block per pair
  static final int THREADS = 256;

  // maxsim_forward_mma.cu: the block kernels (4 warps), 4 queries of at most 32 rows per group block, query
  // fragments in registers up to 4 chunks of 32 dims; their static shared memory
  static final int MMA_THREADS = 128;
  static final int GROUP_QUERIES = 4;
  static final int GROUP_ROWS = 32;
  static final int MMA_REGISTER_CHUNKS = 4;
  static final int MMA_STATIC_SHARED = 4 * 1024 + 512;

  // maxsim_forward_stream.cu: a warp per pair, d up to 4 chunks of 32 dims
  static final int STREAM_MAX_CHUNKS = 4;
  /** The run-time pair queues of the "_dyn" entries: 4 warps x 32 x 8 bytes. */
  static final int STREAM_QUEUE_BYTES = 4 * 32 * 8;
  /** The tile barriers for inference on sm_90, before the queues: 4 warps x 32 x 8 bytes. */
  static final int STREAM_BARRIER_BYTES = 4 * 32 * 8;

  // maxsim_forward_wgmma.cu: a ring stage (128 tokens x 128 bytes; a compressed side adds the tile's 128 scales),
  // its ring depths, the query groups' rows, the alignment pad and the static shared memory
  static final int WGMMA_STAGE_BYTES = 128 * 128;
  static final int WGMMA_SCALE_BYTES = 128 * 4;
  static final int[] WGMMA_STAGES = {4, 6};
  static final int WGMMA_GROUP_ROWS = 128;
  static final int WGMMA_ALIGN_PAD = 1024;
  static final int WGMMA_STATIC_SHARED = 2048;

  // maxsim_forward_wgmma_ws.cu: 3 warpgroups, pad + 192 KB ring, 64-row groups, 128-token tiles
  static final int WS_THREADS = 384;
  static final int WS_SHARED_BYTES = 1024 + 192 * 1024;
  static final int WS_GROUP_ROWS = 64;
  public static final int WS_TOKENS = 128;
  /** Its query groups: 8 queries of at most 32 tokens per 256-row pass. */
  static final int WS_GROUP_QUERIES = 8;
  /**
   * Its "_scaled" entries' static shared memory beyond the others': per ring stage (a tile of 64 halves a row at
   * d <= 64, the most stages), the tile's scales and up to 3 before them (the kernel's WS_SCALE_SLOT).
   */
  static final int WS_SCALE_SHARED = (WS_SHARED_BYTES - 1024) / (WS_TOKENS * 64 * 2) * (WS_TOKENS + 4) * 4;

  // maxsim_forward_quant.cu: 64 dims of 8-bit documents (128 of 1-bit ones) per chunk, at most 128 dims
  static final int QUANT_CHUNK_DIMS = 64;
  static final int QUANT_MAX_DIM = 128;
  /** Its pair queues of the "_dyn" entries: 4 warps x 32 x 8 bytes. */
  public static final int QUANT_QUEUE_BYTES = 4 * 32 * 8;

  // maxsim_forward_quant_wgmma.cu: one warpgroup, its ring (at most 8 stages), query rows as B (at most 64 KB of
  // them for 128 rows, else passes of 32), d up to 1024 (the widest the GPU tests run), 128-token document stages
  static final int QW_RING_BYTES = 54 * 1024;
  static final int QW_MAX_STAGES = 8;
  static final int QW_MAX_ROWS_BYTES = 64 * 1024;
  static final int QW_MAX_DIM = 1024;
  static final int QW_STAGE_TOKENS = 128;

  // maxsim_forward_quant_tma.cu: a consumer warpgroup and a producer warp, 32 query rows, 64-dim chunks, at most 128
  // dims; its dynamic shared memory: the rows (bf16, 128 bytes per chunk), the ring, 16 slots' tiles and barriers
  // (32 + 2 x 8 bytes each), the epilogue's maxima (2 x 4 x 32 floats), and the rows' weights and scales (2 x 32)
  public static final int QT_THREADS = 160;
  static final int QT_ROWS = 32;
  static final int QT_MAX_DIM = 128;
  static final int QT_RING_BYTES = 40 * 1024;
  static final int QT_SLOT_BYTES = 16 * (32 + 16);
  static final int QT_TOKENS = 64;
  // maxsim_forward_quant_tma_wide.cu: 8-bit documents of d up to 1024 in slices of 128 bytes, read through a tensor
  // map whose box is a slot's tokens (one tile)
  static final int QT_SLICE_DIMS = 128;
  static final int QT_MAX_WIDE_DIM = 1024;
  public static final int QT_BOX_ROWS = QT_TOKENS;
}
