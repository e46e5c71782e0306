package dev.maxsim4j.bench.retrieval;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Packed bf16 rows: rounding, views of rows, gathering, widening and mean pooling against float64 references. */
class EncodedTest {
  @Test
  void bf16RoundsToNearestEven() {
    assertEquals(1.0f, Encoded.toFloat(Encoded.toBf16(1.0f)));
    assertEquals(1.0f, Encoded.toFloat(Encoded.toBf16(Float.intBitsToFloat(0x3F808000)))); // tie: down to even
    assertEquals(Float.intBitsToFloat(0x3F820000), Encoded.toFloat(Encoded.toBf16(Float.intBitsToFloat(0x3F818000))));
    SplittableRandom rnd = new SplittableRandom(3);
    for (int i = 0; i < 10_000; i++) {
      float f = (float) rnd.nextGaussian();
      float r = Encoded.toFloat(Encoded.toBf16(f));
      assertEquals(f, r, Math.abs(f) / 256 + 1e-30, "f=" + f);
    }
  }

  @Test
  void rowsGatherWidenAndPoolLikeAFloat64Reference() {
    SplittableRandom rnd = new SplittableRandom(5);
    for (int dim : new int[] {1, 3, 33, 127, 513}) {
      int[] lengths = {1, 4, 2, 7};
      int[] offsets = new int[lengths.length + 1];
      for (int i = 0; i < lengths.length; i++) {
        offsets[i + 1] = offsets[i] + lengths[i];
      }
      short[] bits = new short[offsets[lengths.length] * dim];
      for (int i = 0; i < bits.length; i++) {
        bits[i] = Encoded.toBf16((float) rnd.nextGaussian());
      }
      try (Arena arena = Arena.ofShared()) {
        MemorySegment seg = arena.allocate(bits.length * 2L);
        MemorySegment.copy(bits, 0, seg, ValueLayout.JAVA_SHORT_UNALIGNED, 0, bits.length);
        Encoded e = new Encoded(seg, offsets, dim);
        TokenBatch all = e.batch();
        assertEquals(DType.BFLOAT16, all.dtype());
        for (int row = 0; row < lengths.length; row++) {
          float[][] tokens = e.row(row);
          assertEquals(lengths[row], tokens.length);
          double[] mean = new double[dim];
          for (int t = 0; t < lengths[row]; t++) {
            for (int k = 0; k < dim; k++) {
              float expected = Encoded.toFloat(bits[(offsets[row] + t) * dim + k]);
              assertEquals(expected, tokens[t][k]);
              assertEquals(expected, all.get(row, t, k));
              mean[k] += expected;
            }
          }
          double norm = Math.sqrt(java.util.Arrays.stream(mean).map(v -> v * v).sum());
          float[] pooled = e.meanUnit(row);
          for (int k = 0; k < dim; k++) {
            assertEquals(mean[k] / norm, pooled[k], 1e-5);
          }
        }
        TokenBatch middle = e.rows(1, 3);
        assertArrayEquals(new int[] {0, 4, 6}, middle.offsets());
        assertEquals(e.row(2)[1][dim - 1], middle.get(1, 1, dim - 1));
        Encoded picked = e.gather(new int[] {3, 0, 3}, arena);
        assertArrayEquals(new int[] {0, 7, 8, 15}, picked.offsets());
        assertArrayEquals(e.row(3)[6], picked.row(2)[6]);
        assertArrayEquals(e.row(0)[0], picked.row(1)[0]);
        Encoded wide = e.toFloat32(arena);
        assertEquals(DType.FLOAT32, wide.batch().dtype());
        for (int row = 0; row < lengths.length; row++) {
          assertArrayEquals(e.row(row), wide.row(row));
        }
        assertArrayEquals(e.row(3), wide.gather(new int[] {3}, arena).row(0));
      }
    }
  }
}
