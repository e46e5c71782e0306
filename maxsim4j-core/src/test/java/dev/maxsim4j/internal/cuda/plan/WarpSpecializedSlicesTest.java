package dev.maxsim4j.internal.cuda.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * How the warp-specialized kernel's launches slice documents (ForwardPlan.wsSlices): not at all where
 * the items spread over the SMs within 10% of even (a slice costs the merge launch), else only as far as
 * needed to come within 3% of even, never more slices than tiles, at most 8. Plain arithmetic: runs on the
 * CPU.
 */
class WarpSpecializedSlicesTest {
  private static final int H200_SMS = 132;

  @Test
  void manyItemsAreNotSliced() {
    // 1 x 1000 x 1024 x 1024: 8 passes x 1000 pairs, 61 items on the busiest SM against 60.6
    assertEquals(1, ForwardPlan.wsSlices(8000, 8, H200_SMS));
  }

  @Test
  void aTailOfLessThanTenPercentIsNotSliced() {
    // 1 x 1000 x 128 x 1024: 8 items on the busiest SM against 7.6 (5.5%), cheaper than the merge launch
    assertEquals(1, ForwardPlan.wsSlices(1000, 8, H200_SMS));
  }

  @Test
  void unevenItemsAreSlicedUntilEven() {
    // 198 items: 2 on the busiest SM against 1.5 (33%); 396: 3 against 3.0
    assertEquals(2, ForwardPlan.wsSlices(198, 8, H200_SMS));
    // 165 items: 2 against 1.25; 330: 3 against 2.5; 660: 5 against 5.0
    assertEquals(4, ForwardPlan.wsSlices(165, 8, H200_SMS));
  }

  @Test
  void fewItemsTakeAtMostEightSlicesAndNoMoreThanTheirTiles() {
    assertEquals(8, ForwardPlan.wsSlices(12, 64, H200_SMS));
    assertEquals(2, ForwardPlan.wsSlices(12, 2, H200_SMS));
    assertEquals(1, ForwardPlan.wsSlices(12, 1, H200_SMS));
  }
}
