package dev.maxsim4j.cli;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.baseline.NaiveMaxSim;
import dev.maxsim4j.cli.io.AtomicOutput;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * {@code bench}: times the fused kernel and the naive grid-materialising path on synthetic L2-normalised
 * data; median wall time per all-pairs call after warm-up. This is a quick check; the JMH module
 * ({@code maxsim4j-bench}) is the measurement of record for the CPU.
 */
final class BenchCommand {
  static final String USAGE = """
      bench [--device cpu|cuda|auto] [--shape Nq,Nd,Lq,Ld,d]... [--dtype fp32|fp16|bf16] [--threads N]
            [--backend vector|scalar|reference] [--iterations N] [--no-naive] [--json FILE] [--compare EAGER.json]
        CPU (default shapes 1,1000,32,300,128  1,1000,32,1024,128  32,32,32,300,128; fp32): fused vs the
        naive grid path, ms, GFLOP/s, GB/s. CUDA (default: the 15 shapes of docs/benchmarks.md; bf16):
        kernel ms (CUDA events, resident documents), whole-call ms (host and resident queries; awaited at
        once, and per call kept in flight with scoresAsync), PyTorch eager ms from --compare, roofline floor
        and % of floor. --train: forward + backward of
        scores.sum() on the GPU (owned and atomic dD), op memory, eager autograd. --json writes one
        object per case.""";

  private static final long NAIVE_GRID_LIMIT = 3L << 30;

  private BenchCommand() {}

  record Case(int[] shape, String dtype, String device, String backend, int threads, double fusedMs,
      double naiveMs, double gflops, double gbps) {}

