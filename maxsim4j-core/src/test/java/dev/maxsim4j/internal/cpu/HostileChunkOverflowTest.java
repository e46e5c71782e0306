package dev.maxsim4j.internal.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Row counts near the largest Java array (a corpus of two billion short documents ranked by top-k): the chunks
 * the CPU loops split them into cover every row once. Computed in int, {@code n + grain - 1} wrapped negative, no
 * chunk ran, and every score stayed 0 (top-k found no document) without an error.
 */
class HostileChunkOverflowTest {
  private static final int LARGEST = Integer.MAX_VALUE - 8;

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3})
  void everyRowOfTheLargestCountIsVisitedOnce(int threads) {
    for (int n : new int[] {LARGEST, LARGEST - 1_000_000, Integer.MAX_VALUE}) {
      try (ParallelLoop loop = new ParallelLoop(threads)) {
        for (int grain : new int[] {loop.grainFor(n, 1), n / 3, Integer.MAX_VALUE / 2 + 1, n}) {
          List<int[]> ranges = new ArrayList<>();
          loop.forRange(n, grain, (from, to) -> {
            synchronized (ranges) {
              if (ranges.size() == 1000) { // a grain that wrapped to 1 would visit rows one by one
                throw new IllegalStateException("more than 1000 chunks");
              }
              ranges.add(new int[] {from, to});
            }
          });
          ranges.sort(Comparator.comparingInt(r -> r[0]));
          long next = 0;
          for (int[] r : ranges) {
            assertEquals(next, r[0], "n = " + n + ", grain " + grain + ": chunks meet");
            assertTrue(r[1] > r[0], "n = " + n + ", grain " + grain + ": a chunk of rows");
            next = r[1];
          }
          assertEquals(n, next, "n = " + n + ", grain " + grain + ": rows covered");
        }
      }
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 64, 32767})
  void chunksOfTheLargestCountAreFewAndCoverIt(int threads) {
    try (ParallelLoop loop = new ParallelLoop(threads)) {
      int grain = loop.grainFor(LARGEST, 1);
      int chunks = ParallelLoop.chunks(LARGEST, grain);
      assertTrue(chunks >= 1 && chunks <= 4L * threads, threads + " threads: " + chunks + " chunks of " + grain);
      assertEquals(LARGEST, ParallelLoop.end(LARGEST, grain, chunks - 1), "the last chunk ends at n");
      assertTrue((long) (chunks - 1) * grain < LARGEST, "the last chunk is not empty");
    }
  }
}
