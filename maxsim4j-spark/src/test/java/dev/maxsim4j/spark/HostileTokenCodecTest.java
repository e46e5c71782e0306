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

  /**
   * A quantized type cannot store NaN or an infinity: the value is named as the half types name one out of range.
   * It was the core's "stored token 0 holds NaN", which names neither the cell's index nor what to do.
   */
  @Test
  void aValueAQuantizedTypeCannotStoreIsRefusedNamingIt() {
    for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
      for (float bad : new float[] {Float.NaN, Float.POSITIVE_INFINITY}) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> TokenCodec.encode(new float[][] {{1f, 2f}, {3f, bad}}, type));
        assertEquals("tokens[1][1] = " + bad + "; expected finite values to quantize to " + type + " (FLOAT32,"
            + " BFLOAT16 and FLOAT16 keep NaN and infinities)", e.getMessage());
      }
    }
  }
}
