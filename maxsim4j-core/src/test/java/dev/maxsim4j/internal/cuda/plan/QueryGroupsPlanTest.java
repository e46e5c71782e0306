package dev.maxsim4j.internal.cuda.plan;

import static dev.maxsim4j.internal.cuda.plan.PairLayout.ALL_PAIRS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan.Family;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan.Plan;
import org.junit.jupiter.api.Test;

/**
 * Rule 2 of the forward plan: several short all-pairs queries take the warp-specialized kernel's groups of 8 where
 * its items spread over the SMs about as evenly as the wgmma kernel's groups of 4 spread their documents over
 * their blocks, else the wgmma groups. Runs on the CPU.
 */
class QueryGroupsPlanTest {
  /** An H200 on which the wgmma kernel's groups hold two blocks per SM, as measured there. */
  private static final GpuCapabilities H200 =
      new GpuCapabilities(9, 0, 132, 227 * 1024, true, (module, entry, threads, shared) -> 2);

  private static Plan plan(int queries, int documents, int lq, int ld) {
    return ForwardPlan.plan(new ForwardShape(ALL_PAIRS, queries, documents, 0, queries * documents, lq, ld, 128,
        DType.BFLOAT16, DType.BFLOAT16, false, false), H200);
  }

  @Test
  void manyItemsTakeTheWarpSpecializedGroups() {
    Plan p = plan(32, 20000, 32, 300);
    assertEquals(Family.WGMMA_WS, p.family());
    assertEquals("maxsim_forward_wgmma_ws_k2_q8_bf16", p.entry());
    assertEquals(132, p.blocks());
  }

  @Test
  void itemsAsUnevenAsTheWgmmaGroupsDocumentsStillTakeTheWarpSpecializedGroups() {
    // 140 items on 132 SMs and 140 documents on 132 segments of blocks: two items' time either way, and the
    // warp-specialized kernel measured 0.178 ms against 0.265 on 8x140x32x8192x128 (0.0204 against 0.0197 at 300)
    assertEquals(Family.WGMMA_WS, plan(8, 140, 32, 8192).family());
    assertEquals(Family.WGMMA_WS, plan(8, 140, 32, 300).family());
  }

  @Test
  void itemsFarLessEvenThanTheWgmmaGroupsDocumentsTakeTheWgmmaGroups() {
    // 9 queries: 2 groups of 8 x 70 documents = 140 items on 132 SMs (1.89 of even), while 3 groups of 4 give
    // each of the 70 documents its own block
    assertEquals(Family.WGMMA_GROUPS, plan(9, 70, 32, 300).family());
    // fewer items than SMs, and 4 queries or fewer, stay there too
    assertEquals(Family.WGMMA_GROUPS, plan(32, 32, 32, 300).family());
    assertEquals(Family.WGMMA_GROUPS, plan(4, 10000, 32, 300).family());
  }
}
