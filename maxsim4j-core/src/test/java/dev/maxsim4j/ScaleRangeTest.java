package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Scale products past fp32's range either way, where the exact score is a normal fp32 value: every CPU backend
 * scores it as the float64 reference does (to 1e-5 relative), in scores, pairwise and top-k, instead of infinity
 * or 0. Found by a hostile test.
 */
class ScaleRangeTest {
  private static void assertAsReference(TokenBatch q, TokenBatch d, String backend, String where) {
    float expected;
    try (MaxSim reference = MaxSim.builder().backend("reference").build()) {
      expected = reference.scores(q, d)[0][0];
    }
    assertTrue(Float.isFinite(expected) && Math.abs(expected) >= Float.MIN_NORMAL, where + ": " + expected);
    try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
      float tolerance = Math.abs(expected) * 1e-5f;
      assertEquals(expected, m.scores(q, d)[0][0], tolerance, backend + " " + where);
      assertEquals(expected, m.pairwise(q, d)[0], tolerance, backend + " " + where + " pairwise");
      assertEquals(expected, m.topK(q, d, 1).scores()[0][0], tolerance, backend + " " + where + " top-k");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"vector", "scalar"})
  void scaleProductsThatOverflowFp32(String backend) {
    // a float token needing headroom (divided by 256) against an int8 scale of 2e36
    assertAsReference(TokenBatch.ofFloats(new float[] {1e38f, 1f}, 1, 1, 2),
        TokenBatch.ofBytes(DType.INT8, new byte[] {0, 1}, new float[] {2e36f}, 1, 1, 2), backend, "int8 2e36");
    // e4m3 on both sides, scales 2e19 each: their product 4e38, the dot product 2^-18
    assertAsReference(TokenBatch.ofBytes(DType.FLOAT8_E4M3, new byte[] {0x01}, new float[] {2e19f}, 1, 1, 1),
        TokenBatch.ofBytes(DType.FLOAT8_E4M3, new byte[] {0x01}, new float[] {2e19f}, 1, 1, 1), backend,
        "e4m3 x e4m3 2e19");
    // an e4m3 query scaled 3e38 against a float document needing headroom
    assertAsReference(TokenBatch.ofBytes(DType.FLOAT8_E4M3, new byte[] {0x00, 0x01}, new float[] {3e38f}, 1, 1, 2),
        TokenBatch.ofFloats(new float[] {1e38f, 1f}, 1, 1, 2), backend, "e4m3 3e38 x fp32");
  }

  @ParameterizedTest
  @ValueSource(strings = {"vector", "scalar"})
  void scaleProductsThatAreNotNormal(String backend) {
    int d = 1024;
    byte[] most = new byte[d];
    Arrays.fill(most, (byte) 0x7e); // 448 in e4m3, 127 as int8
    for (DType type : new DType[] {DType.FLOAT8_E4M3, DType.INT8}) {
      float scale = type == DType.INT8 ? 1e-22f : 1e-23f;
      assertAsReference(TokenBatch.ofBytes(type, most, new float[] {scale}, 1, 1, d),
          TokenBatch.ofBytes(type, most, new float[] {scale}, 1, 1, d), backend, type + " scales " + scale);
    }
    byte[] bits = new byte[d / 8];
    Arrays.fill(bits, (byte) 0xff);
    assertAsReference(TokenBatch.ofBytes(DType.BINARY, bits, new float[] {1e-20f}, 1, 1, d),
        TokenBatch.ofBytes(DType.BINARY, bits, new float[] {1e-20f}, 1, 1, d), backend, "1-bit scales 1e-20");
  }
}
