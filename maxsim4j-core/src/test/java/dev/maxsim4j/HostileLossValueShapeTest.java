package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Loss.Value is a public record whose dScoreMatrix reads rows x columns of dScores: a hostile tester built one of
 * mismatched shape and got a NullPointerException, an ArrayIndexOutOfBoundsException or a
 * NegativeArraySizeException from dScoreMatrix; the constructor now refuses such a value by name.
 */
class HostileLossValueShapeTest {
  @Test
  void aLossValueOfMismatchedShapeIsRefused() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new Loss.Value(0, new float[3], 2, 2));
    assertTrue(e.getMessage().contains("dScores has length 3; expected rows x columns = 2 x 2"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> new Loss.Value(0, null, 1, 1));
    assertTrue(e.getMessage().contains("dScores is null"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> new Loss.Value(0, new float[0], -1, 2));
    assertTrue(e.getMessage().contains("rows = -1"), e.getMessage());
    assertArrayEquals(new float[] {1f, 2f}, new Loss.Value(0, new float[] {1f, 2f, 3f, 4f}, 2, 2).dScoreMatrix()[0]);
  }
}
