package dev.maxsim4j.lucene;

import dev.maxsim4j.TokenBatch;

/**
 * Lucene's SUM_MAX_SIM value {@code (n + S) / 2} of a raw MaxSim sum {@code S} over {@code n} query tokens, computed
 * from the sum of the halved query, {@code S / 2}: halving is exact (a power of two), so each dot product, each max
 * and each fp32 partial sum is exactly half the raw one, and the value stays finite where {@code S} itself passes
 * fp32's range but {@code (n + S) / 2} does not, as Lucene's sum of halves does.
 */
final class LuceneScale {
  private LuceneScale() {}

  /** {@code query}, a float batch, with every value halved; its masks and lengths are those of a plain batch. */
  static TokenBatch halved(TokenBatch query) {
    float[] data = query.toFloatArray();
    for (int i = 0; i < data.length; i++) {
      data[i] *= 0.5f;
    }
    return TokenBatch.ofFloats(data, query.size(), query.maxLength(), query.dim());
  }

  /** The value of a document whose sum against the {@link #halved} query of {@code n} tokens is {@code halfSum}. */
  static float value(int n, float halfSum) {
    return (float) (n / 2.0 + halfSum);
  }
}
