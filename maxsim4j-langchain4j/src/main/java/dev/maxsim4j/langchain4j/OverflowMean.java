package dev.maxsim4j.langchain4j;

import dev.maxsim4j.TokenBatch;
import java.util.Arrays;

/**
 * The mean best dot product of a query and one segment in float64, for a MaxSim sum that passed fp32's range (an
 * infinity, or NaN where one token's best passed +Inf and another's -Inf) although its mean over the query's tokens
 * may not: each product and sum of fp32 values is exact or nearly so in float64, whatever their size. Quantized values
 * are taken as code times scale in float64, since their fp32 dequantization may itself pass fp32's range.
 */
final class OverflowMean {
  private OverflowMean() {}

  /** A batch's values in float64. */
  static final class Values {
    private final TokenBatch batch;
    private final TokenBatch codes; // the batch with every scale 1, where quantized: its codes' own values
    private final float[] scales;
    private final int[] offsets;

    Values(TokenBatch batch) {
      this.batch = batch;
      boolean quantized = batch.dtype().isQuantized();
      this.scales = quantized ? batch.scales() : null;
      this.offsets = batch.isPacked() ? batch.offsets() : null;
      this.codes = quantized ? withUnitScales(batch, scales.length, offsets) : batch;
    }

    /** Element {@code k} of slot {@code t} of row {@code row}. */
    double get(int row, int t, int k) {
      if (scales == null) {
        return batch.get(row, t, k);
      }
      int slot = (offsets != null ? offsets[row] : row * batch.maxLength()) + t;
      return (double) codes.get(row, t, k) * scales[slot]; // codes are exact in fp32 (int8, e4m3, ±1)
    }
  }

  /** The valid tokens of {@code query}'s one row as float64 values. */
  static double[][] exactQuery(TokenBatch query) {
    Values values = new Values(query);
    double[][] out = new double[query.validTokens(0)][query.dim()];
    for (int t = 0, j = 0; t < query.length(0); t++) {
      if (query.isValid(0, t)) {
        for (int k = 0; k < query.dim(); k++) {
          out[j][k] = values.get(0, t, k);
        }
        j++;
      }
    }
    return out;
  }

  /** The mean over {@code query}'s tokens of each one's best dot product with a valid token of row {@code row}. */
  static double mean(double[][] query, Values documents, int row) {
    TokenBatch d = documents.batch;
    double sum = 0;
    for (double[] q : query) {
      double best = Double.NEGATIVE_INFINITY;
      for (int j = 0; j < d.length(row); j++) {
        if (d.isValid(row, j)) {
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

  /** {@code batch} with every scale 1: its codes as they are, its row layout kept. */
  private static TokenBatch withUnitScales(TokenBatch batch, int slots, int[] offsets) {
    float[] ones = new float[slots];
    Arrays.fill(ones, 1f);
    byte[] codes = batch.toByteArray();
    return offsets != null
        ? TokenBatch.packedBytes(batch.dtype(), codes, ones, offsets, batch.dim())
        : TokenBatch.ofBytes(batch.dtype(), codes, ones, batch.size(), batch.maxLength(), batch.dim());
  }
}
