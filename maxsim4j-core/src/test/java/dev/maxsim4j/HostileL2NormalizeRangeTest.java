package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** l2Normalized on tokens whose norm lies outside fp32's normal range: unit vectors, not infinities or NaN. */
class HostileL2NormalizeRangeTest {
  @Test
  void subnormalTokensBecomeUnitVectors() {
    // norms of 1.4e-45 and 1.4e-39: their reciprocals pass fp32's largest value
    float[] data = {Float.MIN_VALUE, 0, 1e-39f, 1e-39f};
    float[] unit = TokenBatch.ofFloats(data, 1, 2, 2).l2Normalized().toFloatArray();
    assertEquals(1f, unit[0], "a min-subnormal token");
    assertEquals(0f, unit[1], "a min-subnormal token's zero");
    assertEquals((float) Math.sqrt(0.5), unit[2], 1e-7f, "a subnormal token");
    assertEquals((float) Math.sqrt(0.5), unit[3], 1e-7f, "a subnormal token");
  }

  @Test
  void hugeTokensKeepTheirPrecision() {
    // a norm near fp32's largest value: its reciprocal is subnormal and would keep few significant bits
    float[] unit = TokenBatch.ofFloats(new float[] {Float.MAX_VALUE, Float.MAX_VALUE}, 1, 1, 2).l2Normalized()
        .toFloatArray();
    assertEquals((float) Math.sqrt(0.5), unit[0], "a huge token");
    assertEquals((float) Math.sqrt(0.5), unit[1], "a huge token");
  }

  @Test
  void scoresOfNormalizedTinyTokensAreCosines() {
    TokenBatch q = TokenBatch.ofFloats(new float[] {3e-40f, 4e-40f}, 1, 1, 2).l2Normalized();
    TokenBatch d = TokenBatch.ofFloats(new float[] {3e-40f, 4e-40f}, 1, 1, 2).l2Normalized();
    for (String backend : new String[] {"reference", "scalar", "vector"}) {
      try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
        assertEquals(1f, m.scores(q, d)[0][0], 1e-6f, backend);
      }
    }
  }
}
