package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.maxsim4j.DType;
import org.junit.jupiter.api.Test;

class HostileTokenCodecTest {
  /** 65520 is the midpoint between fp16's largest finite 65504 and the next step, so it rounds to infinity. */
  @Test
  void aFiniteValueThatAHalfTypeWouldStoreAsInfinityIsRefusedNamingIt() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TokenCodec.encode(new float[][] {{1f, 2f}, {3f, -65520f}}, DType.FLOAT16));
    assertEquals("tokens[1][1] = -65520.0 rounds to infinity in FLOAT16, whose largest finite value is 65504.0;"
        + " expected values within its range (scale the tokens, or encode FLOAT32)", e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> TokenCodec.encode(new float[][] {{Float.MAX_VALUE}}, DType.BFLOAT16));
    assertEquals("tokens[0][0] = 3.4028235E38 rounds to infinity in BFLOAT16, whose largest finite value is"
        + " 3.3895314E38; expected values within its range (scale the tokens, or encode FLOAT32)", e.getMessage());

    // the largest values that round to a finite half, and an infinity that was one already, are kept
    assertArrayEquals(new float[][] {{65504f, Float.NEGATIVE_INFINITY}},
        TokenCodec.decode(TokenCodec.encode(new float[][] {{65519f, Float.NEGATIVE_INFINITY}}, DType.FLOAT16)));
    assertArrayEquals(new float[][] {{3.3895314E38f, Float.POSITIVE_INFINITY}}, TokenCodec.decode(
        TokenCodec.encode(new float[][] {{3.3895314E38f, Float.POSITIVE_INFINITY}}, DType.BFLOAT16)));
  }
}
