package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.cuda.ForwardLaunches.Operands;
import dev.maxsim4j.internal.cuda.plan.FamilyPlans;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan;
import dev.maxsim4j.internal.cuda.plan.ForwardShape;
import dev.maxsim4j.internal.cuda.plan.GpuCapabilities;
import dev.maxsim4j.internal.cuda.plan.KernelModule;
import dev.maxsim4j.internal.cuda.plan.PairLayout;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Every entry point a forward plan names is in the fatbin it names. The plans build entry names from a launch's
 * shape and types (type suffixes, chunks, row steps, slices), so a combination the kernels do not instantiate would
 * fail only on a GPU, as CUDA_ERROR_NOT_FOUND. Every pair of types, d, query and document lengths around the
 * families' thresholds, all pairs of one and of many queries, candidates and pairwise, training where its types
 * allow, on devices of sm_75 to sm_100; checked against the fatbins of this build (skipped, saying so, where it
 * had no nvcc). Runs on the CPU.
 */
class PlanEntriesExistTest {
  private static final GpuCapabilities[] GPUS = {gpu(7, 5, 40, 65536, false), gpu(8, 0, 108, 166912, false),
      gpu(8, 9, 128, 101376, false), gpu(9, 0, 132, 232448, true), gpu(9, 0, 132, 232448, false),
      gpu(10, 0, 148, 232448, true)};
  private static final int[] DIMS = {1, 3, 8, 16, 32, 33, 48, 64, 80, 96, 120, 121, 127, 128, 129, 136, 256, 384, 512,
      513, 1024};
  private static final int[] QUERY_LENGTHS = {1, 9, 32, 33, 64, 65, 128, 129, 256, 300, 1024};
  private static final int[] DOCUMENT_LENGTHS = {1, 64, 300, 1024, 4096, 32768};

  @Test
  void everyEntryAPlanNamesIsInItsModule() {
    Map<KernelModule, String> modules = new HashMap<>();
    Set<String> checked = new TreeSet<>();
    List<String> missing = new ArrayList<>();
    for (GpuCapabilities gpu : GPUS) {
      for (DType qt : DType.values()) {
        for (DType dt : DType.values()) {
          for (int dim : DIMS) {
            for (int lq : QUERY_LENGTHS) {
              for (int ld : DOCUMENT_LENGTHS) {
                for (ForwardShape s : shapes(qt, dt, dim, lq, ld)) {
                  for (KernelLaunch l : launches(s, gpu)) {
                    String key = l.module() + "/" + l.entry();
                    if (checked.add(key) && !modules.computeIfAbsent(l.module(), PlanEntriesExistTest::names)
                        .contains("\0" + l.entry() + "\0")) {
                      missing.add(key + " (first asked for " + s + " on sm_" + gpu.major() + gpu.minor() + ")");
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
    assertTrue(missing.isEmpty(), missing.size() + " entries named by plans are not in their fatbins: " + missing);
    assertTrue(checked.size() > 250, "entries checked: " + checked.size());
  }

  /** Inference: one query, many queries, candidates, pairwise; the training forward where both sides allow it. */
  private static List<ForwardShape> shapes(DType qt, DType dt, int dim, int lq, int ld) {
    List<ForwardShape> shapes = new ArrayList<>();
    PairLayout all = PairLayout.ALL_PAIRS;
    PairLayout listed = PairLayout.LISTED_PAIRS;
    shapes.add(new ForwardShape(all, 1, 4000, 0, 4000, lq, ld, dim, qt, dt, false, false));
    shapes.add(new ForwardShape(all, 1, 4, 0, 4, lq, ld, dim, qt, dt, false, false));
    shapes.add(new ForwardShape(all, 5, 40, 0, 200, lq, ld, dim, qt, dt, false, false));
    shapes.add(new ForwardShape(all, 64, 192, 0, 64 * 192, lq, ld, dim, qt, dt, false, false));
    shapes.add(new ForwardShape(listed, 64, 3, 0, 192, lq, ld, dim, qt, dt, false, false));
    shapes.add(new ForwardShape(listed, 1188, 1, 0, 1188, lq, ld, dim, qt, dt, false, false));
    if (!qt.isQuantized() && !dt.isQuantized()) {
      shapes.add(new ForwardShape(all, 8, 64, 0, 8 * 64, lq, ld, dim, qt, dt, true, false));
      shapes.add(new ForwardShape(listed, 8, 8, 0, 64, lq, ld, dim, qt, dt, true, false));
    }
    return shapes;
  }

  /**
   * The launches of {@code s}, its argmax in int16 where the plan allows it (as training asks), none where the
   * planner refuses the shape (an IllegalArgumentException naming why).
   */
  private static List<KernelLaunch> launches(ForwardShape shape, GpuCapabilities gpu) {
    ForwardShape s = shape.argmax() && ForwardPlan.narrowArgmax(shape, gpu) ? new ForwardShape(shape.layout(),
        shape.queries(), shape.perQuery(), shape.docOffset(), shape.pairs(), shape.maxQueryLength(),
        shape.maxDocumentLength(), shape.dim(), shape.queryType(), shape.documentType(), true, true) : shape;
    DeviceTokens q = tokens(s.queryType(), s.dim(), s.queries(), s.maxQueryLength(), 0x1000);
    int documentRows = s.layout() == PairLayout.LISTED_PAIRS ? s.pairs() : s.perQuery();
    DeviceTokens d = tokens(s.documentType(), s.dim(), documentRows, s.maxDocumentLength(), 0x8000);
    try {
      ForwardPlan.Plan p = ForwardPlan.plan(s, gpu);
      List<KernelLaunch> launches = new ArrayList<>(ForwardLaunches.of(p, s,
          new Operands(q, d, 0x9000, s.argmax() ? 0xA000 : 0, s.argmax() ? s.maxQueryLength() : 0)));
      if (p.family() == ForwardPlan.Family.WGMMA_WS_EXPANDED) { // the expansion ForwardKernels launches first
        launches.add(new KernelLaunch(KernelModule.EXPAND, FamilyPlans.expandEntry(s.documentType(), s.queryType()), 1,
            1, 256, 0, false, false, null));
      }
      return launches;
    } catch (IllegalArgumentException refused) {
      return List.of();
    }
  }

  private static DeviceTokens tokens(DType type, int dim, int rows, int length, long base) {
    return new DeviceTokens(type, dim, rows, length, rows * length, base, base + 1, base + 2, base + 3, base + 4,
        type.isQuantized() ? base + 5 : 0);
  }

  /** The fatbin's bytes as ISO-8859-1 text, where each entry's name sits between two NUL bytes. */
  private static String names(KernelModule module) {
    String path = module.resource();
    try (InputStream in = PlanEntriesExistTest.class.getResourceAsStream(path)) {
      Assumptions.assumeTrue(in != null, "no " + path + ": this build ran without nvcc, so it has no kernels");
      return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static GpuCapabilities gpu(int major, int minor, int multiprocessors, int sharedOptin, boolean maps) {
    return new GpuCapabilities(major, minor, multiprocessors, sharedOptin, maps,
        (module, entry, threads, shared) -> Math.max(1, Math.min(2048 / threads, (sharedOptin + 1024) / (shared
            + 1024))));
  }
}
