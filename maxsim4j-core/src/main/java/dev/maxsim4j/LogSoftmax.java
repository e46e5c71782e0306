package dev.maxsim4j;

/**
 * log softmax over one row of {@code x * scale}, stably: {@code (z - max) - log(sum_j exp(z_j - max))}, the
 * difference to the row's max taken first, so that a tiny temperature (huge z) keeps the log-sum; NaN in the
 * row gives NaN. The log-sum is {@code log1p} of the other columns' terms, so that a column holding all but
 * ~1e-17 of the probability keeps a log-probability of about -1e-17 instead of 0 (see {@link #minus}).
 */
final class LogSoftmax {
  private final double max;
  private final double logSum;
  private final double scale;

  LogSoftmax(float[] x, int off, int n, double scale) {
    this.scale = scale;
    double m = Double.NEGATIVE_INFINITY;
    int at = -1;
    for (int j = 0; j < n; j++) {
      double v = x[off + j] * scale;
      if (Double.isNaN(v) || Double.isNaN(m)) {
        m = Double.NaN;
      } else if (at < 0 || v > m) {
        m = v;
        at = j;
      }
    }
    max = m;
    double rest = 0; // sum of exp(z_j - max) but for the max's own term, exactly 1
    if (!Double.isNaN(m) && !Double.isInfinite(m)) {
      for (int j = 0; j < n; j++) {
        rest += j == at ? 0 : Math.exp(x[off + j] * scale - m);
      }
    }
    logSum = Double.isNaN(m) || Double.isInfinite(m) ? Math.log(rest) : Math.log1p(rest);
  }

  /** log softmax of the row's value {@code x}. */
  double of(float x) {
    double z = x * scale;
    if (Double.isNaN(max) || Double.isInfinite(max)) {
      return z - max; // NaN where the row holds one; where it holds an infinity, that is the log-sum
    }
    return (z - max) - logSum;
  }

  /**
   * {@code softmax(x) - exp(logTarget)}, the gradient of cross-entropy or KL against a target probability: by
   * {@code expm1} where the two log-probabilities lie within 1 of each other, since both probabilities near 1 round
   * to 1.0 and their plain difference to 0 (which would lose the positive's gradient in a confident row).
   */
  double minus(float x, double logTarget) {
    double a = of(x);
    if (a == logTarget) {
      return 0; // also both -Infinity
    }
    return Math.abs(a - logTarget) <= 1 ? Math.exp(logTarget) * Math.expm1(a - logTarget)
        : Math.exp(a) - Math.exp(logTarget);
  }
}
