package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.util.BytesRef;
import org.junit.jupiter.api.Test;

/**
 * A hostile tester's finding: the gathering buffers grew to (int) (2 x length), which past 2^30 floats wraps to a
 * negative length (a NegativeArraySizeException), and needed more than one Java array without saying so. Growth
 * now doubles up to the array limit and refuses, naming the sizes, what no array holds. The sizes alone are
 * tested: no buffer of a gigabyte is made.
 */
class CapacityTest {

  @Test
  void growthDoublesSaturatesAndRefusesByName() {
    assertEquals(10, Capacity.grown(0, 10, "x"));
    assertEquals(20, Capacity.grown(10, 11, "x"));
    assertEquals(100, Capacity.grown(10, 100, "x"));
    assertEquals(Capacity.MAX_ARRAY, Capacity.grown(1_500_000_000, 1_500_000_001L, "x"), "2 x 1.5e9 wrapped");
    assertEquals(Capacity.MAX_ARRAY, Capacity.grown(Capacity.MAX_ARRAY - 1, Capacity.MAX_ARRAY, "x"));
    for (long needed : new long[] {Capacity.MAX_ARRAY + 1L, 3L << 30, Long.MAX_VALUE}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Capacity.grown(1 << 30, needed, "field f of doc 7: the gathered floats"));
      assertTrue(e.getMessage().startsWith("field f of doc 7: the gathered floats: " + needed + " entries")
          && e.getMessage().contains(String.valueOf(Capacity.MAX_ARRAY)), e.getMessage());
    }
  }

  /** The buffers still gather many rows through their growth. */
  @Test
  void buffersGrowThroughManyValues() {
    LateInteractionBytes floats = new LateInteractionBytes().reset("f", 2);
    BytesRef value = LateInteractionField.encode(new float[][] {{1, 2}, {3, 4}, {5, 6}});
    for (int i = 0; i < 1000; i++) {
      floats.add(value, i);
    }
    assertEquals(1000, floats.rows());
    assertEquals(3000, floats.batch().offsets()[1000]);
    assertEquals(6f, floats.batch().get(999, 2, 1));
  }
}
