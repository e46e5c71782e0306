package dev.maxsim4j.lucene;

import dev.maxsim4j.TokenBatch;

/**
 * Lucene's SUM_MAX_SIM value {@code (n + S) / 2} of a raw MaxSim sum {@code S} over {@code n} query tokens. Where
 * {@code S} passes fp32's range, {@code (n + S) / 2} need not (Lucene's own sum of halves does not), so the value then
 * comes from the halved query's sum, {@code S / 2}: halving is exact for normal values, so that sum is within
 * rounding of half the raw one, and the subnormal query values that halving rounds cannot show beside a sum that
 * large. The raw sum serves every other case, where halving a subnormal value could drop a visible product.
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

  /** Whether a raw sum needs the {@link #halved} query's: it passed fp32's range. */
  static boolean needsHalved(float sum) {
    return Float.isInfinite(sum);
  }

  /** The value of a raw sum {@code sum} of {@code n} query tokens. */
  static float value(int n, float sum) {
    return (float) ((n + (double) sum) / 2);
  }

  /** The value of a document whose sum against the {@link #halved} query of {@code n} tokens is {@code halfSum}. */
  static float valueOfHalved(int n, float halfSum) {
    return (float) (n / 2.0 + halfSum);
  }
}
