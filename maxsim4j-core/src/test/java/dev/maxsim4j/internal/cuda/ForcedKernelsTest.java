package dev.maxsim4j.internal.cuda;

import static dev.maxsim4j.internal.cuda.plan.PairLayout.ALL_PAIRS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.cuda.plan.ForcedPlans;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan.Plan;
import dev.maxsim4j.internal.cuda.plan.ForwardShape;
import dev.maxsim4j.internal.cuda.plan.GpuCapabilities;
import dev.maxsim4j.internal.cuda.plan.KernelModule;
import org.junit.jupiter.api.Test;

/** The test hook forces each family and A/B entry where it applies and leaves the rest to the rules (CPU). */
class ForcedKernelsTest {
  private static final GpuCapabilities H200 = new GpuCapabilities(9, 0, 132, 232448, true, (m, e, t, s) -> 2);
  private static final GpuCapabilities A100 = new GpuCapabilities(8, 0, 108, 166912, false, (m, e, t, s) -> 2);

  private static ForwardShape shape(int queries, int documents, int lq, int ld, int dim, boolean argmax) {
    return new ForwardShape(ALL_PAIRS, queries, documents, 0, queries * documents, lq, ld, dim, DType.BFLOAT16,
        DType.BFLOAT16, argmax, false);
  }

  private static Plan plan(String name, ForwardShape s, GpuCapabilities gpu) {
    return ForcedKernels.planner(name).plan(s, gpu);
  }

  @Test
  void eachFamilyRunsWhereItsRuleWouldNotPickIt() {
    ForwardShape few = shape(16, 32, 32, 8192, 128, false); // the rules: wgmma query groups on the H200
    assertEquals("maxsim_forward_wgmma_g4_s6_bf16", plan("default", few, H200).entry());
    assertEquals("maxsim_forward_stream_c4_bf16", plan("stream", few, H200).entry());
    assertEquals("maxsim_forward_wgmma_ws_k2_bf16", plan("wgmma_ws", few, H200).entry());
    assertEquals("maxsim_forward_wgmma_r32_s6_bf16", plan("wgmma", few, H200).entry());
    assertEquals("maxsim_forward_group4_bf16", plan("groups", few, H200).entry());
    assertEquals("maxsim_forward_mma2rp_bf16", plan("pair", few, H200).entry());
    assertEquals("maxsim_forward_wgmma_ws_k2_q8_bf16", plan("wgmma_ws_q8", few, H200).entry());
    ForwardShape many = shape(32, 10000, 32, 300, 128, false); // the rules: 8 queries per warp-specialized pass
    assertEquals("maxsim_forward_wgmma_ws_k2_q8_bf16", plan("default", many, H200).entry());
    assertEquals("maxsim_forward_wgmma_g4_s6_bf16", plan("wgroups", many, H200).entry());
    ForwardShape longQuery = shape(1, 1000, 1024, 1024, 128, false);
    assertEquals("maxsim_forward_wgmma_ws_k2_r256_bf16", plan("default", longQuery, H200).entry());
    assertEquals("maxsim_forward_wgmma_ws_k2_bf16", plan("wgmma_ws_r128", longQuery, H200).entry());
    assertTrue(plan("wgmma_ws_merge", longQuery, H200).leavesPartials());
    assertEquals(8, plan("wgmma", longQuery, H200).gridY(), "split passes");
    assertEquals(1, plan("wgmma_serial", longQuery, H200).gridY(), "passes in one block");
    assertEquals("maxsim_forward_mma8n_bf16", plan("nowgmma", longQuery, H200).entry());
  }

