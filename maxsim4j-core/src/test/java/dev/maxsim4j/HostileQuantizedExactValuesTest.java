package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * A quantized token's value is {@code scale x q}, which scoring takes exactly: an int8 code 127 at scale 3e36 is
 * 3.81e38, past fp32's largest, and scores finite. quantize and l2Normalized read the fp32 product instead, so the
 * first refused that valid batch as "holds Infinity" and the second returned NaN for a finite token.
 */
class HostileQuantizedExactValuesTest {
  private static final TokenBatch LARGE =
      TokenBatch.ofBytes(DType.INT8, new byte[] {127, -3, 0, 1}, new float[] {3e36f, 1f}, 2, 1, 2);

  @Test
  void requantizingLargeScalesKeepsTheirValues() {
    TokenBatch q = TokenBatch.ofFloats(new float[] {0.5f, 0.25f}, 1, 1, 2);
    try (MaxSim m = MaxSim.builder().backend("cpu").threads(1).build()) {
      float[] want = m.scores(q, LARGE)[0];
      assertEquals((float) (0.5 * 127 * 3e36f - 0.25 * 3 * 3e36f), want[0], Math.ulp(want[0]));
      TokenBatch int8 = LARGE.quantize(DType.INT8);
      assertArrayEquals(new byte[] {127, -3, 0, 127}, int8.toByteArray());
      assertEquals(3e36f, int8.scales()[0]);
      assertArrayEquals(want, m.scores(q, int8)[0], Math.ulp(want[0]) * 2);
      float[] fp8 = m.scores(q, LARGE.quantize(DType.FLOAT8_E4M3))[0];
      assertEquals(want[0], fp8[0], Math.abs(want[0]) * 0.07, "e4m3 holds 3 bits of mantissa");
      TokenBatch bits = LARGE.quantize(DType.BINARY);
      assertEquals((float) ((127 + 3) * (double) 3e36f / 2), bits.scales()[0], Math.ulp(bits.scales()[0]));
      assertTrue(Float.isFinite(m.scores(q, bits)[0][0]));
    }
  }

  @Test
  void normalisingLargeScalesGivesUnitTokens() {
    float[] unit = LARGE.l2Normalized().toFloatArray();
    double norm = Math.hypot(127, 3);
    assertArrayEquals(new float[] {(float) (127 / norm), (float) (-3 / norm), 0f, 1f}, unit, 1e-7f);
  }

  @Test
  void aRequantizationPastFp32sLargestScaleIsRefusedByName() {
    // e4m3 448 at fp32's largest scale: an int8 scale would need 448/127 x 3.4e38, a 1-bit one (448+1)/2 x 3.4e38
    TokenBatch top = TokenBatch.ofBytes(DType.FLOAT8_E4M3, new byte[] {0x7e, 0x38}, new float[] {Float.MAX_VALUE},
        1, 1, 2);
    for (DType type : new DType[] {DType.INT8, DType.BINARY}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> top.quantize(type));
      String held = type == DType.BINARY ? "a mean magnitude of " : "magnitudes up to ";
      assertTrue(e.getMessage().startsWith("stored token 0 holds " + held), e.getMessage());
      assertTrue(e.getMessage().contains(type + " scale") && e.getMessage().contains("passes fp32's largest value"),
          e.getMessage());
    }
    assertEquals(1, top.quantize(DType.FLOAT8_E4M3).size(), "e4m3 to e4m3 keeps the scale");
  }

  /**
   * A token of subnormals whose mean magnitude rounds to 0 in fp32 keeps a 1-bit scale of the smallest subnormal,
   * as int8 and fp8 round their subnormal scales up: it does not vanish to zeros.
   */
  @Test
  void aOneBitTokenOfSubnormalsKeepsAScale() {
    float[] tiny = new float[16];
    tiny[0] = Float.MIN_VALUE;
    tiny[1] = -Float.MIN_VALUE;
    TokenBatch bits = TokenBatch.ofFloats(tiny, 1, 1, 16).quantize(DType.BINARY);
    assertEquals(Float.MIN_VALUE, bits.scales()[0]);
    float[] values = bits.toFloatArray();
    assertEquals(Float.MIN_VALUE, values[0]);
    assertEquals(-Float.MIN_VALUE, values[1]);
  }
}
