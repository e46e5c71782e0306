package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.cuda.ForwardLaunches.KernelLaunch;
import dev.maxsim4j.internal.cuda.ForwardLaunches.Operands;
import dev.maxsim4j.internal.cuda.ForwardPlan.Family;
import dev.maxsim4j.internal.cuda.ForwardPlan.Plan;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Rule 18 of the forward plan: launches with a compressed side take the tensor-core kernel for compressed
 * documents where its types and d allow (inference on sm_80+), else the scaled FFMA kernel, whose entry
 * exists for every pair of types. Runs on the CPU.
 */
class CompressedPlanTest {
  private static final GpuCapabilities H200 = gpu(9, 0);

  private static GpuCapabilities gpu(int major, int minor) {
    return new GpuCapabilities(major, minor, 132, 227 * 1024, true, (module, entry, threads, shared) -> 4);
  }

  private static ForwardShape shape(int queries, int documents, int lq, int dim, DType qt, DType dt, boolean argmax) {
    return new ForwardShape(0, queries, documents, 0, queries * documents, lq, 300, dim, qt, dt, argmax, false);
  }

  @Test
  void compressedDocumentsWithHalfOrCompressedQueriesTakeTheTensorCoreKernel() {
    Plan p = ForwardPlan.plan(shape(1, 10000, 32, 128, DType.BFLOAT16, DType.INT8, false), H200);
    assertEquals(Family.QUANT, p.family());
    assertEquals("maxsim_forward_quant_c2_dyn_bf16_s8", p.entry()); // one query: pairs taken at run time
    assertEquals(132 * 4, p.blocks()); // the warps the GPU holds (4 blocks per SM here), 4 per block
    assertEquals(ForwardPlan.QUANT_QUEUE_BYTES, p.sharedBytes());
    assertEquals("maxsim_forward_quant_c1_f16_e4m3",
        ForwardPlan.plan(shape(5, 1000, 32, 64, DType.FLOAT16, DType.FLOAT8_E4M3, false), H200).entry());
    assertEquals("maxsim_forward_quant_c1_dyn_b1_b1",
        ForwardPlan.plan(shape(1, 1000, 100, 128, DType.BINARY, DType.BINARY, false), H200).entry());
    assertEquals("maxsim_forward_quant_c1_dyn_s8_s8",
        ForwardPlan.plan(shape(1, 4000, 32, 48, DType.INT8, DType.INT8, false), H200).entry());
    assertEquals("maxsim_forward_quant_c1_dyn_bf16_s8",
        ForwardPlan.plan(shape(1, 3, 32, 16, DType.BFLOAT16, DType.INT8, false), gpu(8, 0)).entry());
  }

  @Test
  void everyOtherCompressedLaunchTakesTheScaledFfmaKernel() {
    record Case(ForwardShape shape, GpuCapabilities gpu, String entry) {}
    for (Case c : List.of(
        new Case(shape(1, 100, 32, 128, DType.FLOAT32, DType.INT8, false), H200, "maxsim_forward_scaled_f32_s8"),
        new Case(shape(1, 100, 32, 128, DType.INT8, DType.BFLOAT16, false), H200, "maxsim_forward_scaled_s8_bf16"),
        new Case(shape(1, 100, 32, 128, DType.BINARY, DType.FLOAT32, false), H200, "maxsim_forward_scaled_b1_f32"),
        new Case(shape(1, 100, 32, 33, DType.BFLOAT16, DType.INT8, false), H200, "maxsim_forward_scaled_bf16_s8"),
        new Case(shape(1, 100, 32, 144, DType.BFLOAT16, DType.FLOAT8_E4M3, false), H200,
            "maxsim_forward_scaled_bf16_e4m3"),
        new Case(shape(1, 100, 32, 48, DType.BFLOAT16, DType.BINARY, false), H200, "maxsim_forward_scaled_bf16_b1"),
        new Case(shape(1, 100, 32, 128, DType.BFLOAT16, DType.INT8, true), H200, "maxsim_forward_scaled_bf16_s8"),
        new Case(shape(1, 100, 32, 128, DType.FLOAT16, DType.INT8, false), gpu(7, 5), "maxsim_forward_scaled_f16_s8"))) {
      Plan p = ForwardPlan.plan(c.shape(), c.gpu());
      assertEquals(Family.FFMA_SCALED, p.family(), c.toString());
      assertEquals(c.entry(), p.entry(), c.toString());
      assertEquals(c.shape().pairs(), p.blocks());
    }
  }

  @Test
  void launchesPassBothSidesScalesAndTheWorkCounters() {
    DeviceTokens q = new DeviceTokens(DType.INT8, 128, 1, 32, 32, 0x100, 0x200, 0x300, 0x400, 0, 0x500);
    DeviceTokens d = new DeviceTokens(DType.INT8, 128, 10000, 300, 3_000_000, 0x1100, 0x1200, 0x1300, 0x1400, 0,
        0x1500);
    ForwardShape s = shape(1, 10000, 32, 128, DType.INT8, DType.INT8, false);
    List<KernelLaunch> launches = ForwardLaunches.of(ForwardPlan.plan(s, H200), s, new Operands(q, d, 0x9000, 0, 0));
    assertEquals(1, launches.size());
    KernelArgs.Quant a = assertInstanceOf(KernelArgs.Quant.class, launches.get(0).args());
    assertEquals(0x500, a.qScale());
    assertEquals(0x1500, a.dScale());
    assertNotNull(a.work());
    ForwardShape several = shape(5, 1000, 32, 128, DType.BFLOAT16, DType.INT8, false);
    KernelArgs.Quant b = (KernelArgs.Quant) ForwardLaunches.of(ForwardPlan.plan(several, H200), several,
        new Operands(q, d, 0x9000, 0, 0)).get(0).args();
    assertNull(b.work()); // queries shared: a static split, no counters
    ForwardShape ffma = shape(1, 100, 32, 33, DType.FLOAT32, DType.INT8, true);
    KernelArgs.FfmaScaled f = assertInstanceOf(KernelArgs.FfmaScaled.class, ForwardLaunches.of(
        ForwardPlan.plan(ffma, H200), ffma, new Operands(q, d, 0x9000, 0x9800, 32)).get(0).args());
    assertEquals(0x1500, f.dScale());
    assertEquals(0x9800, f.argmax());
  }
}
