package dev.maxsim4j.internal.cuda.plan;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan.Family;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan.Plan;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * The planner's side of the test hook that forces a kernel ({@code ForcedKernels} in the backend's tests): for
 * each name, a family or A/B entry chosen wherever it applies, else the rules. It lives beside the rules so that it
 * reaches their predicates and family builders without the plan package opening them to the backend.
 */
public final class ForcedPlans {
  private ForcedPlans() {}

  /** Modules of the test-only fatbins. */
  public static final KernelModule MMA_AB = new KernelModule("maxsim_forward_mma_ab");
  public static final KernelModule MMA_K8 = new KernelModule("maxsim_forward_mma_k8");
  public static final KernelModule STREAM_AB = new KernelModule("maxsim_forward_stream_ab");

  /** The names {@link #of} knows. */
  public static final List<String> NAMES = List.of("stream", "wgroups", "wgmma_ws", "wgmma_ws_merge", "wgmma_ws_r128",
      "wgmma_ws_r256", "wgmma_ws_q8", "wgmma", "wgmma_serial", "nowgmma", "pair", "groups", "2", "2p",
      "2r", "2rp", "2n", "k8", "stream_n1", "stream_n2", "stream_r6", "quant_mma", "quant_wgmma", "quant_tma",
      "quant_tma_c2", "quant_tma_k4", "quant_rule18", "quant_ffma", "wgmma_compressed", "expanded", "unexpanded");

  /** A forced choice: the plan of a launch, and whether a training forward keeps its argmax in int16. */
  public interface Forced {
    Plan plan(ForwardShape s, GpuCapabilities gpu);

    default boolean narrowArgmax(ForwardShape s, GpuCapabilities gpu) {
      return ForwardPlan.narrowArgmax(s, gpu);
    }
  }

  /** The forced choice of {@code name}, one of {@link #NAMES}; null for any other name. */
  public static Forced of(String name) {
    return switch (name) {
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
      case "2", "2p", "2r", "2rp", "2n" -> blockVariant(name);
      case "k8" -> family((s, g) -> {
        Plan p = FamilyPlans.block(s, g, ForwardPlan.queryGroupsPay(s, g));
        return s.queryType() == DType.FLOAT16 ? withEntry(p, MMA_K8, p.entry()) : p;
      }, false);
      case "stream_n1" -> streamVariant("_n1", 2);
      case "stream_n2" -> streamVariant("_n2", 4);
      case "stream_r6" -> streamVariant("_r6", 0);
      case "quant_mma" -> (s, g) -> ForwardPlan.quantApplies(s, g) ? FamilyPlans.quant(s, g) : ForwardPlan.plan(s, g);
      case "quant_wgmma" -> (s, g) -> ForwardPlan.quantWgmmaApplies(s, g) ? FamilyPlans.quantWgmma(s, g)
          : ForwardPlan.plan(s, g);
      case "quant_tma" -> (s, g) -> ForwardPlan.quantTmaApplies(s, g) ? FamilyPlans.quantTma(s, g)
          : ForwardPlan.plan(s, g);
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
      default -> null;
    };
  }

  /** {@code p} through another entry point: kernels only the tests build. */
  public static Plan withEntry(Plan p, KernelModule module, String entry) {
    return new Plan(p.family(), module, entry, p.blocks(), p.gridY(), p.threads(), p.sharedBytes(), p.optIn(),
        p.split(), p.leavesPartials(), p.rowsPerPass(), p.queryPasses(), p.wholeDevice(), p.runTimePairs());
  }

  /**
   * {@code forced} wherever tensor cores apply and it gives a plan (null: it does not apply), else the rules;
   * {@code narrow}: the training argmax is int16 wherever the forced family has such entries (streaming kernel,
   * wgmma groups, the warp-specialized kernel's query groups).
   */
  private static Forced family(Forced forced, boolean narrow) {
    return new Forced() {
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
  private static Forced ws(Integer groups, boolean partials) {
    return family((s, g) -> ForwardPlan.wgmmaWsApplies(s, g)
        ? FamilyPlans.wgmmaWs(s, g, groups == null ? ForwardPlan.wsGroups(s) : groups, partials) : null, false);
  }

  /** The block kernels with the 32-row entries of {@code variant} where it applies (d <= 128 but for 2, 2n). */
  private static Forced blockVariant(String variant) {
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
  private static Forced streamVariant(String suffix, int chunks) {
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
}
