package dev.maxsim4j.bench.quality;

import java.util.Arrays;
import java.util.stream.IntStream;

/**
 * How far the scores of compressed documents are from the float scores of the same documents: the relative
 * error of every (query, document) score, how many of the float ranking's top 10 each query keeps, and where
 * each query has one relevant document, how often it ranks in the top 10.
 */
record Agreement(double meanRelativeError, double maxRelativeError, double top10Overlap, double recallAt10) {
  static final int TOP = 10;

  /**
   * {@code scores} against {@code reference} (both {@code [queries][documents]}); {@code relevant[q]} is the
   * document that answers query {@code q}, or {@code relevant} is null where there is none (recall is NaN).
   */
  static Agreement of(float[][] reference, float[][] scores, int[] relevant) {
    double sum = 0;
    double max = 0;
    long pairs = 0;
    double overlap = 0;
    int found = 0;
    for (int q = 0; q < reference.length; q++) {
      for (int d = 0; d < reference[q].length; d++) {
        // relative to the float score, or to 1e-3 where that is smaller (a score near 0 has no scale of its own)
        double e = Math.abs((double) scores[q][d] - reference[q][d]) / Math.max(1e-3, Math.abs(reference[q][d]));
        sum += e;
        max = Math.max(max, e);
        pairs++;
      }
      int[] expected = top(reference[q]);
      int[] actual = top(scores[q]);
      overlap += IntStream.of(actual).filter(d -> contains(expected, d)).count() / (double) expected.length;
      if (relevant != null && contains(actual, relevant[q])) {
        found++;
      }
    }
    return new Agreement(sum / pairs, max, overlap / reference.length,
        relevant == null ? Double.NaN : found / (double) reference.length);
  }

  /** The documents of the {@value #TOP} highest scores (fewer when there are fewer documents). */
  static int[] top(float[] scores) {
    Integer[] order = new Integer[scores.length];
    Arrays.setAll(order, i -> i);
    Arrays.sort(order, (a, b) -> Float.compare(scores[b], scores[a]));
    return Arrays.stream(order, 0, Math.min(TOP, scores.length)).mapToInt(Integer::intValue).toArray();
  }

  private static boolean contains(int[] values, int v) {
    for (int x : values) {
      if (x == v) {
        return true;
      }
    }
    return false;
  }
}
