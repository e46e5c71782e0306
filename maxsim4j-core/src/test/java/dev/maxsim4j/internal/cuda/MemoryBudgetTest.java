package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** The device memory a GPU backend may use: the cap's parsing, what it leaves a call, and the chunk size. */
class MemoryBudgetTest {
  private static final long GIB = 1L << 30;

  @Test
  void theCapIsAWholeNumberOfBytes() {
    assertEquals(0, MemoryBudget.parse(null).limit());
    assertEquals(0, MemoryBudget.parse(" ").limit());
    assertEquals(4 * GIB, MemoryBudget.parse(" 4294967296 ").limit());
    for (String bad : new String[] {"4g", "-1", "0", "1.5e9", "+4096", "04096", "\u0664\u0660\u0669\u0666"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MemoryBudget.parse(bad));
      assertEquals("maxsim4j.cuda.memoryLimit = '" + bad + "'; expected a whole number of bytes > 0", e.getMessage());
    }
  }

  @Test
  void aCallMayUseTheCapLessWhatTheBackendHoldsAndNeverMoreThanTheDeviceHasFree() {
    long total = 140 * GIB;
    long headroom = MemoryBudget.headroom(total);
    assertEquals(total / 32, headroom);
    assertEquals(100 * GIB - headroom, new MemoryBudget(0).available(5 * GIB, 100 * GIB, total));
    assertEquals(3 * GIB, new MemoryBudget(4 * GIB).available(GIB, 100 * GIB, total));
    assertEquals(8 * GIB - headroom, new MemoryBudget(64 * GIB).available(0, 8 * GIB, total));
    assertEquals(0, new MemoryBudget(GIB).available(2 * GIB, 100 * GIB, total), "nothing left, not less");
    assertEquals(512L << 20, MemoryBudget.headroom(GIB), "a small device keeps 512 MiB");
  }

  @Test
  void twoChunkBuffersShareWhatTheCallLeavesUpTo256MibEach() {
    assertEquals(GIB / 4, MemoryBudget.chunkBytes(100 * GIB, GIB, 0));
    assertEquals(GIB / 8, MemoryBudget.chunkBytes(GIB + GIB / 4, GIB, 0));
    assertEquals(0, MemoryBudget.chunkBytes(GIB, 2 * GIB, 0));
    assertEquals(384L << 20, MemoryBudget.chunkBytes(100 * GIB, GIB, 384L << 20), "a larger document's size");
    assertEquals(GIB / 4, MemoryBudget.chunkBytes(100 * GIB, GIB, GIB / 8), "a smaller one's leaves the cap");
    assertEquals(GIB / 2, MemoryBudget.chunkBytes(2 * GIB, GIB, 3 * GIB / 4), "what is left, not more");
  }

  @Test
  void aNegativeCapIsRefused() {
    assertEquals("memory limit = -5 bytes; expected >= 0 (0: no limit)",
        assertThrows(IllegalArgumentException.class, () -> new MemoryBudget(-5)).getMessage());
  }
}
