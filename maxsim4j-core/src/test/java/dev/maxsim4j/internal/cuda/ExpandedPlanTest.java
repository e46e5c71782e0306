package dev.maxsim4j.internal.cuda;

import static dev.maxsim4j.internal.cuda.plan.PairLayout.ALL_PAIRS;
import static dev.maxsim4j.internal.cuda.plan.PairLayout.LISTED_PAIRS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.cuda.ForwardLaunches.Operands;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan.Family;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan.Plan;
import dev.maxsim4j.internal.cuda.plan.ForwardShape;
import dev.maxsim4j.internal.cuda.plan.GpuCapabilities;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Rule 21 of the forward plan: compressed documents against float queries are expanded once and read by the
 * warp-specialized kernel's "_scaled" entries where that launch reads each document tile often enough (more than 640
 * query rows, at least 3 groups of 8 queries), on sm_90, within the expansion's memory cap. Runs on the CPU.
 */
class ExpandedPlanTest {
  private static final GpuCapabilities H200 =
      new GpuCapabilities(9, 0, 132, 227 * 1024, true, (module, entry, threads, shared) -> 2);

  private static ForwardShape shape(int queries, int documents, int lq, int ld, int dim, DType qt, DType dt) {
    return new ForwardShape(ALL_PAIRS, queries, documents, 0, queries * documents, lq, ld, dim, qt, dt, false, false);
  }

  private static Plan plan(int queries, int documents, int lq, int ld, int dim, DType qt, DType dt) {
    return ForwardPlan.plan(shape(queries, documents, lq, ld, dim, qt, dt), H200);
  }

