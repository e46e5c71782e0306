package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cuda.ForwardPlan.Family;
import dev.maxsim4j.internal.cuda.ForwardPlan.Plan;
import java.util.function.UnaryOperator;

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
 *   <li>{@code groups}, {@code groupsplit}, {@code pair}: block kernels with 4 queries per block where they
 *       apply (split along Ld for few blocks), or a pair per block;
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

  /** Modules of the test-only fatbins. */
  static final KernelModule MMA_AB = new KernelModule("maxsim_forward_mma_ab");
  static final KernelModule MMA_K8 = new KernelModule("maxsim_forward_mma_k8");
  static final KernelModule STREAM_AB = new KernelModule("maxsim_forward_stream_ab");

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
      case "stream" -> family((s, g) -> ForwardPlan.streamApplies(s, g) ? FamilyPlans.stream(s, g) : null, true);
      case "wgroups" -> family((s, g) -> ForwardPlan.wgmmaGroupsApply(s, g) ? FamilyPlans.wgmmaGroups(s, g) : null,
          true);
      case "wgmma_ws" -> ws(null, false);
      case "wgmma_ws_merge" -> ws(null, true);
      case "wgmma_ws_r128" -> ws(1, false);
      case "wgmma_ws_r256" -> ws(2, false);
      case "wgmma_ws_q8" -> family((s, g) -> ForwardPlan.wsQueryGroupsApply(s, g) ? FamilyPlans.wgmmaWsQueryGroups(s, g)
          : null, true);
      case "wgmma" -> family((s, g) -> ForwardPlan.wgmmaPays(s, g) ? FamilyPlans.wgmma(s, g, true) : null, false);
      case "wgmma_serial" -> family((s, g) -> ForwardPlan.wgmmaPays(s, g) ? FamilyPlans.wgmma(s, g, false) : null,
          false);
      case "nowgmma" -> family((s, g) -> FamilyPlans.block(s, g, ForwardPlan.queryGroupsPay(s, g)), false);
      case "pair" -> family((s, g) -> FamilyPlans.block(s, g, false), false);
      case "groups" -> family((s, g) -> FamilyPlans.block(s, g, ForwardPlan.queryGroupsApply(s, g)), false);
      case "groupsplit" -> family((s, g) -> FamilyPlans.block(s, g, ForwardPlan.queryGroupsApply(s, g),
          ForwardPlan.queryGroupsApply(s, g)), false);
      case "2", "2p", "2r", "2rp", "2n" -> blockVariant(name);
      case "k8" -> family((s, g) -> {
        Plan p = FamilyPlans.block(s, g, ForwardPlan.queryGroupsPay(s, g));
        return s.queryType() == dev.maxsim4j.DType.FLOAT16 ? withEntry(p, MMA_K8, p.entry()) : p;
      }, false);
      case "stream_n1" -> streamVariant("_n1", 2);
      case "stream_n2" -> streamVariant("_n2", 4);
      case "stream_r6" -> streamVariant("_r6", 0);
      case "quant_mma" -> (s, g) -> ForwardPlan.quantApplies(s, g) ? FamilyPlans.quant(s, g) : ForwardPlan.plan(s, g);
      case "quant_wgmma" -> (s, g) -> ForwardPlan.quantWgmmaApplies(s, g) ? FamilyPlans.quantWgmma(s, g)
          : ForwardPlan.plan(s, g);
      case "quant_tma" -> new ForwardKernels.Planner() { // bf16 queries with their fp16 copy wherever it applies
        @Override
        public Plan plan(ForwardShape s, GpuCapabilities gpu) {
          return ForwardPlan.quantTmaApplies(s, gpu) ? FamilyPlans.quantTma(s, gpu) : ForwardPlan.plan(s, gpu);
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
      case "quant_tma_c2" -> (s, g) -> { // 1-bit rows at d <= 64 read as 128 dims, as before the c1 entries
        Plan p = ForwardPlan.plan(s, g);
        if (p.family() != Family.QUANT_TMA || !p.entry().contains("_c1_") || !p.entry().endsWith("_b1_narrow")) {
          return p;
        }
        return new Plan(p.family(), p.module(), p.entry().replace("_c1_", "_c2_"), p.blocks(), p.gridY(),
            p.threads(), p.sharedBytes() + 32 * 128, p.optIn(), p.split(), p.leavesPartials(), p.rowsPerPass(),
            p.queryPasses(), p.wholeDevice(), p.runTimePairs());
      };
      case "quant_tma_k4" -> (s, g) -> { // 8-bit rows of 16-48 dims read as 64 (the c1 entries)
        Plan p = ForwardPlan.plan(s, g);
        return p.family() != Family.QUANT_TMA ? p
            : withEntry(p, p.module(), p.entry().replaceAll("_c1k[123]_", "_c1_"));
      };
      case "quant_rule18" -> (s, g) -> {
        Plan p = ForwardPlan.plan(s, g);
        if (p.family() != Family.QUANT_TMA || !s.queryType().isQuantized()) {
          return p;
        }
        return ForwardPlan.quantWgmmaPays(s, g) ? FamilyPlans.quantWgmma(s, g)
            : ForwardPlan.quantApplies(s, g) ? FamilyPlans.quant(s, g) : FamilyPlans.ffmaScaled(s);
      };
      case "expanded" -> (s, g) -> ForwardPlan.expandedApplies(s, g) ? FamilyPlans.expanded(s, g)
          : ForwardPlan.plan(s, g);
      case "unexpanded" -> ForwardPlan::planUnexpanded;
      case "quant_ffma" -> (s, g) -> s.queryType().isQuantized() || s.documentType().isQuantized()
          ? FamilyPlans.ffmaScaled(s) : ForwardPlan.plan(s, g);
      case "wgmma_compressed" -> (s, g) -> !ForwardPlan.wgmmaCompressedApplies(s, g) ? ForwardPlan.plan(s, g)
          : ForwardPlan.wgmmaGroupsPay(s, g) ? FamilyPlans.wgmmaGroups(s, g) : FamilyPlans.wgmma(s, g, true);
      default -> throw new IllegalArgumentException("kernel name = " + name + "; expected one of default, wide, "
          + "stream, wgroups, wgmma_ws, wgmma_ws_merge, wgmma_ws_r128, wgmma_ws_r256, wgmma_ws_q8, wgmma, "
          + "wgmma_serial, nowgmma, pair, groups, groupsplit, 2, 2p, 2r, 2rp, 2n, k8, stream_n1, stream_n2, stream_r6, quant_mma, "
          + "quant_wgmma, quant_tma, quant_tma_bf16, quant_tma_c2, quant_tma_k4, quant_rule18, quant_ffma, "
          + "wgmma_compressed, expanded, unexpanded");
    };
  }

  /** A plan for a family, or null where it does not apply. */
  private interface FamilyPlan {
    Plan plan(ForwardShape s, GpuCapabilities gpu);
  }

  /**
   * {@code forced} wherever tensor cores apply and it gives a plan, else the rules; {@code narrow}: the
   * training argmax is int16 wherever the forced family has such entries (streaming kernel, wgmma groups, the
   * warp-specialized kernel's query groups).
   */
  private static ForwardKernels.Planner family(FamilyPlan forced, boolean narrow) {
    return new ForwardKernels.Planner() {
      @Override
      public Plan plan(ForwardShape s, GpuCapabilities gpu) {
        Plan p = ForwardPlan.tensorCores(s, gpu) ? forced.plan(s, gpu) : null;
        if (p != null) {
          return p;
        }
        return ForwardPlan.plan(new ForwardShape(s.layout(), s.queries(), s.perQuery(), s.docOffset(), s.pairs(),
            s.maxQueryLength(), s.maxDocumentLength(), s.dim(), s.queryType(), s.documentType(), s.argmax(), false),
            gpu);
      }

      @Override
      public boolean narrowArgmax(ForwardShape s, GpuCapabilities gpu) {
        if (!narrow) {
          return false;
        }
        Plan p = ForwardPlan.tensorCores(s, gpu) ? forced.plan(s, gpu) : null;
        boolean narrowEntries = p != null && (p.family() == Family.STREAM || p.family() == Family.WGMMA_GROUPS
            || p.entry().contains("_q" + KernelGeometry.WS_GROUP_QUERIES + "_"));
        return narrowEntries && s.maxDocumentLength() < Short.MAX_VALUE;
      }
    };
  }

  /** The warp-specialized kernel wherever it applies; {@code groups}: row groups (null: by rule 6). */
  private static ForwardKernels.Planner ws(Integer groups, boolean partials) {
    return family((s, g) -> ForwardPlan.wgmmaWsApplies(s, g)
        ? FamilyPlans.wgmmaWs(s, g, groups == null ? ForwardPlan.wsGroups(s) : groups, partials) : null, false);
  }

  /** The block kernels with the 32-row entries of {@code variant} where it applies (d <= 128 but for 2, 2n). */
  private static ForwardKernels.Planner blockVariant(String variant) {
    return family((s, g) -> {
      Plan p = FamilyPlans.block(s, g, ForwardPlan.queryGroupsPay(s, g));
      boolean applies = p.family() == Family.BLOCK && p.entry().matches(".*_mma2(rp|n)_.*")
          && (variant.equals("2") || variant.equals("2n") || s.chunks() <= 4);
      if (!applies) {
        return p;
      }
      String entry = p.entry().replaceFirst("_mma2(rp|n)_", "_mma" + variant + "_");
      boolean shipped = variant.equals("2rp") || variant.equals("2n");
      return withEntry(p, shipped ? KernelModule.FORWARD_MMA : MMA_AB, entry);
    }, false);
  }

  /**
   * The streaming kernel with an A/B entry ({@code suffix}) for {@code chunks} 32-wide chunks of d (0: any
   * even count), the pairs split statically; its grid sized by that entry's occupancy.
   */
  private static ForwardKernels.Planner streamVariant(String suffix, int chunks) {
    return family((s, g) -> {
      if (!ForwardPlan.streamApplies(s, g)) {
        return null;
      }
      boolean applies = chunks == 0 ? s.chunks() % 2 == 0 : s.chunks() == chunks;
      if (!applies) {
        return FamilyPlans.stream(s, g, false);
      }
      UnaryOperator<String> rename = e -> e.replaceFirst("_c" + s.chunks() + "_", "_c" + s.chunks() + suffix + "_");
      GpuCapabilities ab = new GpuCapabilities(g.major(), g.minor(), g.multiprocessors(),
          g.sharedMemoryPerBlockOptin(), g.tensorMaps(),
          (module, entry, threads, shared) -> g.residentBlocks(STREAM_AB, rename.apply(entry), threads, shared));
      Plan p = FamilyPlans.stream(s, ab, false);
      return withEntry(p, STREAM_AB, rename.apply(p.entry()));
    }, true);
  }

  /** {@code p} through another entry point: kernels only the tests build. */
  static Plan withEntry(Plan p, KernelModule module, String entry) {
    return new Plan(p.family(), module, entry, p.blocks(), p.gridY(), p.threads(), p.sharedBytes(), p.optIn(),
        p.split(), p.leavesPartials(), p.rowsPerPass(), p.queryPasses(), p.wholeDevice(), p.runTimePairs());
  }
}
