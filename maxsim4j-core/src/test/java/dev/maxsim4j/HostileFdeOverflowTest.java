package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Encoder sizes whose product passes 2^63 must be refused as too long, not wrap a long into range. */
class HostileFdeOverflowTest {

  @Test
  void aProductThatWrapsALongIsRefusedByName() {
    // 2^30 x 2^10 x 2^30 = 2^70 wraps to 0
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> FixedDimensionalEncoder.builder(1 << 30).projectionDim(1 << 30).repetitions(1 << 30).simHashBits(10)
            .build());
    assertTrue(e.getMessage().contains("repetitions x 2^simHashBits x projectionDim = 1073741824 x 1024 x 1073741824"
        + " = 1180591620717411303424; expected at most 65536"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> FixedDimensionalEncoder.builder(Integer.MAX_VALUE)
        .projectionDim(Integer.MAX_VALUE).repetitions(Integer.MAX_VALUE).simHashBits(10).build());
  }
}
