package dev.maxsim4j.langchain4j;

import dev.maxsim4j.TokenBatch;

/**
 * The mean best dot product of a query and one segment in float64, for a MaxSim sum that passed fp32's range (an
 * infinity, or NaN where one token's best passed +Inf and another's -Inf) although its mean over the query's tokens
 * may not: each product and sum of fp32 values is exact or nearly so in float64, whatever their size. Quantized query
 * values are taken as code times scale in float64, since their fp32 dequantization may itself pass fp32's range.
 */
final class OverflowMean {
  private OverflowMean() {}

  /** The valid tokens of {@code query}'s one row as float64 values. */
  static double[][] exactQuery(TokenBatch query) {
    double[][] out = new double[query.validTokens(0)][query.dim()];
    TokenBatch codes = query;
    float[] scales = null;
    int first = 0;
    if (query.dtype().isQuantized()) {
      codes = withUnitScales(query); // the codes' own values, exact in fp32 (int8, e4m3, ±1)
      scales = query.scales();
      first = query.isPacked() ? query.offsets()[0] : 0;
    }
    for (int t = 0, j = 0; t < query.length(0); t++) {
      if (query.isValid(0, t)) {
        for (int k = 0; k < query.dim(); k++) {
          out[j][k] = scales == null ? query.get(0, t, k) : (double) codes.get(0, t, k) * scales[first + t];
        }
        j++;
      }
    }
    return out;
  }

  /** The mean over {@code query}'s tokens of each one's best dot product with a valid token of row {@code row}. */
  static double mean(double[][] query, TokenBatch documents, int row) {
    double sum = 0;
    for (double[] q : query) {
      double best = Double.NEGATIVE_INFINITY;
      for (int j = 0; j < documents.length(row); j++) {
        if (documents.isValid(row, j)) {
          double dot = 0;
          for (int k = 0; k < q.length; k++) {
            dot += q[k] * documents.get(row, j, k);
          }
          best = Math.max(best, dot); // NaN wins, as in the kernels
        }
      }
      sum += best;
    }
    return sum / query.length;
  }

  /** {@code query} with every scale 1: its codes as they are, its row layout and mask kept. */
  private static TokenBatch withUnitScales(TokenBatch query) {
    byte[] codes = query.toByteArray();
    float[] ones = new float[query.scales().length];
    java.util.Arrays.fill(ones, 1f);
    return query.isPacked()
        ? TokenBatch.packedBytes(query.dtype(), codes, ones, query.offsets(), query.dim())
        : TokenBatch.ofBytes(query.dtype(), codes, ones, query.size(), query.maxLength(), query.dim());
  }
}
