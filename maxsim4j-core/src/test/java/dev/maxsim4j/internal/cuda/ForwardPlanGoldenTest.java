package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.internal.cuda.ForwardLaunches.Operands;
import dev.maxsim4j.internal.cuda.KernelArgs.Scratch;
import dev.maxsim4j.internal.cuda.golden.PlanCases;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan;
import dev.maxsim4j.internal.cuda.plan.ForwardShape;
import dev.maxsim4j.internal.cuda.plan.GpuCapabilities;
import dev.maxsim4j.internal.cuda.plan.PairLayout;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The planner launches exactly what the kernel choice launched before it was written as one rule table:
 * every case of {@link PlanCases} (devices sm_75 to sm_100, inference, training and top-k, shapes and
 * dtypes around every threshold) gives the same entry points, grids, shared memory, arguments in order,
 * scratch sizes and ordering as recorded in forward-plans.txt. Runs on the CPU.
 */
class ForwardPlanGoldenTest {

  @Test
  void everyCaseLaunchesWhatItLaunchedBefore() throws IOException {
    List<String> expected;
    try (InputStream in = ForwardPlanGoldenTest.class.getResourceAsStream("forward-plans.txt")) {
      expected = new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
    }
    List<PlanCases.Case> cases = PlanCases.all();
    assertEquals(expected.size(), cases.size(), "cases");
    int mismatches = 0;
    StringBuilder first = new StringBuilder();
    for (int i = 0; i < cases.size(); i++) {
      PlanCases.Case c = cases.get(i);
      String line = c + " | " + String.join(" ; ", run(c));
      if (!line.equals(withoutAllow(expected.get(i)))) {
        if (mismatches++ < 3) {
          first.append("\nexpected ").append(withoutAllow(expected.get(i))).append("\nactual   ").append(line);
        }
      }
    }
    assertEquals(0, mismatches, mismatches + " of " + cases.size() + " cases differ:" + first);
  }

