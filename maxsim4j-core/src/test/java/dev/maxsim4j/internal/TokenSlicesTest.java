package dev.maxsim4j.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.maxsim4j.DType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** Rows of a batch as a batch of their own, and shards of whole rows in proportion to capacity. */
class TokenSlicesTest {

  private static Tokens padded(int rows, int length, int dim) {
    int[] start = new int[rows];
    int[] len = new int[rows];
    for (int i = 0; i < rows; i++) {
      start[i] = i * length;
      len[i] = length;
    }
    float[] data = new float[rows * length * dim];
    for (int i = 0; i < data.length; i++) {
      data[i] = i;
    }
    return new Tokens(DType.FLOAT32, dim, length, start, len, rows * length, null, data, null, null);
  }

  @Test
  void rowsOfAPaddedBatchCarryTheirTokensMaskAndPadding() {
    Tokens t = padded(5, 3, 2);
    boolean[] mask = new boolean[15];
    mask[7] = true;
    Tokens masked = t.withValidity(new int[] {3, 2, 3, 1, 0}, mask);
    Tokens s = TokenSlices.rows(masked, 2, 4);
    assertEquals(2, s.rows);
    assertEquals(6, s.storedTokens);
    assertArrayEquals(new int[] {0, 3}, s.rowStart);
    assertArrayEquals(new int[] {3, 1}, s.rowLength);
    assertEquals(12f, s.element(0, 0));
    assertEquals(12 * Float.BYTES, s.segment.byteSize(), "two rows of three tokens of 2 dims");
    t.f32[12] = -1f;
    assertEquals(-1f, s.element(0, 0), "a view of the batch's array, not a copy");
    assertEquals(true, s.mask[1]);
    assertSame(t, TokenSlices.rows(t, 0, 5), "the whole batch is itself");
    assertEquals(0, TokenSlices.rows(t, 5, 5).storedTokens);
    assertThrows(IllegalArgumentException.class, () -> TokenSlices.rows(t, 3, 2));
  }

  @Test
  void rowsOfASegmentAreAViewOfIt() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment memory = arena.allocate(4L * 2 * 3 * 4);
      Tokens t = new Tokens(DType.FLOAT32, 4, -1, new int[] {0, 2}, new int[] {2, 4}, 6, null, null, null, memory);
      Tokens s = TokenSlices.rows(t, 1, 2);
      assertEquals(memory.address() + 2 * 16, s.segment.address());
      assertEquals(4 * 16, s.segment.byteSize());
      assertArrayEquals(new int[] {0}, s.rowStart);
    }
  }

  /** Rows of {@code padded(10, 4, 8)} cost 4 x 32 + 12 = 140 bytes each: 1400 in all. */
  @Test
  void shardsAreEqualWholeRowsWhereTheyFitElseByCapacity() {
    Tokens t = padded(10, 4, 8);
    long big = Long.MAX_VALUE;
    assertArrayEquals(new int[] {0, 5, 10}, TokenSlices.split(t, new long[] {big, big}));
    assertArrayEquals(new int[] {0, 3, 7, 10}, TokenSlices.split(t, new long[] {big, big, big}));
    assertArrayEquals(new int[] {0, 5, 10}, TokenSlices.split(t, new long[] {1000, 800}), "equal parts fit");
    assertArrayEquals(new int[] {0, 6, 10}, TokenSlices.split(t, new long[] {1000, 600}), "700 bytes exceed 600");
    assertArrayEquals(new int[] {0, 8, 10}, TokenSlices.split(t, new long[] {80, 20}), "neither fits: 8:2");
    assertArrayEquals(new int[] {0, 0, 10}, TokenSlices.split(t, new long[] {0, 7}));
    assertArrayEquals(new int[] {0, 0, 1, 1}, TokenSlices.split(padded(1, 4, 8), new long[] {big, big, big}),
        "the shard holding most of the row");
    IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
        () -> TokenSlices.split(t, new long[] {0, 0}));
    assertEquals("capacities [0, 0]; expected at least one shard with a capacity above 0", none.getMessage());
    assertThrows(IllegalArgumentException.class, () -> TokenSlices.split(t, new long[] {1, -1}));
  }

  @Test
  void packedRowsWeighTheirOwnTokens() {
    Tokens t = new Tokens(DType.FLOAT32, 2, -1, new int[] {0, 10, 11, 12}, new int[] {10, 1, 1, 1}, 13, null,
        new float[26], null, null);
    assertArrayEquals(new int[] {0, 1, 4}, TokenSlices.split(t, new long[] {Long.MAX_VALUE, Long.MAX_VALUE}));
  }
}
