package dev.maxsim4j.internal.cpu;

/**
 * The epilogue the lane-wise kernels ({@link VectorKernel}, {@link PopcountKernel}, {@link BitTableKernel})
 * share: each valid query lane holds its running max over the document's tokens and, when tracked, the buffer
 * position of the winner.
 */
final class LaneMaxima {
  private LaneMaxima() {}

  /** Starts lanes [0, pad) at -infinity and, when tracked, their winners at position 0 (the lowest on a tie). */
  static void reset(float[] runMax, float[] runArg, int pad, boolean track) {
    java.util.Arrays.fill(runMax, 0, pad, Float.NEGATIVE_INFINITY);
    if (track) {
      java.util.Arrays.fill(runArg, 0, pad, 0f);
    }
  }

  /**
   * The sum of the first {@code valid} maxima in float64, rounded once to fp32; with {@code argmax}, each lane's
   * winning position mapped to its document slot through {@code docSlots}, written at
   * {@code argmax[offset + slots[lane]]}.
   */
  static float finish(float[] runMax, float[] runArg, int valid, int[] slots, int[] docSlots, int[] argmax,
      int offset) {
    double sum = 0;
    for (int j = 0; j < valid; j++) {
      sum += runMax[j];
    }
    if (argmax != null) {
      for (int j = 0; j < valid; j++) {
        argmax[offset + slots[j]] = docSlots[(int) runArg[j]];
      }
    }
    return (float) sum;
  }
}
