package dev.maxsim4j.internal.cuda;

/**
 * The launch shape of the deterministic document-gradient kernel ({@code maxsim_backward_dd_owned_*} in
 * maxsim_backward.cu): each of its warps accumulates the fp32 rows of the document tokens it owns in shared
 * memory, at least one token of d floats per warp, so a block needs {@code 16 x d} bytes or more, and past the
 * default 48 KB the kernel must opt in, up to the GPU's per-block limit.
 */
final class OwnedBackward {
  /** Warps per block, as the kernel's {@code OWNED_WARPS}. */
  static final int WARPS = 4;
  /** Floats of shared memory per warp the kernel aims at, as its {@code OWNED_FLOATS_PER_WARP}. */
  static final int FLOATS_PER_WARP = 2048;

  private OwnedBackward() {}

  /** Tokens one warp owns at {@code dim}, as the kernel computes them. */
  static int tokensPerWarp(int dim) {
    return Math.max(1, Math.min(32, FLOATS_PER_WARP / dim));
  }

  /** Tokens one block owns. */
  static int tokensPerBlock(int dim) {
    return WARPS * tokensPerWarp(dim);
  }

  /**
   * The dynamic shared memory of one block at {@code dim}, at most {@code limit} bytes (the GPU's opt-in
   * maximum per block); a wider d is refused naming it, rather than failing the launch after the forward.
   */
  static int sharedBytes(int dim, int limit) {
    long bytes = (long) Float.BYTES * tokensPerBlock(dim) * dim;
    if (bytes > limit) {
      throw new IllegalArgumentException("d = " + dim + ": the deterministic GPU backward keeps " + WARPS
          + " document tokens of d fp32 values per block in shared memory, " + bytes + " bytes, more than this"
          + " GPU's " + limit + " bytes per block; expected d <= " + limit / (Float.BYTES * WARPS)
          + " on this GPU, or MaxSim.builder().deterministic(false) (atomic, fp32 gradients) or backend(\"cpu\")");
    }
    return (int) bytes;
  }
}