  @Test
  void longQueriesAndManyQueryGroupsTakeTheScaledEntries() {
    for (DType dt : new DType[] {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
      Plan p = plan(1, 1000, 1024, 1024, 128, DType.BFLOAT16, dt);
      assertEquals(Family.WGMMA_WS_EXPANDED, p.family(), dt.toString());
      assertEquals("maxsim_forward_wgmma_ws_k2_r256_scaled_bf16", p.entry());
      assertEquals(4, p.queryPasses()); // 1024 rows in passes of 256
      Plan bf16 = plan(1, 1000, 1024, 1024, 128, DType.BFLOAT16, DType.BFLOAT16);
      assertEquals(bf16.blocks(), p.blocks()); // the bf16 documents' plan, through another entry
      assertEquals(bf16.split(), p.split());
      assertEquals(bf16.sharedBytes(), p.sharedBytes());
      assertEquals("maxsim_forward_wgmma_ws_k2_q8_scaled_f16", plan(128, 128, 32, 300, 128, DType.FLOAT16, dt).entry());
      assertEquals("maxsim_forward_wgmma_ws_k1_r256_scaled_bf16", // 3 passes of 256 rows
          plan(1, 300, 641, 500, 64, DType.BFLOAT16, dt).entry());
      assertEquals("maxsim_forward_wgmma_ws_k2_q8_scaled_bf16", // 3 groups of 8 queries
          plan(17, 1000, 32, 300, 128, DType.BFLOAT16, dt).entry());
    }
    assertEquals("maxsim_forward_wgmma_ws_k1_q8_scaled_bf16", // 1-bit rows of 16-48 dims too
        plan(128, 128, 32, 300, 48, DType.BFLOAT16, DType.BINARY).entry());
  }

  @Test
  void oneReadOfEachTileKeepsTheKernelsThatExpandOnTheirWay() {
    // up to 640 query rows, or up to two groups of 8 queries: the expansion's pass costs more than it saves
    for (int lq : new int[] {128, 256, 300, 512, 640}) {
      assertNotEquals(Family.WGMMA_WS_EXPANDED, plan(1, 1000, lq, 1024, 128, DType.BFLOAT16, DType.INT8).family());
    }
    assertNotEquals(Family.WGMMA_WS_EXPANDED, plan(8, 2000, 32, 300, 128, DType.BFLOAT16, DType.INT8).family());
    assertNotEquals(Family.WGMMA_WS_EXPANDED, plan(16, 2000, 32, 300, 128, DType.BFLOAT16, DType.INT8).family());
    // one short query against many documents: rule 20's bulk copies
    assertEquals(Family.QUANT_TMA, plan(1, 10000, 32, 300, 128, DType.BFLOAT16, DType.INT8).family());
  }

  @Test
  void otherTypesWidthsAndDevicesKeepTheirRules() {
    // compressed or fp32 queries, the training argmax, d over 128 or not a multiple of 16, 8-bit rows under 64 dims
    for (DType qt : new DType[] {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY, DType.FLOAT32}) {
      assertNotEquals(Family.WGMMA_WS_EXPANDED, plan(1, 1000, 1024, 1024, 128, qt, DType.INT8).family(), qt.name());
    }
    assertNotEquals(Family.WGMMA_WS_EXPANDED, plan(1, 1000, 1024, 1024, 256, DType.BFLOAT16, DType.INT8).family());
    assertNotEquals(Family.WGMMA_WS_EXPANDED, plan(1, 1000, 1024, 1024, 120, DType.BFLOAT16, DType.BINARY).family());
    assertNotEquals(Family.WGMMA_WS_EXPANDED, plan(128, 128, 32, 300, 48, DType.BFLOAT16, DType.INT8).family());
    assertNotEquals(Family.WGMMA_WS_EXPANDED, ForwardPlan.plan(shape(1, 1000, 1024, 1024, 128, DType.BFLOAT16,
        DType.INT8), new GpuCapabilities(8, 9, 128, 101376, false, (module, entry, threads, shared) -> 2)).family());
  }

  @Test
  void theExpansionStaysWithinItsMemoryCap() {
    // 1000 x 1024 tokens x 128 dims: 250 MiB of bf16, within the cap; a launch over 2000 such documents is not
    assertEquals(Family.WGMMA_WS_EXPANDED, plan(1, 1000, 1024, 1024, 128, DType.BFLOAT16, DType.INT8).family());
    assertNotEquals(Family.WGMMA_WS_EXPANDED, plan(1, 2000, 1024, 1024, 128, DType.BFLOAT16, DType.INT8).family());
    // the stored tokens the launch's documents hold, not the longest document's length times their count
    ForwardShape few = new ForwardShape(ALL_PAIRS, 1, 2000, 0, 2000, 1024, 1024, 128, DType.BFLOAT16, DType.INT8,
        false, false, 2000L * 300);
    assertEquals(Family.WGMMA_WS_EXPANDED, ForwardPlan.plan(few, H200).family());
    ForwardShape many = new ForwardShape(LISTED_PAIRS, 64, 3, 0, 192, 1024, 300, 128, DType.BFLOAT16, DType.INT8,
        false, false, 1L << 30);
    assertNotEquals(Family.WGMMA_WS_EXPANDED, ForwardPlan.plan(many, H200).family());
  }

  @Test
  void theLaunchPassesTheDocumentsScalesAndItsTensorMap() {
    ForwardShape s = shape(1, 1000, 1024, 1024, 128, DType.BFLOAT16, DType.INT8);
    DeviceTokens q = new DeviceTokens(DType.BFLOAT16, 128, 1, 1024, 1024, 0x1000, 0x1100, 0x1200, 0x1300, 0);
    // the expansion's tokens as ForwardKernels hands them on: bf16, with the compressed tokens' scales
    DeviceTokens d = new DeviceTokens(DType.BFLOAT16, 128, 1000, 1024, 1024000, 0x8000, 0x8100, 0x8200, 0x8300, 0,
        0x8400);
    List<KernelLaunch> launches = ForwardLaunches.of(ForwardPlan.plan(s, H200), s, new Operands(q, d, 0x9000, 0, 0));
    KernelArgs.WgmmaWs args = (KernelArgs.WgmmaWs) launches.get(0).args();
    assertEquals(0x8400, args.dScale());
    assertEquals(d, args.documents());
  }
}
