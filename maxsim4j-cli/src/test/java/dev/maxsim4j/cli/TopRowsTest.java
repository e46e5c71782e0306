package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.TopK;
import java.util.Comparator;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The top rows of candidate scores against a full sort, on rows with ties, NaN, zeros of both signs and infinities,
 * for every k up to past the row. The selection once boxed and sorted each whole row, so that a tiny file claiming
 * 2e8 candidates a query ran out of heap. Found by a hostile tester.
 */
class TopRowsTest {
  private static final float[] VALUES = {0f, -0f, 1f, -1f, 2.5f, Float.NaN, Float.POSITIVE_INFINITY,
      Float.NEGATIVE_INFINITY, -1e9f, 1e-45f};

  @Test
  void equalsAFullSortOfEachRow() {
    Random random = new Random(7);
    for (int trial = 0; trial < 300; trial++) {
      int n = random.nextInt(40);
      float[][] rows = new float[1 + random.nextInt(3)][n];
      for (float[] row : rows) {
        for (int j = 0; j < n; j++) {
          row[j] = random.nextBoolean() ? VALUES[random.nextInt(VALUES.length)] : random.nextInt(5) - 2;
        }
      }
      int k = 1 + random.nextInt(n + 3);
      TopK top = TopRows.of(rows, k);
      for (int i = 0; i < rows.length; i++) {
        float[] row = rows[i];
        Comparator<Integer> byScore = (x, y) -> Float.compare(row[y], row[x]);
        int[] expected = IntStream.range(0, n).boxed().sorted(byScore.thenComparingInt(x -> x)).limit(k)
            .mapToInt(Integer::intValue).toArray();
        assertArrayEquals(expected, top.indices()[i], "trial " + trial + " row " + i);
        for (int r = 0; r < expected.length; r++) {
          assertEquals(row[expected[r]], top.scores()[i][r]);
        }
      }
    }
  }
}