  @Test
  void compressedDocumentsRunOnEitherTensorCoreKernelWhereItRuns() {
    ForwardShape one = new ForwardShape(ALL_PAIRS, 1, 10000, 0, 10000, 32, 300, 128, DType.BFLOAT16, DType.INT8, false,
        false); // the rules: the bulk-copy kernel
    assertEquals("maxsim_forward_quant_tma_c2_bf16_s8", plan("default", one, H200).entry());
    assertEquals("maxsim_forward_quant_c2_dyn_bf16_s8", plan("quant_mma", one, H200).entry());
    assertEquals("maxsim_forward_quant_tma_c2_bf16_s8", plan("quant_tma", one, H200).entry());
    assertEquals("maxsim_forward_quant_c2_dyn_bf16_s8", plan("quant_tma", one, A100).entry());
    assertEquals("maxsim_forward_quant_wgmma_p32_c2_bf16_s8", plan("quant_wgmma", one, H200).entry());
    ForwardShape wide = new ForwardShape(ALL_PAIRS, 1, 100, 0, 100, 32, 300, 512, DType.BFLOAT16, DType.INT8, false,
        false); // only the wgmma kernels run
    assertEquals("maxsim_forward_quant_tma_w4_bf16_s8", plan("quant_mma", wide, H200).entry()); // rule 20
    assertEquals("maxsim_forward_wgmma_r32_s6_bf16_s8", plan("wgmma_compressed", wide, H200).entry()); // rule 19
    assertEquals("maxsim_forward_quant_c2_dyn_bf16_s8", plan("quant_wgmma", one, A100).entry());
    ForwardShape int8 = new ForwardShape(ALL_PAIRS, 1, 10000, 0, 10000, 32, 300, 128, DType.INT8, DType.INT8, false,
        false); // the rules: the bulk-copy kernel for one short query, mma.sync where forced
    assertEquals("maxsim_forward_quant_tma_c2_s8_s8", plan("default", int8, H200).entry());
    assertEquals("maxsim_forward_quant_c2_dyn_s8_s8", plan("quant_mma", int8, H200).entry());
    assertEquals("maxsim_forward_wgmma_r32_s6_s8", plan("wgmma_compressed", int8, H200).entry());
    assertEquals("maxsim_forward_wgmma_r32_s6_bf16_s8", plan("wgmma_compressed", one, H200).entry());
    assertEquals("maxsim_forward_quant_c2_dyn_s8_s8", plan("wgmma_compressed", int8, A100).entry());
    ForwardShape narrow = new ForwardShape(ALL_PAIRS, 1, 4000, 0, 4000, 32, 2048, 48, DType.BFLOAT16, DType.INT8,
        false, false); // the rules: three k-steps a row
    assertEquals("maxsim_forward_quant_tma_c1k3_bf16_s8", plan("default", narrow, H200).entry());
    assertEquals("maxsim_forward_quant_tma_c1_bf16_s8", plan("quant_tma_k4", narrow, H200).entry());
    assertEquals("maxsim_forward_quant_tma_c2_bf16_s8", plan("quant_tma_k4", one, H200).entry()); // other rows
  }

  @Test
  void abEntriesComeFromTheTestModules() {
    ForwardShape s = shape(1, 1000, 32, 300, 64, false); // one query: a pair per block
    Plan p = plan("2p", s, A100);
    assertEquals(ForcedPlans.MMA_AB, p.module());
    assertEquals("maxsim_forward_mma2p_bf16", p.entry());
    assertEquals(KernelModule.FORWARD_MMA, plan("2rp", s, A100).module());
    Plan n1 = plan("stream_n1", s, A100);
    assertEquals(ForcedPlans.STREAM_AB, n1.module());
    assertEquals("maxsim_forward_stream_c2_n1_bf16", n1.entry());
    ForwardShape half = new ForwardShape(ALL_PAIRS, 8, 1000, 0, 8000, 32, 300, 64, DType.FLOAT16, DType.FLOAT16, false,
        false);
    Plan k8 = plan("k8", half, A100);
    assertEquals(ForcedPlans.MMA_K8, k8.module());
    assertEquals("maxsim_forward_group4_f16", k8.entry());
  }

  @Test
  void wideKeepsTheArgmaxInInt32AndForcedGroupsNarrowIt() {
    ForwardShape s = shape(24, 960, 32, 70, 64, true);
    assertTrue(ForwardKernels.RULES.narrowArgmax(s, A100));
    assertFalse(ForcedKernels.planner("wide").narrowArgmax(s, A100));
    ForwardShape few = shape(23, 2, 32, 300, 128, true); // too few items for the rule's groups
    assertFalse(ForwardKernels.RULES.narrowArgmax(few, H200));
    assertTrue(ForcedKernels.planner("wgroups").narrowArgmax(few, H200));
    ForwardShape many = shape(32, 1000, 32, 300, 128, true); // the warp-specialized groups save int16 too
    assertTrue(ForwardKernels.RULES.narrowArgmax(many, H200));
    assertTrue(ForcedKernels.planner("wgmma_ws_q8").narrowArgmax(many, H200));
    ForwardShape many16 = new ForwardShape(ALL_PAIRS, 32, 1000, 0, 32000, 32, 300, 128, DType.BFLOAT16,
        DType.BFLOAT16, true, true);
    assertEquals("maxsim_forward_wgmma_ws_k2_q8_argmax16_bf16", ForwardKernels.RULES.plan(many16, H200).entry());
    assertEquals("maxsim_forward_wgmma_ws_k2_q8_argmax_bf16", ForwardKernels.RULES.plan(many, H200).entry());
  }

  @Test
  void anUnknownNameIsRefusedWithTheNamesThereAre() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ForcedKernels.planner("v24e"));
    assertTrue(e.getMessage().contains("kernel name = v24e") && e.getMessage().contains("stream_r6"),
        e.getMessage());
    for (String name : ForcedPlans.NAMES) {
      assertNotNull(ForcedPlans.of(name), name);
      assertNotNull(ForcedKernels.planner(name), name);
    }
  }
}
