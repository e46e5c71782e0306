package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;

/**
 * The test oracle's own bounds: a query row without valid tokens carries no rounding, so its bound stays 1e-6 whatever
 * its document holds; an infinite document norm times no query norm would be NaN, and a NaN bound must pass nothing
 * (a reviewer's finding: it passed every finite score).
 */
class OracleBoundsTest {
  @Test
  void aQueryWithoutValidTokensKeepsItsTightBoundBesideAnInfiniteDocument() {
    TokenBatch q = TokenBatch.ofFloats(new float[] {1, 2, 3, 4, 5, 6, 7, 8}, 1, 2, 4)
        .withMask(new boolean[][] {{false, false}});
    TokenBatch d = TokenBatch.ofFloats(new float[] {1, Float.POSITIVE_INFINITY, 0, 0}, 1, 1, 4);
    assertThrows(AssertionFailedError.class,
        () -> ParityTest.assertClose(new float[][] {{0f}}, new float[][] {{1f}}, q, d, "no valid query token"));
    assertEquals(1e-6, Oracle.tolerance(q, 0, d, 0), 0, "pair by pair");
    assertEquals(1e-6, Oracle.tolerances(q, d).of(0, 0), 0, "from precomputed norms");
  }

  @Test
  void aNanBoundPassesNothing() {
    assertThrows(AssertionFailedError.class, () -> ParityTest.assertScore(0f, 1f, Double.NaN, "NaN bound"));
    ParityTest.assertScore(Float.POSITIVE_INFINITY, Float.POSITIVE_INFINITY, Double.NaN, "equal scores pass");
  }
}
