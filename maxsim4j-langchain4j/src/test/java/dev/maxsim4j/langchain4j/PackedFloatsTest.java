package dev.maxsim4j.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * A hostile tester's finding: the encoder sized its packed output as tokens x 384 in int, which wraps past
 * 5,592,405 tokens (a negative size, or a small one that the copy then overruns). The size is now a long, and
 * what one Java array cannot hold is refused by name before the model runs. No model needed: the sizes alone.
 */
class PackedFloatsTest {

  @Test
  void tokensWhoseFloatsPassOneArrayAreRefusedByName() {
    assertEquals(0, MiniLmTokenEncoder.packedFloats(0));
    assertEquals(2 * 384, MiniLmTokenEncoder.packedFloats(2));
    long most = (Integer.MAX_VALUE - 8) / MiniLmTokenEncoder.DIM;
    assertEquals(most * 384, MiniLmTokenEncoder.packedFloats(most));
    for (long tokens : new long[] {most + 1, 5_592_406, 11_184_811, Integer.MAX_VALUE, 1L << 40}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> MiniLmTokenEncoder.packedFloats(tokens));
      assertTrue(e.getMessage().contains(tokens + " tokens") && e.getMessage().contains(tokens * 384 + " floats")
          && e.getMessage().contains(String.valueOf(Integer.MAX_VALUE - 8))
          && e.getMessage().contains("at most " + most), e.getMessage());
    }
  }
}
