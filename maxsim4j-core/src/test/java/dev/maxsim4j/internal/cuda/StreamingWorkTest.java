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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The streaming kernel's "_dyn" entries take pairs at run time from two device counters
 * (maxsim_work.cuh): every launch must leave them at zero for the next, and the order in which warps take
 * pairs must not change a single bit of any score.
 */
@GpuTest
class StreamingWorkTest {
  private static final int POISON = 0x7fc0dead;

  /**
   * One query against ragged documents (the first 10 fully masked): enough pairs for the streaming kernel,
   * one query, inference: the "_dyn" entries, for d = 128 (4 chunks, one n-tile a step; 3000 documents of
   * up to 300 tokens) and d = 48 (2 chunks, two n-tiles; 1500 of up to 1100). Whole-document units
   * ("stream_whole") give the bits every other way must: slices of the rule's size (and of "stream_u16"),
   * and each ring size ("stream_r18", "stream_r24": fewer warps per SM, more tiles in flight each).
   */
  @ParameterizedTest
  @ValueSource(ints = {128, 48})
  void runTimeUnitsLeaveTheCountersAtZeroAndGiveTheBitsOfWholeScans(int dim) {
    try (CudaDevice device = new CudaDevice(0)) {
      Tokens query = tokens(new SplittableRandom(1), 1, 32, dim, 0);
      Tokens documents = dim == 128 ? tokens(new SplittableRandom(2), 3000, 300, dim, 10)
          : tokens(new SplittableRandom(2), 1500, 1100, dim, 10);
      DeviceTokens q = DeviceTokens.upload(device, query, device.allocate(DeviceTokens.bytesFor(query)));
      DeviceTokens d = DeviceTokens.upload(device, documents, device.allocate(DeviceTokens.bytesFor(documents)));
      float[] whole = launches(device, q, d, "stream_whole", 3, null);
      launches(device, q, d, null, 5, whole);
      for (String variant : new String[] {"stream_u16", "stream_r18", "stream_r24"}) {
        launches(device, q, d, variant, 3, whole);
      }
    }
  }

  /**
   * {@code count} launches with the given kernel variant (null: the rule's); each leaves the counters at
   * zero, writes every score, and gives the bits of {@code expected} (null: of its first launch). Returns
   * the first launch's scores.
   */
  private static float[] launches(CudaDevice device, DeviceTokens q, DeviceTokens d, String variant, int count,
      float[] expected) {
    int pairs = d.rows();
    long scores = device.scratch("scores", 4L * pairs);
    MemorySegment host = device.pinned(4L * pairs + 16);
    if (variant != null) {
      System.setProperty(CudaBackend.VARIANT_PROPERTY, variant); // read when ForwardKernels starts
    }
    try (KernelParams params = new KernelParams()) {
      ForwardKernels forward = new ForwardKernels(device, params);
      System.clearProperty(CudaBackend.VARIANT_PROPERTY);
      String where = (variant == null ? "default" : variant) + ", d = " + q.dim();
      for (int launch = 0; launch < count; launch++) {
        Driver.fill32(scores, POISON, pairs, device.stream);
        forward.launch(q, d, 0, pairs, 0, pairs, scores, 0, 0, 32, 1);
        Driver.copyToHost(host, scores, 4L * pairs, device.stream);
        Driver.copyToHost(host.asSlice(4L * pairs), device.workCounters(), 16, device.stream);
        Driver.synchronize(device.stream);
        assertEquals(0L, host.get(ValueLayout.JAVA_LONG, 4L * pairs), where + ": pairs taken, after launch " + launch);
        assertEquals(0L, host.get(ValueLayout.JAVA_LONG, 4L * pairs + 8), where + ": warps done, after launch " + launch);
        float[] out = new float[pairs];
        MemorySegment.copy(host, ValueLayout.JAVA_FLOAT, 0, out, 0, pairs);
        assertArrivalsAreZero(device, pairs, where + ", after launch " + launch); // reuses the pinned buffer
        for (int i = 0; i < pairs; i++) {
          assertFalse(Float.floatToRawIntBits(out[i]) == POISON, where + ": score " + i + " never written");
          if (i < 10) {
            assertEquals(-1e9f, out[i], where + ": document " + i + " has no valid token");
          }
        }
        if (expected == null) {
          expected = out;
        } else {
          assertArrayEquals(expected, out, where + ": launch " + launch + " differs");
        }
      }
      return expected;
    } finally {
      System.clearProperty(CudaBackend.VARIANT_PROPERTY);
    }
  }

  /**
   * The sliced launches' per-pair arrival counts, left zero for the next launch (if any were allocated).
   * Copies through the device's pinned buffer.
   */
  private static void assertArrivalsAreZero(CudaDevice device, int pairs, String where) {
    if (device.scratchBytes("stream-arrivals") == 0) {
      return;
    }
    long arrivals = device.zeroedScratch("stream-arrivals", 4L * pairs);
    MemorySegment host = device.pinned(4L * pairs);
    Driver.copyToHost(host, arrivals, 4L * pairs, device.stream);
    Driver.synchronize(device.stream);
    for (int i = 0; i < pairs; i++) {
      assertEquals(0, host.getAtIndex(ValueLayout.JAVA_INT, i), where + ": arrivals of pair " + i);
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
