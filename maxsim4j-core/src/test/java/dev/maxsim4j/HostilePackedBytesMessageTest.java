package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import org.junit.jupiter.api.Test;

/**
 * Packed quantized storage whose offsets end elsewhere than its token count: the error counts what the storage
 * holds in bytes and tokens (it said "1026 elements of dim 513" for 130 bytes of 1-bit tokens).
 */
class HostilePackedBytesMessageTest {
  @Test
  void offsetsEndingElsewhereCountTheStoredBytesAndTokens() {
    IllegalArgumentException heap = assertThrows(IllegalArgumentException.class,
        () -> TokenBatch.packedBytes(DType.BINARY, new byte[130], null, new int[] {0, 3}, 513));
    assertEquals("offsets end at 3; expected T = 2 (data holds 130 bytes, 2 BINARY tokens of dim 513 at 65 bytes"
        + " each)", heap.getMessage());
    try (Arena arena = Arena.ofShared()) {
      IllegalArgumentException memory = assertThrows(IllegalArgumentException.class,
          () -> TokenBatch.packedFromMemorySegment(arena.allocate(10), DType.FLOAT8_E4M3, null,
              new int[] {0, 1, 3}, 5));
      assertEquals("offsets end at 3; expected T = 2 (memory holds 10 bytes, 2 FLOAT8_E4M3 tokens of dim 5 at 5"
          + " bytes each)", memory.getMessage());
    }
  }

  @Test
  void theOtherPackedChecksStillNameTheirArgument() {
    assertEquals("offsets is null", assertThrows(IllegalArgumentException.class,
        () -> TokenBatch.packedBytes(DType.INT8, new byte[4], null, null, 2)).getMessage());
    assertEquals("dim = 0; expected dim >= 1", assertThrows(IllegalArgumentException.class,
        () -> TokenBatch.packedBytes(DType.INT8, new byte[4], null, new int[] {0, 2}, 0)).getMessage());
    assertEquals("offsets[0] = 1; expected 0", assertThrows(IllegalArgumentException.class,
        () -> TokenBatch.packedBytes(DType.INT8, new byte[4], null, new int[] {1, 2}, 2)).getMessage());
    assertEquals("data holds 5 bytes, not a whole number of BINARY tokens of dim 9 (2 bytes each)",
        assertThrows(IllegalArgumentException.class,
            () -> TokenBatch.packedBytes(DType.BINARY, new byte[5], null, new int[] {0, 2}, 9)).getMessage());
    assertEquals("offsets end at 3; expected T = 2 (data holds 4 elements of dim 2)",
        assertThrows(IllegalArgumentException.class,
            () -> TokenBatch.packedFloats(new float[4], new int[] {0, 3}, 2)).getMessage());
    assertEquals(2, TokenBatch.packedBytes(DType.BINARY, new byte[4], null, new int[] {0, 1, 2}, 9).size());
  }
}
