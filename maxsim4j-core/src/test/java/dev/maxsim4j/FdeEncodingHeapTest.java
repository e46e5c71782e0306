package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.internal.FdeEncoding;
import dev.maxsim4j.internal.FdeParameters;
import dev.maxsim4j.internal.HeapLimit;
import dev.maxsim4j.internal.Internals;
import dev.maxsim4j.internal.Tokens;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.IntConsumer;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Rows encoded in parallel each hold their working arrays: no more run at once than the heap has room for. */
class FdeEncodingHeapTest {
  private static final int ROWS = 16;
  private static final int TOKENS = 64;
  private static final int DIM = 8;

  /** Rows that reports 8 threads and records how many rows each call to forEach was given. */
  private static final class Recording implements FdeEncoding.Rows {
    final List<Integer> calls = new ArrayList<>();

    @Override
    public void forEach(int rows, IntConsumer row) {
      calls.add(rows);
      IntStream.range(0, rows).parallel().forEach(row);
    }

    @Override
    public int parallelism() {
      return 8;
    }
  }

  @Test
  void rowsRunAsManyAtOnceAsTheHeapHoldsTheirWorkingArraysWithTheSameEncodings() {
    float[] x = new float[ROWS * TOKENS * DIM];
    SplittableRandom r = new SplittableRandom(5);
    for (int i = 0; i < x.length; i++) {
      x[i] = (float) r.nextGaussian();
    }
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(DIM).build();
    FdeParameters p = encoder.parameters();
    Tokens t = Internals.tokens(TokenBatch.ofFloats(x, ROWS, TOKENS, DIM));

    Recording free = new Recording();
    float[][] expected = FdeEncoding.encode(p, t, false, free);
    assertEquals(List.of(ROWS), free.calls, "a heap with room: every row handed to the threads at once");

    // a call that holds all of the heap but the encodings and room for two rows' working arrays (each checked with
    // as much again beside it), not three
    long perRow = FdeEncoding.rowBytes(p, TOKENS);
    long encodings = ROWS * (4L * p.dimension() + HeapLimit.ARRAY_OVERHEAD);
    long held = Runtime.getRuntime().maxMemory() - encodings - 5 * perRow;
    Recording tight = new Recording();
    float[][] got = HeapLimit.beside(() -> held, () -> FdeEncoding.encode(p, t, false, tight));
    assertEquals(List.of(2), tight.calls, "two lanes of rows, one row at a time each");
    for (int row = 0; row < ROWS; row++) {
      assertArrayEquals(expected[row], got[row], "row " + row);
    }
  }
}
