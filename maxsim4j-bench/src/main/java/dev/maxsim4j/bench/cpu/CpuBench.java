package dev.maxsim4j.bench.cpu;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.bench.Shapes;
import dev.maxsim4j.bench.Synthetic;
import dev.maxsim4j.bench.Timing;
import dev.maxsim4j.bench.baseline.NaiveMaxSim;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.Engine;
import dev.maxsim4j.cli.io.AtomicOutput;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * {@code cpu}: times the fused kernel and the naive grid-materialising path on synthetic L2-normalised
 * data; median wall time per all-pairs call after warm-up. This is a quick check; the JMH benchmarks in
 * this module are the measurement of record for the CPU.
 */
public final class CpuBench {
  public static final String USAGE = """
      cpu [--shape Nq,Nd,Lq,Ld,d]... [--dtype fp32|fp16|bf16] [--threads N] [--backend vector|scalar|reference]
          [--iterations N] [--no-naive] [--json FILE] [--verbose]
        fused vs the naive grid path on the CPU: ms, GFLOP/s, GB/s (default shapes 1,1000,32,300,128
        1,1000,32,1024,128  32,32,32,300,128; fp32). --json writes one object per shape.""";

  private static final List<String> DEFAULT_SHAPES = List.of("1,1000,32,300,128", "1,1000,32,1024,128",
      "32,32,32,300,128");
  private static final long NAIVE_GRID_LIMIT = 3L << 30;

  private CpuBench() {}

  record Case(int[] shape, String dtype, String device, String backend, int threads, double fusedMs,
      double naiveMs, double gflops, double gbps) {}

  public static int run(String[] argv, PrintStream out) throws IOException {
    Shapes.Split split = Shapes.take(argv);
    List<String> shapes = split.shapes();
    Args a = new Args("maxsim4j bench", "cpu", split.rest(), 1,
        Set.of("--dtype", "--threads", "--backend", "--iterations", "--json"), Set.of("--no-naive", "--verbose"));
    shapes.forEach(s -> Shapes.parse("cpu", s));
    if (a.get("--json") != null) {
      // a missing folder is found before the benchmark, not after it
      AtomicOutput.check("--json", Path.of(a.get("--json")), List.of());
    }
    if (shapes.isEmpty()) {
      shapes = DEFAULT_SHAPES;
    }
    DType dtype = Synthetic.parseDType(a.getOr("--dtype", "fp32"));
    int threads = a.intValue("--threads", Runtime.getRuntime().availableProcessors(), 1);
    int iterations = a.intValue("--iterations", 0, 1);
    List<Case> cases = new ArrayList<>();
    out.printf(Locale.ROOT, "%-22s %-5s %-7s %3s %10s %10s %8s %9s %8s%n", "shape Nq,Nd,Lq,Ld,d", "dtype",
        "backend", "thr", "fused ms", "naive ms", "speedup", "GFLOP/s", "GB/s");
    // the CPU is what this times: auto would take a GPU where one is present
    try (MaxSim maxSim = Engine.open(a.getOr("--backend", "cpu"), a.has("--verbose"),
        MaxSim.builder().threads(threads))) {
      for (String s : shapes) {
        int[] sh = Shapes.parse("cpu", s);
        SplittableRandom rnd = new SplittableRandom(42);
        TokenBatch q = Synthetic.unitBatch(rnd, dtype, sh[0], sh[2], sh[4]);
        TokenBatch d = Synthetic.unitBatch(rnd, dtype, sh[1], sh[3], sh[4]);
        jitWarmUp(maxSim, rnd, dtype, sh, threads, !a.has("--no-naive"));
        double fused = Timing.medianMillis(() -> maxSim.scores(q, d), iterations);
        double naive = Double.NaN;
        if (!a.has("--no-naive") && NaiveMaxSim.gridBytes(q, d) <= NAIVE_GRID_LIMIT) {
          naive = Timing.medianMillis(() -> NaiveMaxSim.scores(q, d, threads),
              iterations == 0 ? 0 : Math.min(iterations, 5));
        }
        Case c = new Case(sh, dtype.name().toLowerCase(Locale.ROOT), "cpu", maxSim.backendName(), threads, fused, naive,
            Shapes.flops(sh) / fused / 1e6, Shapes.inputBytes(sh, dtype.byteSize()) / fused / 1e6);
        cases.add(c);
        out.printf(Locale.ROOT, "%-22s %-5s %-7s %3d %10.3f %10s %8s %9.1f %8.2f%n", s, shortType(dtype),
            c.backend, threads, fused, Double.isNaN(naive) ? "-" : String.format(Locale.ROOT, "%.3f", naive),
            Double.isNaN(naive) ? "-" : String.format(Locale.ROOT, "%.1fx", naive / fused), c.gflops, c.gbps);
      }
    }
    if (a.get("--json") != null) {
      AtomicOutput.writeString("--json", Path.of(a.get("--json")), List.of(), toJson(cases));
    }
    return 0;
  }

  private static String shortType(DType t) {
    return switch (t) {
      case FLOAT32 -> "fp32";
      case FLOAT16 -> "fp16";
      case BFLOAT16 -> "bf16";
      default -> t.name().toLowerCase(java.util.Locale.ROOT);
    };
  }

  /**
   * Compiles both paths on a small problem of the same d and dtype first: a long call measured cold runs
   * partly interpreted (on-stack replacement), which once made the first naive shape look 10x slower.
   */
  private static void jitWarmUp(MaxSim maxSim, SplittableRandom rnd, DType dtype, int[] sh, int threads, boolean naive) {
    TokenBatch q = Synthetic.unitBatch(rnd, dtype, 2, sh[2], sh[4]);
    TokenBatch d = Synthetic.unitBatch(rnd, dtype, 16, Math.min(sh[3], 64), sh[4]);
    for (int i = 0; i < 200; i++) {
      maxSim.scores(q, d);
      if (naive) {
        NaiveMaxSim.scores(q, d, threads);
      }
    }
  }

  static String toJson(List<Case> cases) {
    StringBuilder b = new StringBuilder("[\n");
    for (int i = 0; i < cases.size(); i++) {
      Case c = cases.get(i);
      b.append(String.format(Locale.ROOT,
          "  {\"shape\": [%d, %d, %d, %d, %d], \"dtype\": \"%s\", \"device\": \"%s\", \"backend\": \"%s\", "
              + "\"threads\": %d, \"fused_ms\": %.4f, \"naive_ms\": %s, \"speedup\": %s, \"gflops\": %.2f, \"gbps\": %.3f}",
          c.shape[0], c.shape[1], c.shape[2], c.shape[3], c.shape[4], c.dtype, c.device, c.backend, c.threads,
          c.fusedMs, Double.isNaN(c.naiveMs) ? "null" : String.format(Locale.ROOT, "%.4f", c.naiveMs),
          Double.isNaN(c.naiveMs) ? "null" : String.format(Locale.ROOT, "%.3f", c.naiveMs / c.fusedMs), c.gflops, c.gbps));
      b.append(i + 1 < cases.size() ? ",\n" : "\n");
    }
    return b.append("]\n").toString();
  }
}
