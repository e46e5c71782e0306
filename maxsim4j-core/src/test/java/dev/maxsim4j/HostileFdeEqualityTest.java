package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.api.Test;

/**
 * Two encoders of equal parameters and seed give the same encodings, so they are equal and hash alike: a caller that
 * checks an index's encoder against the one it queries with (or keys encoders in a map) compared them by identity.
 */
class HostileFdeEqualityTest {

  private static FixedDimensionalEncoder.Builder base() {
    return FixedDimensionalEncoder.builder(16).simHashBits(3).repetitions(4).projectionDim(8).finalDim(100).seed(7);
  }

  @Test
  void encodersOfEqualParametersAndSeedAreEqual() {
    FixedDimensionalEncoder a = base().build();
    FixedDimensionalEncoder b = base().build();
    assertEquals(a, b);
    assertEquals(a.hashCode(), b.hashCode());
    assertEquals(a.toString(), b.toString());
    assertEquals(FixedDimensionalEncoder.builder(16).build(), FixedDimensionalEncoder.builder(16).projectionDim(16)
        .simHashBits(3).repetitions(8).seed(42).build(), "the defaults spelled out");
  }

  @Test
  void everyParameterAndTheSeedTellEncodersApart() {
    FixedDimensionalEncoder a = base().build();
    assertNotEquals(a, base().seed(8).build());
    assertNotEquals(a, base().simHashBits(2).build());
    assertNotEquals(a, base().repetitions(5).build());
    assertNotEquals(a, base().projectionDim(4).build());
    assertNotEquals(a, base().finalDim(99).build());
    assertNotEquals(a, base().fillEmptyPartitions(false).build());
    assertNotEquals(a, FixedDimensionalEncoder.builder(17).simHashBits(3).repetitions(4).projectionDim(8).finalDim(100)
        .seed(7).build());
    assertNotEquals(a, null);
    assertNotEquals(a, (Object) "FixedDimensionalEncoder");
  }
}
