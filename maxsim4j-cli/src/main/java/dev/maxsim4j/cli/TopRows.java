package dev.maxsim4j.cli;

import dev.maxsim4j.TopK;
import java.util.Comparator;
import java.util.stream.IntStream;

/** The best {@code k} entries of each row of a score matrix, ordered as {@link TopK} orders documents. */
final class TopRows {
  private TopRows() {}

  static TopK of(float[][] scores, int k) {
    float[][] best = new float[scores.length][];
    int[][] index = new int[scores.length][];
    for (int i = 0; i < scores.length; i++) {
      float[] row = scores[i];
      // Float.compare puts NaN above every number, so a corrupt score is seen, as TopK does
      Comparator<Integer> byScore = (x, y) -> Float.compare(row[y], row[x]);
      index[i] = IntStream.range(0, row.length).boxed().sorted(byScore.thenComparingInt(x -> x))
          .limit(k).mapToInt(Integer::intValue).toArray();
      best[i] = new float[index[i].length];
      for (int r = 0; r < index[i].length; r++) {
        best[i][r] = row[index[i][r]];
      }
    }
    return new TopK(best, index);
  }
}
