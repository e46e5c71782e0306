package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.maxsim4j.DType;
import dev.maxsim4j.GpuTest;
import dev.maxsim4j.internal.Tokens;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The streaming kernel's "_dyn" entries take pairs at run time from two device counters
 * (maxsim_work.cuh): every launch must leave them at zero for the next, and the order in which warps take
 * pairs must not change a single bit of any score.
 */
@GpuTest
class StreamingWorkTest {
  private static final int POISON = 0x7fc0dead;

  @Test
  void runTimePairsLeaveTheCountersAtZeroAndGiveTheSameBits() {
    try (CudaDevice device = new CudaDevice(0); Launcher launcher = new Launcher(device)) {
      // one query against 3000 ragged documents (the first 10 fully masked): enough pairs for the
      // streaming kernel, one query, inference: the "_dyn" entries
      Tokens query = tokens(new SplittableRandom(1), 1, 32, 128, 0);
      Tokens documents = tokens(new SplittableRandom(2), 3000, 300, 128, 10);
      DeviceTokens q = DeviceTokens.upload(device, query, device.allocate(DeviceTokens.bytesFor(query)));
      DeviceTokens d = DeviceTokens.upload(device, documents, device.allocate(DeviceTokens.bytesFor(documents)));
      int pairs = documents.rows;
      long scores = device.scratch(ScratchSlot.SCORES, 4L * pairs);
      MemorySegment host = device.pinned(4L * pairs + 16);
      ForwardKernels forward = new ForwardKernels(device, launcher, ForwardKernels.RULES);
      float[] first = null;
      for (int launch = 0; launch < 5; launch++) {
        Driver.fill32(scores, POISON, pairs, device.stream);
        forward.launch(q, d, ForwardKernels.Pairs.all(1, 32, pairs, 0), scores);
        Driver.copyToHost(host, scores, 4L * pairs, device.stream);
        // the two work counters the launch handed its pairs out with: each launch leaves them zero
        Driver.copyToHost(host.asSlice(4L * pairs), device.main.zeroedScratch(ScratchSlot.WORK_COUNTERS, 16), 16,
            device.stream);
        Driver.synchronize(device.stream);
        assertEquals(0L, host.get(ValueLayout.JAVA_LONG, 4L * pairs), "pairs taken, after launch " + launch);
        assertEquals(0L, host.get(ValueLayout.JAVA_LONG, 4L * pairs + 8), "warps done, after launch " + launch);
        float[] out = new float[pairs];
        MemorySegment.copy(host, ValueLayout.JAVA_FLOAT, 0, out, 0, pairs);
        for (int i = 0; i < pairs; i++) {
          assertFalse(Float.floatToRawIntBits(out[i]) == POISON, "score " + i + " never written");
          if (i < 10) {
            assertEquals(-1e9f, out[i], "document " + i + " has no valid token");
          }
        }
        if (first == null) {
          first = out;
        } else {
          assertArrayEquals(first, out, "launch " + launch + " differs from the first");
        }
      }
    }
  }

  /** Random bf16 rows of 1..maxLength tokens; the first {@code masked} rows have every token masked. */
  private static Tokens tokens(SplittableRandom rnd, int rows, int maxLength, int dim, int masked) {
    int[] start = new int[rows];
    int[] length = new int[rows];
    for (int i = 0; i < rows; i++) {
      start[i] = i * maxLength;
      length[i] = 1 + rnd.nextInt(maxLength);
    }
    short[] bits = new short[rows * maxLength * dim];
    for (int i = 0; i < bits.length; i++) {
      bits[i] = DType.BFLOAT16.narrow((float) rnd.nextGaussian());
    }
    boolean[] mask = new boolean[rows * maxLength];
    for (int i = 0; i < mask.length; i++) {
      mask[i] = i / maxLength >= masked && rnd.nextInt(8) != 0;
    }
    return new Tokens(DType.BFLOAT16, dim, maxLength, start, length, rows * maxLength, mask, null, bits, null);
  }
}
