package dev.maxsim4j.bench.retrieval;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Top-k selection against a full sort, and the known-item metrics on hand-made rankings. */
class RankingTest {
  @Test
  void topMatchesAFullSortWithTiesToTheLowerIndex() {
    SplittableRandom rnd = new SplittableRandom(7);
    for (int n : new int[] {1, 3, 10, 33, 127, 513}) {
      float[] scores = new float[n];
      for (int i = 0; i < n; i++) {
        scores[i] = rnd.nextInt(20); // many ties
      }
      int[] sorted = IntStream.range(0, n).boxed()
          .sorted(Comparator.comparingDouble((Integer i) -> -scores[i]).thenComparingInt(i -> i))
          .mapToInt(Integer::intValue).toArray();
      for (int k : new int[] {1, 10, n, n + 5}) {
        assertArrayEquals(Arrays.copyOf(sorted, Math.min(k, n)), Ranking.top(scores, k), "n=" + n + " k=" + k);
      }
      int[] among = IntStream.range(0, n).filter(i -> i % 3 == 0).toArray();
      int[] expected = Arrays.stream(sorted).filter(i -> i % 3 == 0).limit(10).toArray();
      assertArrayEquals(expected, Ranking.top(scores, among, 10), "n=" + n);
    }
    assertArrayEquals(new int[0], Ranking.top(new float[0], 10));
  }

  @Test
  void recallMrrAndOverlap() {
    Ranking r = new Ranking();
    int[] exact = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    r.add(new int[] {7, 1, 2, 3, 4, 5, 6, 8, 9, 10}, 7, exact); // rank 1, full overlap
    r.add(new int[] {1, 2, 3, 99, 4, 5, 6, 8, 9, 10}, 99, exact); // rank 4, 9 of 10 shared
    r.add(new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 50}, 50, exact); // rank 11: not counted
    assertEquals(1 / 3.0, r.recallAt1(), 1e-12);
    assertEquals(2 / 3.0, r.recallAt10(), 1e-12);
    assertEquals((1 + 0.25) / 3, r.mrrAt10(), 1e-12);
    assertEquals((1 + 0.9 + 1) / 3, r.overlapAt10(), 1e-12);
  }
}
