package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cuda.plan.ForcedPlans;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan.Plan;
import dev.maxsim4j.internal.cuda.plan.ForwardShape;
import dev.maxsim4j.internal.cuda.plan.GpuCapabilities;

/**
 * CUDA backends whose forward runs a named kernel family or entry where it applies, and the rules' choice
 * elsewhere: for tests (each family on shapes its rule would not pick) and A/B runs ({@link AbMain}). Entry
 * points only these need come from the test-only fatbins (src/test/cuda). Names:
 * <ul>
 *   <li>{@code default}: the rules;
 *   <li>{@code stream}, {@code wgroups}, {@code wgmma_ws}, {@code wgmma}: that family wherever it applies;
 *   <li>{@code wgmma_serial}: the wgmma kernel with a query's passes in one block;
 *   <li>{@code wgmma_ws_merge}: warp-specialized, per-row partials and the merge launch in every launch;
 *   <li>{@code wgmma_ws_r128}, {@code wgmma_ws_r256}: warp-specialized, passes of 128 or 256 rows;
 *   <li>{@code wgmma_ws_q8}: warp-specialized with query groups (8 queries per pass) wherever they apply;
 *   <li>{@code nowgmma}: the block kernels (query groups by their rule) on every tensor-core launch;
 *   <li>{@code groups}, {@code pair}: block kernels with 4 queries per block where they apply, or a pair
 *       per block;
 *   <li>{@code 2}, {@code 2p}, {@code 2r}, {@code 2rp}, {@code 2n}: block kernels, that variant of the 32-row
 *       entries where it applies;
 *   <li>{@code stream_n1}, {@code stream_n2}, {@code stream_r6}: the streaming kernel's A/B entries;
 *   <li>{@code k8}: block kernels with sm_75 arithmetic (fp16 m16n8k16 as two m16n8k8) on any GPU;
 *   <li>{@code wide}: the rules, the training argmax kept in int32;
 *   <li>{@code quant_mma}, {@code quant_wgmma}: compressed documents on the mma.sync or the wgmma kernel
 *       wherever it runs (rule 18 chooses between them where both do);
 *   <li>{@code wgmma_compressed}: int8 and e4m3 documents on the wgmma kernel wherever its compressed entries
 *       run (rule 19 chooses where).
 *   <li>{@code quant_tma}: compressed documents on the bulk-copy kernel wherever it runs (rule 20), bf16 queries
 *       through their fp16 copy wherever they have one, whatever the call's size;
 *   <li>{@code quant_tma_bf16}: the rules, bf16 queries read as bf16 where rule 20 would read their fp16 copy.
 *   <li>{@code expanded}: compressed documents expanded into bf16 or fp16 and read by the warp-specialized kernel
 *       (rule 21) wherever that applies, whatever the launch's size.
 *   <li>{@code unexpanded}: the rules but rule 21 (what a launch takes where its expansion buffer does not fit).
 *   <li>{@code quant_ffma}: every launch with a compressed side on the scaled FFMA kernel, which runs them all.
 *   <li>{@code quant_tma_c2}: the rules, but 1-bit rows of d <= 64 read as 128 dims (the c2 narrow entries).
 *   <li>{@code quant_tma_k4}: the rules, but 8-bit rows of 16-48 dims read as 64 (the c1 entries) wherever the
 *       bulk-copy kernel takes them.
 *   <li>{@code quant_rule18}: the rules, but compressed queries never on the bulk-copy kernel: rule 18's choice
 *       (the route 1-bit queries took before rule 20 took them).
 * </ul>
 */
public final class ForcedKernels {
  private ForcedKernels() {}

  /** A CUDA backend (GPU 0) running {@code name}'s kernels. */
  public static Backend backend(String name, int cpuThreads) {
    return new CudaBackend(cpuThreads, planner(name));
  }

  static ForwardKernels.Planner planner(String name) {
    return switch (name) {
      case "default" -> ForwardKernels.RULES;
      case "wide" -> new ForwardKernels.Planner() {
        @Override
        public Plan plan(ForwardShape s, GpuCapabilities gpu) {
          return ForwardPlan.plan(s, gpu);
        }

        @Override
        public boolean narrowArgmax(ForwardShape s, GpuCapabilities gpu) {
          return false;
        }
      };
      case "quant_tma" -> new ForwardKernels.Planner() { // bf16 queries with their fp16 copy wherever it applies
        @Override
        public Plan plan(ForwardShape s, GpuCapabilities gpu) {
          return ForcedPlans.of("quant_tma").plan(s, gpu);
        }

        @Override
        public boolean halfCopy(Tokens queries, Tokens documents, GpuCapabilities gpu) {
          return HalfOperands.applies(queries, documents);
        }
      };
      case "quant_tma_bf16" -> new ForwardKernels.Planner() { // the rules, bf16 queries kept as bf16 operands
        @Override
        public Plan plan(ForwardShape s, GpuCapabilities gpu) {
          return ForwardPlan.plan(s, gpu);
        }

        @Override
        public boolean halfCopy(Tokens queries, Tokens documents, GpuCapabilities gpu) {
          return false;
        }

        @Override
        public boolean halfOperands(ForwardShape s, Plan p) {
          return false;
        }
      };
      default -> {
        ForcedPlans.Forced forced = ForcedPlans.of(name);
        if (forced == null) {
          throw new IllegalArgumentException("kernel name = " + name + "; expected one of default, wide, "
              + "quant_tma_bf16, " + String.join(", ", ForcedPlans.NAMES));
        }
        yield new ForwardKernels.Planner() {
          @Override
          public Plan plan(ForwardShape s, GpuCapabilities gpu) {
            return forced.plan(s, gpu);
          }

          @Override
          public boolean narrowArgmax(ForwardShape s, GpuCapabilities gpu) {
            return forced.narrowArgmax(s, gpu);
          }
        };
      }
    };
  }
}
