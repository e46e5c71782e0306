package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.GpuTest;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Pinned host memory grown by one large call is given back after a window of small ones (PinnedSizing), on the
 * device's awaited path and in the slots of calls kept in flight, and the calls around the exchange score as the
 * CPU does.
 */
@GpuTest
class PinnedMemoryReuseTest {
  private static final long MB = 1L << 20;

  @Test
  void theDevicesStagingIsGivenBackAfterAWindowOfSmallCalls() {
    try (CudaDevice device = new CudaDevice(0)) {
      assertEquals(512 * MB, device.pinned(512 * MB).byteSize());
      long held = 0;
      for (int i = 0; i < 2 * PinnedSizing.WINDOW; i++) {
        MemorySegment small = device.pinned(MB);
        small.fill((byte) i); // the memory handed out is whole and writable
        held = small.byteSize();
      }
      assertEquals(MB + MB / 2, held);
    }
  }

  @Test
  void callsAroundTheExchangeScoreAsTheCpuDoes() {
    SplittableRandom rnd = new SplittableRandom(7);
    TokenBatch query = batch(rnd, 2, 32, 128);
    TokenBatch large = batch(rnd, 700, 300, 128); // about 100 MB of fp32 to stage
    List<TokenBatch> small = new ArrayList<>();
    for (int i = 0; i < 3 * PinnedSizing.WINDOW * PipelinedCalls.SLOTS; i++) {
      small.add(batch(rnd, 1 + rnd.nextInt(8), 1 + rnd.nextInt(40), 128));
    }
    try (MaxSim gpu = MaxSim.builder().backend("cuda").build();
        MaxSim cpu = MaxSim.builder().backend("vector").threads(2).build()) {
      for (boolean async : new boolean[] {false, true}) {
        List<CompletableFuture<float[][]>> calls = new ArrayList<>();
        calls.add(async ? gpu.scoresAsync(query, large) : CompletableFuture.completedFuture(gpu.scores(query, large)));
        for (TokenBatch d : small) {
          calls.add(async ? gpu.scoresAsync(query, d) : CompletableFuture.completedFuture(gpu.scores(query, d)));
        }
        calls.add(async ? gpu.scoresAsync(query, large) : CompletableFuture.completedFuture(gpu.scores(query, large)));
        for (int i = 0; i < calls.size(); i++) {
          TokenBatch d = i == 0 || i == calls.size() - 1 ? large : small.get(i - 1);
          float[][] expected = cpu.scores(query, d);
          float[][] got = calls.get(i).join();
          for (int r = 0; r < expected.length; r++) {
            assertArrayEquals(expected[r], got[r], 1e-3f, (async ? "async" : "awaited") + " call " + i + " row " + r);
          }
        }
      }
    }
  }

  private static TokenBatch batch(SplittableRandom rnd, int n, int length, int dim) {
    float[] data = new float[n * length * dim];
    for (int i = 0; i < data.length; i++) {
      data[i] = (float) (rnd.nextDouble() * 2 - 1) / 8;
    }
    return TokenBatch.ofFloats(data, n, length, dim);
  }
}
