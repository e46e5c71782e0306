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
    return tolerance(q, i, normSum(q, i), maxNorm(d, j));
  }

  private static double tolerance(TokenBatch q, int i, double queryNorms, double documentNorm) {
    double eps = Math.ulp(1.0f);
    // no query norm bounds no error, whatever the document holds (0 x an infinite norm would be NaN, passing all)
    double bound = queryNorms == 0 ? 0 : queryNorms * documentNorm;
    return 4 * eps * (q.dim() + q.length(i) + 4) * bound + 1e-6;
  }

  /** The sum of the norms of row i's valid tokens. */
  private static double normSum(TokenBatch b, int i) {
    double sum = 0;
    for (int s = 0; s < b.length(i); s++) {
      if (b.isValid(i, s)) {
        sum += norm(b, i, s);
      }
    }
    return sum;
  }

  /** The largest norm among row j's valid tokens (0 where it has none; a masked token's values do not count). */
  static double maxNorm(TokenBatch b, int j) {
    double max = 0;
    for (int t = 0; t < b.length(j); t++) {
      if (b.isValid(j, t)) {
        max = Math.max(max, norm(b, j, t));
      }
    }
    return max;
  }

  /**
   * {@link #tolerance} for many pairs of the same batches, each row's norms read once (pair by pair, a large call's
   * documents would be read once per query, the bulk of a GPU test's time).
   */
  static Tolerances tolerances(TokenBatch q, TokenBatch d) {
    double[] queryNorms = new double[q.size()];
    for (int i = 0; i < q.size(); i++) {
      queryNorms[i] = normSum(q, i);
    }
    double[] documentNorms = new double[d.size()];
    for (int j = 0; j < d.size(); j++) {
      documentNorms[j] = maxNorm(d, j);
    }
    return new Tolerances(q, queryNorms, documentNorms);
  }

  /** The bounds of {@link #tolerances}: {@code of(i, j)} for query row i and document row j. */
  record Tolerances(TokenBatch q, double[] queryNorms, double[] documentNorms) {
    double of(int i, int j) {
      return tolerance(q, i, queryNorms[i], documentNorms[j]);
    }
  }
}
