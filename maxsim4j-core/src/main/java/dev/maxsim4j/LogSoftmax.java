package dev.maxsim4j;

/**
 * log softmax over one row of {@code x * scale}, stably: {@code (z - max) - log(sum_j exp(z_j - max))}, the
 * difference to the row's max taken first, so that a tiny temperature (huge z) keeps the log-sum; NaN in the
 * row gives NaN.
 */
final class LogSoftmax {
  private final double max;
  private final double logSum;
  private final double scale;

  LogSoftmax(float[] x, int off, int n, double scale) {
    this.scale = scale;
    double m = Double.NEGATIVE_INFINITY;
    for (int j = 0; j < n; j++) {
      double v = x[off + j] * scale;
      m = Double.isNaN(v) ? v : Math.max(m, v);
    }
    max = m;
    double sum = 0;
    if (!Double.isNaN(m) && !Double.isInfinite(m)) {
      for (int j = 0; j < n; j++) {
        sum += Math.exp(x[off + j] * scale - m);
      }
    }
    logSum = Math.log(sum);
  }

  /** log softmax of the row's value {@code x}. */
  double of(float x) {
    double z = x * scale;
    if (Double.isNaN(max) || Double.isInfinite(max)) {
      return z - max; // NaN where the row holds one; where it holds an infinity, that is the log-sum
    }
    return (z - max) - logSum;
  }
}
