package dev.maxsim4j.internal.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.maxsim4j.DType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** The parameter block cuLaunchKernel reads: each argument where its pointer says, in its own width. */
class KernelParamsTest {

  private static MemorySegment argument(MemorySegment pointers, int i, long bytes) {
    return pointers.getAtIndex(ADDRESS, i).reinterpret(bytes);
  }

  @Test
  void writesPointersIntegersAndFloatsInOrder() {
    try (KernelParams params = new KernelParams()) {
      MemorySegment p = params.set(new KernelArgs.CrossEntropy(0x7000_0000_1000L, 12, 34, 0L, 0.25f,
          0x7000_0000_2000L, 0x7000_0000_3000L), KernelParams.PLAIN);
      assertEquals(0x7000_0000_1000L, argument(p, 0, 8).get(JAVA_LONG, 0));
      assertEquals(12, argument(p, 1, 4).get(JAVA_INT, 0));
      assertEquals(34, argument(p, 2, 4).get(JAVA_INT, 0));
      assertEquals(0L, argument(p, 3, 8).get(JAVA_LONG, 0));
      assertEquals(0.25f, argument(p, 4, 4).get(JAVA_FLOAT, 0));
      assertEquals(0x7000_0000_2000L, argument(p, 5, 8).get(JAVA_LONG, 0));
      assertEquals(0x7000_0000_3000L, argument(p, 6, 8).get(JAVA_LONG, 0));
    }
  }

  @Test
  void resolvesScratchAndPassesTheTensorMapByValue() {
    try (KernelParams params = new KernelParams(); Arena arena = Arena.ofConfined()) {
      MemorySegment map = arena.allocate(Driver.TENSOR_MAP_BYTES, 64).fill((byte) 0x5a);
      DeviceTokens d = new DeviceTokens(DType.BFLOAT16, 128, 1, 1, 1, 1, 2, 3, 4, 5);
      KernelParams.Resolver resolver = new KernelParams.Resolver() {
        @Override
        public long scratch(KernelArgs.Scratch buffer) {
          return 0x100L + buffer.slot().ordinal();
        }

        @Override
        public MemorySegment tensorMap(DeviceTokens documents) {
          return map;
        }
      };
      KernelArgs.Scratch sums = new KernelArgs.Scratch(ScratchSlot.WS_PASS_SUMS, 64, false);
      MemorySegment p = params.set(new KernelArgs.WgmmaWs(1, 2, 3, 4, 5, 6, 7, 8, 0, 128, 0, 1, 0, 9, 1, 1, 128, null,
          null, 32, 10, 0, 0, sums, null, d), resolver);
      assertEquals(0L, argument(p, 17, 8).get(JAVA_LONG, 0), "no partial maxima: a null pointer");
      assertEquals(0x100L + ScratchSlot.WS_PASS_SUMS.ordinal(), argument(p, 23, 8).get(JAVA_LONG, 0));
      MemorySegment passed = argument(p, 25, Driver.TENSOR_MAP_BYTES);
      for (int i = 0; i < Driver.TENSOR_MAP_BYTES; i++) {
        assertEquals((byte) 0x5a, passed.get(JAVA_BYTE, i), "tensor map byte " + i);
      }
      // after a launch without a map, the 26th pointer is its own 8-byte slot again, not the map
      MemorySegment again = params.set(new KernelArgs.MarginMse(1, 2, 3, 4, 5), KernelParams.PLAIN);
      assertEquals(again.getAtIndex(ADDRESS, 0).address() + 8 * 25, again.getAtIndex(ADDRESS, 25).address());
    }
  }

  @Test
  void aPlainLaunchRefusesPlaceholders() {
    try (KernelParams params = new KernelParams()) {
      assertThrows(IllegalStateException.class, () -> params.set(new KernelArgs.Stream(1, 2, 3, 4, 5, 6, 7, 8, 9,
          128, 0, 1, 0, 1, 10, 0, 0, new KernelArgs.Scratch(ScratchSlot.WORK_COUNTERS, 16, true)), KernelParams.PLAIN));
    }
  }
}