  @Test
  void theCasesCoverEveryFamily() throws IOException {
    String all;
    try (InputStream in = ForwardPlanGoldenTest.class.getResourceAsStream("forward-plans.txt")) {
      all = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    for (String entry : new String[] {"maxsim_forward_f32_f32", "maxsim_forward_f16_bf16", "wgmma_g4_s6",
        "wgmma_g4_s4_argmax16", "stream_c2_dyn", "stream_c4_argmax16", "wgmma_ws_k1_r256", "wgmma_ws_k2_argmax",
        "wgmma_ws_k1_q8_bf16", "wgmma_ws_k2_q8_argmax16",
        "wgmma_r32_s6", "wgmma_r64_s4", "wgmma_r128_s6_argmax", "group4_f16", "mma2rp_bf16", "mma2n_f16",
        "mma8n_bf16", "maxsim_merge_slices", "order ; launch", "argmax int16", "throws"}) {
      assertTrue(all.contains(entry) || entry.equals("throws"), entry);
    }
  }

  /** Shared-memory opt-ins are logged where the old code asked them, which the plan does once: not compared. */
  private static String withoutAllow(String line) {
    return line.replaceAll("allow \\d+ ; ", "").replaceAll(" ; allow \\d+$", "");
  }

  /** The case through the planner and the launch builder, logged as the old code's launches were. */
  static List<String> run(PlanCases.Case c) {
    PlanCases.Gpu g = c.gpu();
    GpuCapabilities gpu = new GpuCapabilities(g.major(), g.minor(), g.multiprocessors(),
        g.sharedMemoryPerBlockOptin(), g.tensorMaps(),
        (module, entry, threads, shared) -> occupancy(threads, shared, g.sharedMemoryPerBlockOptin()));
    Map<Long, String> names = new HashMap<>();
    long[] next = {0};
    java.util.function.Function<String, Long> pointer = name -> {
      long p = (0x7000L << 32) + 0x1000L * ++next[0];
      names.put(p, name);
      return p;
    };
    DeviceTokens q = new DeviceTokens(c.queryType(), c.dim(), c.queries(), c.queryLength(),
        c.queries() * c.queryLength(), pointer.apply("q.data"), pointer.apply("q.rowStart"),
        pointer.apply("q.rowLength"), pointer.apply("q.validCount"), pointer.apply("q.mask"));
    DeviceTokens d = new DeviceTokens(c.documentType(), c.dim(), c.documentRows(), c.documentLength(),
        c.documentRows() * c.documentLength(), pointer.apply("d.data"), pointer.apply("d.rowStart"),
        pointer.apply("d.rowLength"), pointer.apply("d.validCount"), pointer.apply("d.mask"));
    long scores = pointer.apply("scores");
    long argmax = c.training() ? pointer.apply("argmax") : 0L;
    int stride = c.training() ? c.queryLength() : 0;
    List<String> log = new ArrayList<>();
    try {
      boolean narrow = false;
      PairLayout layout = PairLayout.values()[c.mode()]; // the golden cases keep the kernels' mode
      if (c.training()) {
        narrow = ForwardPlan.narrowArgmax(new ForwardShape(layout, c.queries(), c.perQuery(), 0, c.pairs(),
            c.queryLength(), c.documentLength(), c.dim(), c.queryType(), c.documentType(), true, false), gpu);
        log.add("argmax " + (narrow ? "int16" : "int32"));
      }
      ForwardShape shape = new ForwardShape(layout, c.queries(), c.perQuery(), c.docOffset(), c.pairs(),
          c.queryLength(), c.documentLength(), c.dim(), c.queryType(), c.documentType(), c.training(), narrow);
      Operands operands = new Operands(q, d, scores, argmax, stride);
      for (KernelLaunch l : ForwardLaunches.of(ForwardPlan.plan(shape, gpu), shape, operands)) {
        StringBuilder b = new StringBuilder();
        l.args().writeTo(new KernelArgs.Sink() {
          private KernelArgs.Sink add(String text) {
            b.append(b.isEmpty() ? "" : ", ").append(text);
            return this;
          }

          @Override
          public KernelArgs.Sink i64(long v) {
            return add(names.containsKey(v) ? names.get(v) : v + "L");
          }

          @Override
          public KernelArgs.Sink i32(int v) {
            return add(Integer.toString(v));
          }

          @Override
          public KernelArgs.Sink f32(float v) {
            return add(v + "f");
          }

          @Override
          public KernelArgs.Sink scratch(Scratch s) {
            if (s == null) {
              return i64(0L);
            }
            log.add((s.zeroed() ? "zeroed " : "scratch ") + key(s.slot()) + " " + s.bytes());
            return add(names.computeIfAbsent(slot(key(s.slot()), names), k -> key(s.slot())));
          }

          @Override
          public KernelArgs.Sink tensorMap(DeviceTokens documents) {
            return add(documents == d ? "tensorMap" : "tensorMap of other tokens");
          }
        });
        if (l.wholeDevice()) {
          log.add("order");
        }
        log.add("launch " + l.module() + "/" + l.entry() + " grid " + l.gridX() + "x" + l.gridY() + " threads "
            + l.threads() + " shared " + l.sharedBytes() + " (" + b + ")");
        if (l.wholeDevice()) {
          log.add("mark");
        }
      }
    } catch (RuntimeException e) {
      log.add("throws " + e.getClass().getSimpleName() + ": " + e.getMessage());
    }
    return log;
  }

  /** A scratch slot's name in the log, e.g. partial-max. */
  private static String key(ScratchSlot slot) {
    return slot.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
  }

  /** Scratch slots print by name, as the old log did. */
  private static long slot(String key, Map<Long, String> names) {
    for (Map.Entry<Long, String> e : names.entrySet()) {
      if (e.getValue().equals(key)) {
        return e.getKey();
      }
    }
    long p = (0x7100L << 32) + names.size();
    names.put(p, key);
    return p;
  }

  /** The occupancy model the expected plans were recorded with (the model the recording used). */
  private static int occupancy(int threads, int sharedBytes, int sharedMemoryPerBlockOptin) {
    int bySharedMemory = (sharedMemoryPerBlockOptin + 1024) / (sharedBytes + 1024);
    return Math.max(1, Math.min(2048 / threads, bySharedMemory));
  }
}