  static int run(String[] argv, PrintStream out) throws IOException {
    List<String> shapes = new ArrayList<>();
    List<String> rest = new ArrayList<>();
    for (int i = 1; i < argv.length; i++) {
      if (argv[i].equals("--shape") && i + 1 < argv.length) {
        shapes.add(argv[++i]);
      } else {
        rest.add(argv[i]);
      }
    }
    String[] restArgs = new String[rest.size() + 1];
    restArgs[0] = "bench";
    for (int i = 0; i < rest.size(); i++) {
      restArgs[i + 1] = rest.get(i);
    }
    Args a = new Args("bench", restArgs, 1,
        Set.of("--device", "--dtype", "--threads", "--backend", "--iterations", "--json", "--compare"),
        Set.of("--no-naive", "--train", "--verbose"));
    shapes.forEach(BenchCommand::parseShape);
    if (a.get("--json") != null) {
      // a missing folder or a clash with --compare is found before the benchmark, not after it
      AtomicOutput.check("--json", Path.of(a.get("--json")), a.get("--compare") == null ? List.of()
          : List.of(Path.of(a.get("--compare"))));
    }
    String device = a.getOr("--device", "auto");
    if (!device.equals("cpu") && !device.equals("auto") && !device.equals("cuda")) {
      throw new UsageException("bench: --device '" + device + "'; expected cpu, cuda or auto");
    }
    java.util.Optional<String> noGpu = dev.maxsim4j.internal.BackendSelector.cudaUnavailableReason();
    if (device.equals("cuda") && noGpu.isPresent()) {
      throw new IllegalArgumentException("--device cuda: no usable GPU here (" + noGpu.get() + "); use --device cpu");
    }
    if (a.has("--train")) {
      if (noGpu.isPresent() || device.equals("cpu")) {
        throw new IllegalArgumentException("bench --train times the GPU training step; no usable GPU here ("
            + noGpu.orElse("--device cpu") + ")");
      }
      return GpuTrainBench.run(shapes, Synthetic.parseDType(a.getOr("--dtype", "bf16")), a.get("--json"),
          a.get("--compare"), out);
    }
    if (device.equals("cuda") || (device.equals("auto") && noGpu.isEmpty())) {
      return GpuBench.run(shapes, Synthetic.parseDType(a.getOr("--dtype", "bf16")),
          a.intValue("--threads", Runtime.getRuntime().availableProcessors(), 1), a.get("--json"), a.get("--compare"), out);
    }
    if (shapes.isEmpty()) {
      shapes = List.of("1,1000,32,300,128", "1,1000,32,1024,128", "32,32,32,300,128");
    }
    DType dtype = Synthetic.parseDType(a.getOr("--dtype", "fp32"));
    int threads = a.intValue("--threads", Runtime.getRuntime().availableProcessors(), 1);
    int iterations = a.intValue("--iterations", 0, 1);
    List<Case> cases = new ArrayList<>();
    out.printf(Locale.ROOT, "%-22s %-5s %-7s %3s %10s %10s %8s %9s %8s%n", "shape Nq,Nd,Lq,Ld,d", "dtype",
        "backend", "thr", "fused ms", "naive ms", "speedup", "GFLOP/s", "GB/s");
    try (MaxSim maxSim = Engine.open(a, MaxSim.builder().threads(threads))) {
      for (String s : shapes) {
        int[] sh = parseShape(s);
        SplittableRandom rnd = new SplittableRandom(42);
        TokenBatch q = Synthetic.unitBatch(rnd, dtype, sh[0], sh[2], sh[4]);
        TokenBatch d = Synthetic.unitBatch(rnd, dtype, sh[1], sh[3], sh[4]);
        jitWarmUp(maxSim, rnd, dtype, sh, threads, !a.has("--no-naive"));
        double fused = medianMillis(() -> maxSim.scores(q, d), iterations);
        double naive = Double.NaN;
        if (!a.has("--no-naive") && NaiveMaxSim.gridBytes(q, d) <= NAIVE_GRID_LIMIT) {
          naive = medianMillis(() -> NaiveMaxSim.scores(q, d, threads), iterations == 0 ? 0 : Math.min(iterations, 5));
        }
        double flops = 2.0 * sh[0] * sh[1] * sh[2] * sh[3] * sh[4];
        double bytes = (double) dtype.byteSize() * ((double) sh[0] * sh[2] + (double) sh[1] * sh[3]) * sh[4];
        Case c = new Case(sh, dtype.name().toLowerCase(Locale.ROOT), "cpu", maxSim.backendName(), threads, fused, naive,
            flops / fused / 1e6, bytes / fused / 1e6);
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

  /** Median of timed runs after a warm-up of at least a second; iterations 0 = as many as fit ~2 s. */
  static double medianMillis(Runnable call, int iterations) {
    long warmEnd = System.nanoTime() + 1_000_000_000L;
    int warm = 0;
    long one = 0;
    while (warm < 3 || System.nanoTime() < warmEnd) {
      long t0 = System.nanoTime();
      call.run();
      one = System.nanoTime() - t0;
      warm++;
    }
    int n = iterations > 0 ? iterations : (int) Math.max(5, Math.min(200, 2_000_000_000L / Math.max(1, one)));
    return timedMedianMillis(call, n);
  }

  /** Median wall time in milliseconds of {@code n} runs of {@code call} (the caller warms it up first). */
  static double timedMedianMillis(Runnable call, int n) {
    double[] ms = new double[n];
    for (int i = 0; i < n; i++) {
      long t0 = System.nanoTime();
      call.run();
      ms[i] = (System.nanoTime() - t0) / 1e6;
    }
    Arrays.sort(ms);
    return ms[n / 2];
  }

  static int[] parseShape(String s) {
    String[] parts = s.split(",");
    if (parts.length != 5) {
      throw new UsageException("bench: --shape '" + s + "'; expected Nq,Nd,Lq,Ld,d");
    }
    int[] sh = new int[5];
    for (int i = 0; i < 5; i++) {
      try {
        sh[i] = Integer.parseInt(parts[i].trim());
      } catch (NumberFormatException e) {
        throw new UsageException("bench: --shape '" + s + "'; '" + parts[i] + "' is not an integer");
      }
      if (sh[i] < 1) {
        throw new UsageException("bench: --shape '" + s + "'; every entry must be >= 1");
      }
    }
    // the synthetic batches are single Java arrays
    if ((long) sh[0] * sh[2] * sh[4] > Inputs.HEAP_ELEMENTS || (long) sh[1] * sh[3] * sh[4] > Inputs.HEAP_ELEMENTS) {
      throw new UsageException("bench: --shape '" + s + "'; Nq x Lq x d and Nd x Ld x d must each be at most "
          + Inputs.HEAP_ELEMENTS);
    }
    return sh;
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
