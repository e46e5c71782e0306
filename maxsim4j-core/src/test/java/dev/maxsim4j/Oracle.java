package dev.maxsim4j;

/**
 * Float64 arithmetic on batches for assertions: exact dot products, error bounds for fp32 kernels, and
 * the backward written from its definition (gradient to the recorded argmax).
 */
final class Oracle {
  private Oracle() {}

  static double dot(TokenBatch a, int i, int s, TokenBatch b, int j, int t) {
    double sum = 0;
    for (int k = 0; k < a.dim(); k++) {
      sum += (double) a.get(i, s, k) * b.get(j, t, k);
    }
    return sum;
  }

  static double norm(TokenBatch a, int i, int s) {
    double sq = 0;
    for (int k = 0; k < a.dim(); k++) {
      sq += (double) a.get(i, s, k) * a.get(i, s, k);
    }
    return Math.sqrt(sq);
  }

  /**
   * A bound on how far an fp32-accumulating kernel may land from the float64 score of a pair: every dot
   * product carries at most about d units of rounding of |q||d|, the sum over query tokens about Lq more.
   */
  static double tolerance(TokenBatch q, int i, TokenBatch d, int j) {
    double maxDocNorm = 0;
    for (int t = 0; t < d.length(j); t++) {
      if (d.isValid(j, t)) {
        maxDocNorm = Math.max(maxDocNorm, norm(d, j, t));
      }
    }
    double bound = 0;
    for (int s = 0; s < q.length(i); s++) {
      if (q.isValid(i, s)) {
        bound += norm(q, i, s) * maxDocNorm;
      }
    }
    double eps = Math.ulp(1.0f);
    return 4 * eps * (q.dim() + q.length(i) + 4) * bound + 1e-6;
  }
}
