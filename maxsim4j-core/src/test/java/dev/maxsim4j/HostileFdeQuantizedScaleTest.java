package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import org.junit.jupiter.api.Test;

/**
 * Quantized tokens encode from their exact values {@code scale x q}: an fp32 product overflowed to infinity for a
 * scale near fp32's largest (infinities of both signs then summed to NaN and put tokens in the wrong partition), and
 * rounded to zero for a tiny one, where the values, their sums and their averages are finite and nonzero.
 */
class HostileFdeQuantizedScaleTest {

  @Test
  void hugeScalesEncodeAsTheirExactAveragesAndSums() {
    // int8 codes 3 and -2 at scale 2^127: the values 1.5 x 2^128 and -2^128 pass fp32's largest, their sum 2^127
    // and average 2^126 do not
    float scale = 0x1p127f;
    TokenBatch b = TokenBatch.ofBytes(DType.INT8, new byte[] {3, -2}, new float[] {scale, scale}, 1, 2, 1);
    FixedDimensionalEncoder one = FixedDimensionalEncoder.builder(1).simHashBits(0).repetitions(1).build();
    assertArrayEquals(new float[] {0x1p126f}, one.encodeDocuments(b)[0]);
    assertArrayEquals(new float[] {0x1p127f}, one.encodeQueries(b)[0]);
  }

  @Test
  void tinyScalesEncodeAsTheirExactSums() {
    // e4m3 code 0x30 is 0.5: at scale 2^-149 each value is half of fp32's smallest, and rounds to 0 alone
    TokenBatch b = TokenBatch.ofBytes(DType.FLOAT8_E4M3, new byte[] {0x30, 0x30}, new float[] {0x1p-149f,
        0x1p-149f}, 1, 2, 1);
    FixedDimensionalEncoder one = FixedDimensionalEncoder.builder(1).simHashBits(0).repetitions(1).build();
    assertArrayEquals(new float[] {Float.MIN_VALUE}, one.encodeQueries(b)[0]);
  }

  /**
   * Scaling every token by a power of two scales its encoding by the same power (signs, sums, averages and sketches
   * are exact in float64 to the last rounding), for every quantized type and encoder shape, until the result
   * itself overflows.
   */
  @Test
  void encodingsScaleWithTheirTokensUpToFp32sLargest() {
    for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
      for (int d : new int[] {1, 3, 33}) {
        for (int s = 0; s < 4; s++) {
          RandomBatches r = new RandomBatches();
          int tokens = 4 * 9;
          byte[] data = r.quantizedBytes(type, tokens, d);
          float[] small = new float[tokens];
          float[] huge = new float[tokens];
          for (int t = 0; t < tokens; t++) {
            small[t] = 1 + (float) r.rnd.nextDouble();
            huge[t] = Math.scalb(small[t], 120);
          }
          TokenBatch a = TokenBatch.ofBytes(type, data, small, 4, 9, d);
          TokenBatch b = TokenBatch.ofBytes(type, data, huge, 4, 9, d);
          FixedDimensionalEncoder e = FdeCases.encoder(d, new int[] {2 + s % 2, 3, s % 2, s / 2 % 2, s / 2}, s);
          String message = type + " d=" + d + " " + e + ", " + r;
          assertScaled(e.encodeDocuments(a), e.encodeDocuments(b), 120, message + ", documents");
          assertScaled(e.encodeQueries(a), e.encodeQueries(b), 120, message + ", queries");
        }
      }
    }
  }

  private static void assertScaled(float[][] small, float[][] huge, int power, String message) {
    for (int i = 0; i < small.length; i++) {
      float[] expected = new float[small[i].length];
      for (int k = 0; k < expected.length; k++) {
        expected[k] = Math.scalb(small[i][k], power);
      }
      assertArrayEquals(expected, huge[i], message + ", row " + i);
    }
  }
}
