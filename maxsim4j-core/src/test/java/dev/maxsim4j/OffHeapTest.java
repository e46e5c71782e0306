package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/** Batches over native memory score exactly like the same values on the heap, on every backend. */
class OffHeapTest {

  @Test
  void confinedMemoryIsRejectedUpFront() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment seg = arena.allocate(ValueLayout.JAVA_FLOAT, 8);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> TokenBatch.fromMemorySegment(seg, DType.FLOAT32, 1, 2, 4));
      assertTrue(e.getMessage().contains("Arena.ofShared()"), e.getMessage());
    }
  }

  /** Memory closed after the batch was made is an error naming the side, before any backend reads it. */
  @Test
  void memoryClosedAfterTheBatchIsNamed() {
    Arena arena = Arena.ofShared();
    TokenBatch d = TokenBatch.fromMemorySegment(arena.allocate(ValueLayout.JAVA_FLOAT, 8), DType.FLOAT32, 1, 2, 4);
    arena.close();
    TokenBatch q = TokenBatch.ofFloats(new float[8], 1, 2, 4);
    try (MaxSim m = MaxSim.builder().backend("vector").build()) {
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> m.scores(q, d));
      assertTrue(e.getMessage().startsWith("documents read their tokens from a MemorySegment whose arena was closed"),
          e.getMessage());
      e = assertThrows(IllegalStateException.class, () -> m.topK(d, q, 1));
      assertTrue(e.getMessage().startsWith("queries"), e.getMessage());
      assertThrows(IllegalStateException.class, () -> m.upload(d));
    }
  }

  @Test
  void nativeMemoryEqualsHeapForEveryDtypeAndLayout() {
    RandomBatches r = new RandomBatches();
    float[] q = r.floats(3 * 9 * 20);
    float[] d = r.floats(5 * 13 * 20);
    short[] dBf = new short[d.length];
    short[] dHalf = new short[d.length];
    for (int i = 0; i < d.length; i++) {
      dBf[i] = DType.BFLOAT16.narrow(d[i]);
      dHalf[i] = DType.FLOAT16.narrow(d[i]);
    }
    int[] offsets = {0, 10, 10, 30, 50, 65};
    try (Arena arena = Arena.ofShared()) {
      MemorySegment qs = arena.allocate(ValueLayout.JAVA_FLOAT, q.length);
      MemorySegment.copy(q, 0, qs, ValueLayout.JAVA_FLOAT, 0, q.length);
      MemorySegment bf = arena.allocate(ValueLayout.JAVA_SHORT, dBf.length);
      MemorySegment.copy(dBf, 0, bf, ValueLayout.JAVA_SHORT, 0, dBf.length);
      MemorySegment half = arena.allocate(ValueLayout.JAVA_SHORT, dHalf.length);
      MemorySegment.copy(dHalf, 0, half, ValueLayout.JAVA_SHORT, 0, dHalf.length);

      TokenBatch qHeap = TokenBatch.ofFloats(q, 3, 9, 20).withLengths(new int[] {9, 4, 1});
      TokenBatch qNative = TokenBatch.fromMemorySegment(qs, DType.FLOAT32, 3, 9, 20).withLengths(new int[] {9, 4, 1});
      for (String backend : new String[] {"reference", "scalar", "vector"}) {
        try (MaxSim m = MaxSim.builder().backend(backend).threads(2).build()) {
          assertArrayEquals(m.scores(qHeap, TokenBatch.ofHalfs(DType.BFLOAT16, dBf, 5, 13, 20)),
              m.scores(qNative, TokenBatch.fromMemorySegment(bf, DType.BFLOAT16, 5, 13, 20)), backend + " bf16");
          assertArrayEquals(m.scores(qHeap, TokenBatch.packedHalfs(DType.FLOAT16, dHalf, offsets, 20)),
              m.scores(qNative, TokenBatch.packedFromMemorySegment(half, DType.FLOAT16, offsets, 20)), backend + " fp16 packed");
        }
      }
    }
  }

  /** Rows longer than the pieces a mapped bf16 document is staged in, masked into runs, score as on the heap. */
  @Test
  void longMaskedBf16RowsInNativeMemoryEqualHeap() {
    RandomBatches r = new RandomBatches();
    int n = 3;
    int length = 300;
    int dim = 33;
    float[] values = r.floats(n * length * dim);
    short[] bf = new short[values.length];
    for (int i = 0; i < bf.length; i++) {
      bf[i] = DType.BFLOAT16.narrow(values[i]);
    }
    boolean[][] mask = new boolean[n][length];
    for (int t = 0; t < length; t++) {
      mask[0][t] = true;
      mask[1][t] = t % 97 != 5;
      mask[2][t] = t > 140;
    }
    TokenBatch q = TokenBatch.ofFloats(r.floats(2 * 7 * dim), 2, 7, dim);
    try (Arena arena = Arena.ofShared()) {
      MemorySegment seg = arena.allocate(ValueLayout.JAVA_SHORT, bf.length);
      MemorySegment.copy(bf, 0, seg, ValueLayout.JAVA_SHORT, 0, bf.length);
      TokenBatch heap = TokenBatch.ofHalfs(DType.BFLOAT16, bf, n, length, dim).withMask(mask);
      TokenBatch mapped = TokenBatch.fromMemorySegment(seg, DType.BFLOAT16, n, length, dim).withMask(mask);
      for (String backend : new String[] {"scalar", "vector"}) {
        try (MaxSim m = MaxSim.builder().backend(backend).threads(2).build()) {
          assertArrayEquals(m.scores(q, heap), m.scores(q, mapped), backend);
        }
      }
    }
  }
}
