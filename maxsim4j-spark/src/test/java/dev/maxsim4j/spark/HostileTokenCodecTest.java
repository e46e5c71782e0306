package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.maxsim4j.DType;
import org.junit.jupiter.api.Test;

class HostileTokenCodecTest {
  /** A 1-bit cell of L tokens of d dimensions, all bits 0 and every scale 1. */
  private static byte[] bitCell(int length, int dim) {
    long size = TokenCodec.HEADER_BYTES + length * (4 + (dim + 7L) / 8);
    java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate((int) size).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    b.put((byte) 0x6D).put((byte) 5).putInt(dim).putInt(length);
    for (int t = 0; t < length; t++) {
      b.putFloat(1f);
    }
    return b.array();
  }

  /**
   * A valid cell whose floats cannot be had is refused by its sizes: a row past one Java array, or rows past the
   * whole heap (a 1-bit cell decodes to 32 times its size). Both were an OutOfMemoryError from inside decode.
   */
  @Test
  void aCellTooLargeToDecodeIsRefusedByItsSizes() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TokenCodec.decode(bitCell(1, Integer.MAX_VALUE)));
    assertEquals("cell holds BINARY tokens of L x d = 1 x 2147483647, whose float[L][d] takes 8589934612 bytes in rows"
        + " past one Java array (2147483639 elements); expected a smaller cell, or score it as it is (the maxsim"
        + " function and SparkMaxSim read cells without decoding them)", e.getMessage());
    long heap = Runtime.getRuntime().maxMemory();
    assumeTrue(heap < 32L << 30, "a heap the test's cell (32 MiB a token, one past the heap's GiB) passes");
    int length = (int) (heap / (1L << 30) + 1); // past the heap, in 2^30-byte rows
    byte[] cell = bitCell(length, 1 << 28);
    e = assertThrows(IllegalArgumentException.class, () -> TokenCodec.decode(cell));
    assertEquals("cell holds BINARY tokens of L x d = " + length + " x 268435456, whose float[L][d] takes "
        + length * ((1L << 30) + 24) + " bytes, more than this JVM's heap (" + heap + " bytes, -Xmx) has room for"
        + " beside the cell, its copy and an eighth of the heap (" + (heap - 2L * cell.length - heap / 8) + " bytes);"
        + " expected a smaller cell, or score it as it is (the maxsim function and SparkMaxSim read cells without"
        + " decoding them)", e.getMessage());
    // nor where the floats fit the whole heap but not beside the cell (rows of 32 MiB, as many as the heap holds)
    byte[] near = bitCell((int) (heap / ((32L << 20) + 24)), 1 << 23);
    e = assertThrows(IllegalArgumentException.class, () -> TokenCodec.decode(near));
    assertTrue(e.getMessage().contains("has room for beside the cell"), e.getMessage());
  }
  /** 65520 is halfway between fp16's largest finite 65504 and the next step: it rounds to infinity. */
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
