package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.internal.cuda.plan.GpuCapabilities;

/**
 * The launch shapes of the backward kernels (maxsim_backward.cu), checked before any work: a grid has at most
 * 65,535 rows ({@code blockIdx.y}), and the deterministic document-gradient kernel ({@code _dd_owned_}) keeps
 * the fp32 rows of the document tokens each warp owns in shared memory, at least one token of d floats per
 * warp, so a block needs {@code 16 x d} bytes or more: past the default 48 KB the kernel must opt in, up to the
 * GPU's per-block limit. A shape past a limit is refused naming the size, not a failed launch.
 */
final class BackwardLaunch {
  /** Warps per block of the query-gradient and atomic kernels, one query slot each, as their BACKWARD_WARPS. */
  static final int SLOT_WARPS = 8;
  /** Warps per block of the owned kernel, as its {@code OWNED_WARPS}. */
  static final int WARPS = 4;
  /** Floats of shared memory per warp the owned kernel aims at, as its {@code OWNED_FLOATS_PER_WARP}. */
  static final int FLOATS_PER_WARP = 2048;
  private static final String WAYS_OUT = "MaxSim.builder().deterministic(false) (atomic, fp32 gradients) or"
      + " backend(\"cpu\")";

  private BackwardLaunch() {}

  /** Tokens one warp of the owned kernel owns at {@code dim}, as the kernel computes them. */
  static int tokensPerWarp(int dim) {
    return Math.max(1, Math.min(32, FLOATS_PER_WARP / dim));
  }

  /** Tokens one block of the owned kernel owns. */
  static int tokensPerBlock(int dim) {
    return WARPS * tokensPerWarp(dim);
  }

  /**
   * The owned kernel's dynamic shared memory per block at {@code dim}, at most {@code limit} bytes (the GPU's
   * opt-in maximum per block).
   */
  static int sharedBytes(int dim, int limit) {
    long bytes = (long) Float.BYTES * tokensPerBlock(dim) * dim;
    if (bytes > limit) {
      throw new IllegalArgumentException("d = " + dim + ": the deterministic GPU backward keeps " + WARPS
          + " document tokens of d fp32 values per block in shared memory, " + bytes + " bytes, more than this"
          + " GPU's " + limit + " bytes per block; expected d <= " + limit / (Float.BYTES * WARPS)
          + " on this GPU, or " + WAYS_OUT);
    }
    return (int) bytes;
  }

  /** Grid rows of the owned kernel for documents of up to {@code longestDocument} tokens at {@code dim}. */
  static int ownedGridRows(int longestDocument, int dim) {
    int perBlock = tokensPerBlock(dim);
    int rows = Math.ceilDiv(longestDocument, perBlock);
    if (rows > GpuCapabilities.MAX_GRID_Y) {
      throw new IllegalArgumentException("the longest document holds " + longestDocument + " tokens; the"
          + " deterministic GPU backward at d = " + dim + " takes at most "
          + (long) GpuCapabilities.MAX_GRID_Y * perBlock + " (" + GpuCapabilities.MAX_GRID_Y + " blocks of "
          + perBlock + " tokens); expected shorter documents, or " + WAYS_OUT);
    }
    return rows;
  }

  /** Grid rows of the query-gradient and atomic kernels for queries of up to {@code longestQuery} tokens. */
  static int slotGridRows(int longestQuery) {
    int rows = Math.ceilDiv(longestQuery, SLOT_WARPS);
    if (rows > GpuCapabilities.MAX_GRID_Y) {
      throw new IllegalArgumentException("the longest query holds " + longestQuery + " tokens; the GPU backward"
          + " takes at most " + (long) GpuCapabilities.MAX_GRID_Y * SLOT_WARPS + " (" + GpuCapabilities.MAX_GRID_Y
          + " blocks of " + SLOT_WARPS + " query tokens); expected shorter queries, or backend(\"cpu\")");
    }
    return rows;
  }
}
