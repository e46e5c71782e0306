package dev.maxsim4j.internal.cuda.plan;

import static dev.maxsim4j.internal.cuda.plan.PairLayout.ALL_PAIRS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan.Family;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan.Plan;
import org.junit.jupiter.api.Test;

/**
 * Wide d on tensor-core types: the block kernels, where every tensor-core rule ends, stage at least one m-tile of
 * query fragments (1 KB per 32 dims) in shared memory; where that does not fit the GPU, the launch takes the FFMA
 * kernel, which tiles d. Runs on the CPU.
 */
class WideDimensionPlanTest {
  /** The static shared memory of the block kernels beside their fragments (the others' fits in their checks). */
  private static final int BLOCK_STATIC_SHARED = 4 * 1024 + 512;

  private static GpuCapabilities gpu(int major, int minor, int optin) {
    return new GpuCapabilities(major, minor, 84, optin, major == 9, (module, entry, threads, shared) -> 2);
  }

  private static Plan plan(GpuCapabilities gpu, int lq, int dim, DType type) {
    return ForwardPlan.plan(new ForwardShape(ALL_PAIRS, 1, 1000, 0, 1000, lq, 300, dim, type, type, false, false), gpu);
  }

  @Test
  void everyPlanFitsTheSharedMemoryOfItsGpu() {
    GpuCapabilities[] gpus = {gpu(7, 5, 65536), gpu(8, 0, 166912), gpu(8, 6, 101376), gpu(8, 9, 101376),
        gpu(9, 0, 232448), gpu(10, 0, 232448)};
    for (GpuCapabilities gpu : gpus) {
      for (DType type : new DType[] {DType.BFLOAT16, DType.FLOAT16}) {
        for (int dim : new int[] {1024, 1888, 1920, 2048, 3008, 3072, 4096, 5056, 5088, 7104, 7136, 8192, 16384}) {
          for (int lq : new int[] {1, 32, 33, 300}) {
            Plan p = plan(gpu, lq, dim, type);
            String at = "sm_" + gpu.major() + gpu.minor() + " d = " + dim + " Lq = " + lq + " " + type + ": " + p;
            boolean block = p.family() == Family.BLOCK || p.family() == Family.BLOCK_GROUPS;
            assertTrue(p.sharedBytes() + (block ? BLOCK_STATIC_SHARED : 0) <= gpu.sharedMemoryPerBlockOptin(), at);
          }
        }
      }
    }
  }

  /**
   * Without the opt-in a kernel's dynamic shared memory may take 48 KB less its static shared memory (the block
   * kernels' merge arrays), so 48 KB of fragments need it too.
   */
  @Test
  void blockKernelsOptInWhereTheirFragmentsAndStaticSharedMemoryPass48Kb() {
    GpuCapabilities a100 = gpu(8, 0, 166912);
    Plan pair = plan(a100, 32, 768, DType.BFLOAT16); // 2 m-tiles x 24 chunks x 1 KB
    assertEquals(Family.BLOCK, pair.family());
    assertEquals(48 * 1024, pair.sharedBytes());
    assertTrue(pair.optIn());
    Plan groups = ForwardPlan.plan(new ForwardShape(ALL_PAIRS, 128, 1000, 0, 128 * 1000, 32, 300, 192, DType.BFLOAT16,
        DType.BFLOAT16, false, false), a100); // 8 m-tiles x 6 chunks x 1 KB
    assertEquals(Family.BLOCK_GROUPS, groups.family());
    assertEquals(48 * 1024, groups.sharedBytes());
    assertTrue(groups.optIn());
    assertFalse(plan(a100, 32, 512, DType.BFLOAT16).optIn(), "32 KB and the merge arrays stay below 48 KB");
  }

  @Test
  void aQueryFragmentTileTooWideForSharedMemoryTakesTheFfmaKernel() {
    GpuCapabilities ada = gpu(8, 9, 101376);
    assertEquals(Family.BLOCK, plan(ada, 32, 3008, DType.BFLOAT16).family()); // 94 KB of fragments fit 99 KB
    assertEquals(Family.FFMA, plan(ada, 32, 3072, DType.BFLOAT16).family());
    assertEquals(Family.FFMA, plan(ada, 32, 4096, DType.BFLOAT16).family());
    GpuCapabilities a100 = gpu(8, 0, 166912);
    assertEquals(Family.BLOCK, plan(a100, 32, 4096, DType.BFLOAT16).family());
    assertEquals(Family.FFMA, plan(a100, 32, 8192, DType.BFLOAT16).family());
    GpuCapabilities h200 = gpu(9, 0, 232448);
    assertEquals(Family.BLOCK, plan(h200, 300, 4096, DType.BFLOAT16).family());
    assertEquals(Family.FFMA, plan(h200, 300, 8192, DType.BFLOAT16).family());
    assertEquals(Family.FFMA, plan(gpu(7, 5, 65536), 32, 2048, DType.FLOAT16).family());
  }
}
