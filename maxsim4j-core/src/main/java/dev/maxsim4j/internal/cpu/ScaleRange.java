package dev.maxsim4j.internal.cpu;

/**
 * Where the kernels' fp32 product of a query token's and a document token's scale is not safe: it overflows
 * when the largest scales' product passes fp32's largest value, and loses significant bits (or becomes 0) when the
 * smallest nonzero ones' product falls below its smallest normal value. Pairs of such a query and document are
 * scored one at a time with the product taken in float64, where it is exact.
 */
final class ScaleRange {
  private ScaleRange() {}

  /** The smallest nonzero |scale| of the first {@code n}, or infinity where there is none. */
  static float smallestNonzero(float[] scales, int n) {
    float min = Float.POSITIVE_INFINITY;
    for (int i = 0; i < n; i++) {
      float a = Math.abs(scales[i]);
      if (a != 0f) {
        min = Math.min(min, a);
      }
    }
    return min;
  }

  /**
   * {@code dot} times both scales as the kernels' blocks take it, {@code dot x fl32(qs x ds)}, where that product is
   * a normal float (or 0 from a zero scale); else through the exact float64 product, rounded once.
   */
  static float scaled(float dot, float queryScale, float documentScale) {
    float product = queryScale * documentScale;
    if (Math.abs(product) >= Float.MIN_NORMAL && Math.abs(product) <= Float.MAX_VALUE || queryScale == 0f
        || documentScale == 0f) {
      return dot * product;
    }
    return (float) (dot * ((double) queryScale * documentScale));
  }

  /** Whether scales within these magnitudes may meet in an fp32 product that overflows or is not normal. */
  static boolean outOfRange(float queryLargest, float querySmallest, float documentLargest,
      float documentSmallest) {
    return (double) queryLargest * documentLargest > Float.MAX_VALUE
        || (double) querySmallest * documentSmallest < Float.MIN_NORMAL;
  }
}
