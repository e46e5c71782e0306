package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A factory read the caller's offsets and scales once to check them and again to keep them: another thread that
 * changed an entry in between got its unchecked value into the batch, offsets that end past the stored tokens (a
 * row reading past the data: an ArrayIndexOutOfBoundsException on the CPU, on a GPU a read past the device copy) or
 * a NaN scale the check refuses. A batch must keep what was checked, whatever the caller does meanwhile; so must
 * TopK.merge, which checked its parts' order and then merged what they held by then.
 */
class HostileArgumentsChangedMidCallTest {
  private static final VarHandle INTS = MethodHandles.arrayElementVarHandle(int[].class);
  private static final VarHandle FLOATS = MethodHandles.arrayElementVarHandle(float[].class);
  private static final int ROWS = 1 << 20;

  /** Runs {@code flip} on another thread until {@code attempt} returns true (it saw a bad batch) or gives up. */
  private static boolean raced(Runnable flip, java.util.function.BooleanSupplier attempt) throws Exception {
    AtomicBoolean running = new AtomicBoolean(true);
    Thread racer = new Thread(() -> {
      while (running.get()) {
        flip.run();
      }
    });
    racer.start();
    try {
      long end = System.nanoTime() + 1_500_000_000L; // before the fix, caught within 0.5 s
      while (System.nanoTime() < end) {
        if (attempt.getAsBoolean()) {
          return true;
        }
      }
      return false;
    } finally {
      running.set(false);
      racer.join();
    }
  }

  @Test
  void offsetsChangedWhileCheckedNeverReachTheBatch() throws Exception {
    int[] offsets = new int[ROWS + 1];
    float[] data = new float[0]; // rows of no token: the offsets are all zeros, T = 0
    int[] flips = {0};
    boolean bad = raced(() -> INTS.setVolatile(offsets, ROWS, (flips[0]++ & 1) == 0 ? 1 : 0), () -> {
      try {
        TokenBatch b = TokenBatch.packedFloats(data, offsets, 1);
        return b.offsets()[ROWS] != 0 || b.length(ROWS - 1) != 0;
      } catch (IllegalArgumentException refused) {
        assertTrue(refused.getMessage().startsWith("offsets end at 1"), refused.getMessage());
        return false;
      }
    });
    assertEquals(false, bad, "a batch kept offsets other than those checked");
  }

  @Test
  void scalesChangedWhileCheckedNeverReachTheBatch() throws Exception {
    float[] scales = new float[ROWS];
    java.util.Arrays.fill(scales, 1f);
    byte[] data = new byte[ROWS];
    int[] flips = {0};
    boolean bad = raced(() -> FLOATS.setVolatile(scales, 0, (flips[0]++ & 1) == 0 ? Float.NaN : 1f), () -> {
      try {
        return !Float.isFinite(TokenBatch.ofBytes(DType.INT8, data, scales, ROWS, 1, 1).scales()[0]);
      } catch (IllegalArgumentException refused) {
        assertTrue(refused.getMessage().startsWith("scales[0] = NaN"), refused.getMessage());
        return false;
      }
    });
    assertEquals(false, bad, "a batch kept a scale other than the one checked");
  }

  @Test
  void partsChangedWhileMergedNeverComeOutOfOrder() throws Exception {
    int n = 1 << 16;
    float[] scores = new float[n];
    int[] indices = new int[n];
    for (int r = 0; r < n; r++) {
      scores[r] = n - r;
      indices[r] = r;
    }
    TopK part = new TopK(new float[][] {scores}, new int[][] {indices});
    TopK other = new TopK(new float[][] {{0.5f}}, new int[][] {{0}});
    int[] flips = {0};
    // the last entry flips between its place and the top, which the order check refuses
    boolean bad = raced(() -> FLOATS.setVolatile(scores, n - 1, (flips[0]++ & 1) == 0 ? 1f : 2f * n), () -> {
      try {
        float[] merged = TopK.merge(n + 1, java.util.List.of(part, other), new int[] {0, n}).scores()[0];
        for (int r = 1; r < merged.length; r++) {
          if (merged[r] > merged[r - 1]) {
            return true;
          }
        }
        return false;
      } catch (IllegalArgumentException refused) {
        assertTrue(refused.getMessage().startsWith("parts[0] query 0 ranks"), refused.getMessage());
        return false;
      }
    });
    assertEquals(false, bad, "a merge returned entries out of order");
  }

  @Test
  void firstDocumentsChangedWhileMergedNeverReachTheResult() throws Exception {
    int queries = 1 << 16; // every query's entries are checked before any is merged: a wide window
    float[][] scores = new float[queries][1];
    int[][] indices = new int[queries][1];
    java.util.List<TopK> parts = java.util.List.of(new TopK(scores, indices));
    int[] first = new int[1];
    int[] flips = {0};
    boolean bad = raced(() -> INTS.setVolatile(first, 0, (flips[0]++ & 1) == 0 ? -5 : 0), () -> {
      try {
        int[][] merged = TopK.merge(1, parts, first).indices();
        for (int[] row : merged) {
          if (row[0] != merged[0][0]) {
            return true; // one call merged with two offsets: one of them was not the one checked
          }
        }
        return merged[0][0] < 0;
      } catch (IllegalArgumentException refused) {
        assertTrue(refused.getMessage().startsWith("firstDocuments[0] = -5"), refused.getMessage());
        return false;
      }
    });
    assertEquals(false, bad, "a merge used a firstDocuments entry other than the one checked");
  }
}
