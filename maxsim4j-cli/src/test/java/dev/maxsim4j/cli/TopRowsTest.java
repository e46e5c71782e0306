package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.TopK;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The top rows of candidate scores against a full sort, on rows with ties, NaN, zeros of both signs and infinities,
 * for every k up to past the row, in memory of k: a tiny file claiming 2e8 candidates a query must not need a heap
 * for all of them. Found by a hostile tester.
 */
class TopRowsTest {
  /** Selects the best 3 of one row of 4M scores in this JVM, printing "ok". */
  public static final class Child {
    public static void main(String[] args) {
      TopK top = TopRows.of(new float[1][4_000_000], 3);
      System.out.println(top.indices()[0].length == 3 && top.indices()[0][2] == 2 ? "ok" : "wrong");
    }
  }

  /** A row of 4M candidates in a heap of 48 MiB: 64 MiB of boxed indices would not fit it. */
  @Test
  void aLongRowNeedsMemoryOfKNotOfTheRow() throws Exception {
    Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx48m",
        "-cp", System.getProperty("java.class.path"), Child.class.getName()).redirectErrorStream(true).start();
    String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, child.waitFor(), output);
    assertEquals("ok", output.strip());
  }

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
