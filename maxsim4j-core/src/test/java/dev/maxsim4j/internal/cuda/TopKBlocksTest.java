package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The device top-k's blocks of documents and the 2048-score segments its candidates are counted in. */
class TopKBlocksTest {

  @Test
  void segmentsCountEveryBlockWithItsPartialLastSegment() {
    for (int nd : new int[] {1, 2047, 2048, 2049, 10_000, 1_000_000}) {
      for (int nq : new int[] {1, 8, 32, 3000}) {
        int width = DeviceTopK.width(nq, nd);
        long expected = 0;
        for (int j0 = 0; j0 < nd; j0 += width) {
          expected += (Math.min(width, nd - j0) + 2047) / 2048;
        }
        assertEquals(expected, DeviceTopK.segments(nd, width), nd + " documents, " + nq + " queries");
      }
    }
  }

  @Test
  void aLaunchScoresAtMostFourMillionPairs() {
    assertEquals(1_000_000, DeviceTopK.width(1, 1_000_000));
    assertEquals(131_072, DeviceTopK.width(32, 1_000_000));
    assertEquals(1, DeviceTopK.width(8_000_000, 5));
  }
}
