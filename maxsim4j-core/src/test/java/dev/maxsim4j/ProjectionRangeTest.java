package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The projection layer sums in fp32, as its javadoc says: a partial sum past fp32's range stays infinite. */
class ProjectionRangeTest {
  @Test
  void aPartialSumPastFloatsRangeStaysInfiniteOnEveryCpuBackend() {
    for (String backend : new String[] {"reference", "scalar", "vector"}) {
      try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
        float[] x = {2e38f, 2e38f, -2e38f};
        float[] ones = {1, 1, 1};
        assertEquals(Float.POSITIVE_INFINITY, m.project(x, 1, 3, ones, 1)[0], backend);
        assertEquals(Float.POSITIVE_INFINITY, m.projectionGradient(x, 3, 1, ones, 1)[0], backend);
        assertEquals(2e38f, m.project(new float[] {2e38f, -2e38f, 2e38f}, 1, 3, ones, 1)[0], backend);
      }
    }
  }
}
