package dev.maxsim4j.internal.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A call split by pair has {@code out.length} items, up to the largest array: its chunks, as CpuBackend takes them
 * ({@code forRange(n, grainFor(n, 1))}), cover {@code [0, n)} once each, with no bound wrapped negative, on the
 * caller alone and shared with helpers.
 */
class HostileLargestRangeTest {

  @Test
  void chunksOfTheLargestRangeCoverItOnceWithoutWrapping() {
    for (int threads : new int[] {1, 2, 3, 8, 32767}) {
      for (int n : new int[] {Integer.MAX_VALUE, Integer.MAX_VALUE - 1, Integer.MAX_VALUE - 8, 1 << 30}) {
        try (ParallelLoop loop = new ParallelLoop(Math.min(threads, 64))) {
          List<long[]> ranges = new ArrayList<>();
          int grain = loop.grainFor(n, 1);
          assertTrue(grain >= 1, "grain " + grain);
          loop.forRange(n, grain, (from, to) -> {
            synchronized (ranges) {
              ranges.add(new long[] {from, to});
            }
          });
          ranges.sort(Comparator.comparingLong(r -> r[0]));
          long next = 0;
          for (long[] r : ranges) {
            assertEquals(next, r[0], threads + " threads, n " + n);
            assertTrue(r[1] > r[0] && r[1] <= n, threads + " threads, n " + n + ": " + r[0] + ".." + r[1]);
            next = r[1];
          }
          assertEquals(n, next, threads + " threads, n " + n);
        }
      }
    }
  }
}
