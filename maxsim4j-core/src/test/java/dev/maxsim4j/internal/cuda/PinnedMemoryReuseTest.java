package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.GpuTest;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Pinned host memory grown by one large request is given back after a period of small ones (PinnedSizing, here on
 * a clock the test moves), still mapped for kernels to write, and freed whole by a period of empty requests; calls of
 * mixed sizes, awaited and kept in flight, score as the CPU does.
 */
@GpuTest
class PinnedMemoryReuseTest {
  private static final long MB = 1L << 20;

  @Test
  void memoryIsGivenBackAfterAPeriodOfSmallRequests() {
    long[] now = {0};
    try (CudaDevice device = new CudaDevice(0);
        ReusedPinnedMemory memory = new ReusedPinnedMemory(device.hostMapped, new PinnedSizing(() -> now[0]))) {
      assertEquals(512 * MB, memory.atLeast(512 * MB, () -> {}).byteSize());
      int[] replaced = {0};
      MemorySegment small = null;
      for (int i = 0; i < 3; i++) {
        now[0] += PinnedSizing.PERIOD_NANOS;
        small = memory.atLeast(MB, () -> replaced[0]++);
      }
      assertEquals(MB + MB / 2, small.byteSize());
      assertEquals(1, replaced[0], "the owner is told before the memory is replaced");
      small.fill((byte) 7); // whole and writable, and mapped for a kernel where the device maps host memory
      long slice = 4096;
      if (device.hostMapped) {
        long address = memory.deviceAddress(small.asSlice(slice, 64));
        Driver.fill32(address, 0x3f800000, 16, device.stream);
        Driver.synchronize(device.stream);
        assertEquals(1f, small.get(ValueLayout.JAVA_FLOAT, slice));
        assertEquals((byte) 7, small.get(ValueLayout.JAVA_BYTE, slice + 64));
      }
      assertEquals(512 * MB, memory.atLeast(512 * MB, () -> {}).byteSize(), "grown again");
      for (int i = 0; i < 3; i++) {
        now[0] += PinnedSizing.PERIOD_NANOS;
        memory.atLeast(0, () -> {});
      }
      assertEquals(0, memory.byteSize(), "a period of empty requests (inputs all resident) frees it whole");
      MemorySegment again = memory.atLeast(MB, () -> {});
      again.fill((byte) 1);
      assertEquals(MB, again.byteSize());
    }
  }

  @Test
  void callsOfMixedSizesScoreAsTheCpuDoes() {
    SplittableRandom rnd = new SplittableRandom(7);
    TokenBatch query = batch(rnd, 2, 32, 128);
    TokenBatch large = batch(rnd, 700, 300, 128); // about 100 MB of fp32 to stage
    List<TokenBatch> small = new ArrayList<>();
    for (int i = 0; i < 2 * PipelinedCalls.SLOTS; i++) {
      small.add(batch(rnd, 1 + rnd.nextInt(8), 1 + rnd.nextInt(40), 128));
    }
    try (MaxSim gpu = MaxSim.builder().backend("cuda").build();
        MaxSim cpu = MaxSim.builder().backend("vector").threads(2).build()) {
      for (boolean async : new boolean[] {false, true}) {
        List<CompletableFuture<float[][]>> calls = new ArrayList<>();
        List<TokenBatch> documents = new ArrayList<>(List.of(large));
        documents.addAll(small);
        documents.add(large);
        for (TokenBatch d : documents) {
          calls.add(async ? gpu.scoresAsync(query, d) : CompletableFuture.completedFuture(gpu.scores(query, d)));
        }
        for (int i = 0; i < calls.size(); i++) {
          float[][] expected = cpu.scores(query, documents.get(i));
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
