package dev.maxsim4j.internal.cuda.golden;

import dev.maxsim4j.internal.cuda.golden.LegacyFakes.Device;
import dev.maxsim4j.internal.cuda.golden.LegacyFakes.DeviceTokens;
import dev.maxsim4j.internal.cuda.golden.LegacyFakes.Params;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes the expected forward plans (test resource forward-plans.txt): every {@link PlanCases} case run
 * through {@link LegacyForwardKernels}, one line per case with what it launched. Run once, before the
 * planner replaced the old cascade: {@code java ... GoldenPlans OUT}.
 */
public final class GoldenPlans {
  private GoldenPlans() {}

  public static void main(String[] args) throws IOException {
    List<String> lines = new ArrayList<>();
    for (PlanCases.Case c : PlanCases.all()) {
      lines.add(c + " | " + String.join(" ; ", run(c)));
    }
    Files.write(Path.of(args[0]), lines);
  }

  static List<String> run(PlanCases.Case c) {
    PlanCases.Gpu g = c.gpu();
    Device device = new Device(g.major(), g.minor(), g.multiprocessors(), g.sharedMemoryPerBlockOptin(),
        g.tensorMaps());
    Params params = new Params();
    device.watch(params);
    LegacyForwardKernels forward = new LegacyForwardKernels(device, params);
    LegacyFakes.NAMES.clear();
    DeviceTokens q = new DeviceTokens(c.queryType(), c.dim(), c.queries(), c.queryLength(),
        c.queries() * c.queryLength(), LegacyFakes.pointer("q.data"), LegacyFakes.pointer("q.rowStart"),
        LegacyFakes.pointer("q.rowLength"), LegacyFakes.pointer("q.validCount"), LegacyFakes.pointer("q.mask"));
    DeviceTokens d = new DeviceTokens(c.documentType(), c.dim(), c.documentRows(), c.documentLength(),
        c.documentRows() * c.documentLength(), LegacyFakes.pointer("d.data"), LegacyFakes.pointer("d.rowStart"),
        LegacyFakes.pointer("d.rowLength"), LegacyFakes.pointer("d.validCount"), LegacyFakes.pointer("d.mask"));
    long scores = LegacyFakes.pointer("scores");
    long argmax = c.training() ? LegacyFakes.pointer("argmax") : 0L;
    int stride = c.training() ? c.queryLength() : 0;
    try {
      boolean narrow = c.training() && forward.narrowArgmax(q, d, c.mode(), c.perQuery(), c.pairs(),
          c.queryLength(), c.queries());
      if (c.training()) {
        device.log.add("argmax " + (narrow ? "int16" : "int32"));
      }
      forward.launch(q, d, c.mode(), c.perQuery(), c.docOffset(), c.pairs(), scores, argmax, stride,
          c.queryLength(), c.queries(), narrow);
    } catch (RuntimeException e) {
      device.log.add("throws " + e.getClass().getSimpleName() + ": " + e.getMessage());
    }
    return device.log;
  }
}
