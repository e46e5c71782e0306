package dev.maxsim4j.bench.cpu;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.bench.BenchTypes;
import dev.maxsim4j.bench.Shapes;
import dev.maxsim4j.bench.Synthetic;
import dev.maxsim4j.bench.Timing;
import dev.maxsim4j.bench.baseline.NaiveMaxSim;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.Engine;
import dev.maxsim4j.cli.UsageException;
import dev.maxsim4j.cli.io.AtomicOutput;
import dev.maxsim4j.cli.io.Counts;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * {@code cpu}: times the fused kernel on synthetic L2-normalised data, against fp32 documents when another
 * type is asked for, against OpenBLAS sgemm on the same FLOPs with {@code --sgemm}, and against the naive
 * grid-materialising path. The compared calls alternate over rounds and each keeps its best round's median
 * (see {@link Rounds}). This is a quick check; the JMH benchmarks in this module are the measurement of
 * record for the CPU.
 */
public final class CpuBench {
  /** The backends this bench times: auto and cuda would take a GPU where one is present. */
  private static final List<String> CPU_BACKENDS = List.of("cpu", "vector", "scalar", "reference");
  public static final String USAGE = """
      cpu [--shape Nq,Nd,Lq,Ld,d]... [--dtype T] [--query-dtype T] [--threads N]
          [--backend cpu|vector|scalar|reference] [--iterations N] [--rounds N] [--no-naive] [--sgemm] [--json FILE]
          [--verbose]
        the fused kernel on the CPU: ms, GFLOP/s, GB/s (default shapes 1,1000,32,300,128  1,1000,32,1024,128
        32,32,32,300,128). --dtype sets the documents' type: fp32 (default), fp16, bf16, int8, fp8, binary, or
        binary-sym (both sides one bit); queries are fp32 unless --query-dtype says otherwise. Any type but fp32
        is timed beside fp32 on the same values. --sgemm adds OpenBLAS sgemm on the same FLOPs and threads (one
        product per pair, and one of all pairs; OPENBLAS_CORETYPE picks its kernels). --rounds (default 3, at
        most 100): the compared calls alternate this many times; --iterations (at most 1000000): the calls
        timed in each round. --json writes one object per shape when the run ends; while it runs, FILE.partial
        holds the shapes measured so far (kept if the run fails, removed when FILE is written; both are checked
        before any shape runs).
        naive ms is '-' where its grid passes 3 GiB or it and its copies of the inputs would not fit the heap
        (-Xmx through JAVA_OPTS), and in a JVM without the Vector API's module; a shape whose fp32 inputs and
        scores alone do not fit is refused before any shape runs.""";

  private static final List<String> DEFAULT_SHAPES = List.of("1,1000,32,300,128", "1,1000,32,1024,128",
      "32,32,32,300,128");
  private static final long NAIVE_GRID_LIMIT = 3L << 30;

  private CpuBench() {}

  record Case(int[] shape, DType docType, DType queryType, String backend, int threads, double fusedMs,
      double fp32Ms, double naiveMs, double sgemmPairsMs, double sgemmAllMs) {
    double gflops() {
      return Shapes.flops(shape) / fusedMs / 1e6;
    }

    /** Both inputs read once in their stored form, a quantized token's fp32 scale included. */
    double gbps() {
      return (bytes(queryType, (double) shape[0] * shape[2]) + bytes(docType, (double) shape[1] * shape[3]))
          / fusedMs / 1e6;
    }

    private double bytes(DType t, double tokens) {
      return tokens * (t.bytesPerToken(shape[4]) + (t.isQuantized() ? Float.BYTES : 0));
    }

    double sgemmBestMs() {
      return Double.isNaN(sgemmAllMs) ? sgemmPairsMs : Math.min(sgemmPairsMs, sgemmAllMs);
    }
  }

  public static int run(String[] argv, PrintStream out) throws IOException {
    Shapes.Split split = Shapes.take(argv);
    List<String> shapes = split.shapes();
    Args a = new Args("maxsim4j bench", "cpu", split.rest(), 1,
        Set.of("--dtype", "--query-dtype", "--threads", "--backend", "--iterations", "--rounds", "--json"),
        Set.of("--no-naive", "--sgemm", "--verbose"));
    shapes.forEach(s -> Shapes.parse("cpu", s));
    if (a.get("--json") != null) {
      // a missing folder is found before the benchmark, not after it; so is a side file that cannot be written
      AtomicOutput.check("--json", AtomicOutput.target("--json", a.get("--json")), List.of());
      AtomicOutput.check(partialOption(a.get("--json")), partial(a.get("--json")), List.of());
    }
    if (shapes.isEmpty()) {
      shapes = DEFAULT_SHAPES;
    }
    String docName = a.getOr("--dtype", "fp32");
    boolean symmetric = BenchTypes.isSymmetric(docName);
    DType docType = symmetric ? DType.BINARY : BenchTypes.parse("cpu", "--dtype", docName, BenchTypes.ALL, true);
    String queryName = a.get("--query-dtype");
    DType queryType = queryName == null ? (symmetric ? DType.BINARY : DType.FLOAT32)
        : BenchTypes.parse("cpu", "--query-dtype", queryName, BenchTypes.ALL, false);
    if (symmetric && queryType != DType.BINARY) {
      throw new UsageException("cpu: --dtype " + docName + " times 1-bit queries, but --query-dtype is " + queryName
          + "; expected no --query-dtype, or binary (or --dtype binary for other queries)");
    }
    String backend = a.getOr("--backend", "cpu");
    if (!CPU_BACKENDS.contains(backend.trim().toLowerCase(Locale.ROOT))) { // as the library reads backend names
      throw new UsageException("cpu: --backend " + backend + " is not a CPU backend; expected one of "
          + String.join(", ", CPU_BACKENDS) + " (bench gpu times CUDA)");
    }
    int threads = a.threads(Runtime.getRuntime().availableProcessors());
    for (String s : shapes) {
      int[] sh = Shapes.parse("cpu", s);
      Shapes.checkCpuHeap("cpu", s, sh, typedBytes(queryType, (long) sh[0] * sh[2], sh[4])
          + typedBytes(docType, (long) sh[1] * sh[3], sh[4]));
      if (a.has("--sgemm")) {
        SgemmBench.checkPerPair("cpu", s, sh, threads);
      }
    }
    int iterations = a.intValue("--iterations", 0, 1, MAX_ITERATIONS);
    int rounds = a.intValue("--rounds", 3, 1, MAX_ROUNDS);
    // the naive baseline is written with the Vector API: a JVM without its module (a scalar run) leaves it out
    boolean naive = !a.has("--no-naive") && MaxSim.vectorApiAvailable();
    boolean compareFp32 = docType != DType.FLOAT32 || queryType != DType.FLOAT32;
    OpenBlas blas = a.has("--sgemm") ? OpenBlas.load() : null;
    if (blas != null) {
      checkBlasThreads(blas, threads);
    }
    List<Case> cases = new ArrayList<>();
    try (MaxSim maxSim = Engine.open(backend, a.has("--verbose"),
        MaxSim.builder().threads(threads));
        SgemmBench sgemm = blas == null ? null : new SgemmBench(blas, threads)) {
      // printed once the backend has opened: a refused one is the run's only line
      if (blas != null) {
        out.printf(Locale.ROOT, "sgemm: %s, kernels %s; all pairs on %d OpenBLAS threads, per pair on %d threads of"
            + " 1%n", blas.config(), blas.coreName(), threads, threads);
      }
      out.println(header(compareFp32, blas != null));
      Run run = new Run(maxSim, sgemm, docType, queryType, threads, naive, compareFp32, iterations, rounds);
      for (String s : shapes) {
        Case c;
        try {
          c = run.measure(Shapes.parse("cpu", s));
        } catch (OutOfMemoryError e) {
          if (!String.valueOf(e.getMessage()).contains("Java heap space")) {
            throw e;
          }
          throw outOfHeap(s, docType, queryType, e);
        }
        cases.add(c);
        out.println(row(s, c, compareFp32, blas != null));
        // the finished shapes beside the target, whole, after each: a later shape that fails leaves them, and
        // the target (an earlier run's results, perhaps) is replaced only by a run that ended
        if (a.get("--json") != null) {
          AtomicOutput.writeString(partialOption(a.get("--json")), partial(a.get("--json")), List.of(),
              CpuBenchJson.of(cases));
        }
      }
    }
    if (a.get("--json") != null) {
      AtomicOutput.writeString("--json", AtomicOutput.target("--json", a.get("--json")), List.of(),
          CpuBenchJson.of(cases));
      Files.deleteIfExists(partial(a.get("--json")));
    }
    return 0;
  }

  /** What every shape of a run is measured with. */
  private record Run(MaxSim maxSim, SgemmBench sgemm, DType docType, DType queryType, int threads, boolean naive,
      boolean compareFp32, int iterations, int rounds) {
    Case measure(int[] sh) {
      SplittableRandom rnd = new SplittableRandom(42);
      // the fp32 values once: the batches, their typed copies and sgemm's operands all read these arrays
      float[] qv = Synthetic.unitValues(rnd, sh[0], sh[2], sh[4]);
      float[] dv = Synthetic.unitValues(rnd, sh[1], sh[3], sh[4]);
      TokenBatch q32 = TokenBatch.ofFloats(qv, sh[0], sh[2], sh[4]);
      TokenBatch d32 = TokenBatch.ofFloats(dv, sh[1], sh[3], sh[4]);
      TokenBatch q = as(q32, qv, queryType);
      TokenBatch d = as(d32, dv, docType);
      jitWarmUp(maxSim, rnd, queryType, docType, sh, threads, naive);
      List<Runnable> calls = new ArrayList<>(List.of(() -> maxSim.scores(q, d)));
      if (compareFp32) {
        calls.add(() -> maxSim.scores(q32, d32));
      }
      int sgemmAt = calls.size();
      Runnable whole = null;
      if (sgemm != null) {
        calls.add(sgemm.perPair(sh, qv, dv));
        whole = sgemm.whole(sh, qv, dv);
        if (whole != null) {
          calls.add(whole);
        }
      }
      double[] ms = Rounds.bestMedians(calls, iterations, rounds);
      double naiveMs = Double.NaN;
      if (naive && NaiveMaxSim.gridBytes(q, d) <= NAIVE_GRID_LIMIT && naiveFitsHeap(sh, q, d)) {
        naiveMs = Timing.medianMillis(() -> NaiveMaxSim.scores(q, d, threads),
            iterations == 0 ? 0 : Math.min(iterations, 5));
      }
      return new Case(sh, docType, queryType, maxSim.backendName(), threads, ms[0],
          compareFp32 ? ms[1] : Double.NaN, naiveMs, sgemm == null ? Double.NaN : ms[sgemmAt],
          whole == null ? Double.NaN : ms[sgemmAt + 1]);
    }
  }

  /** More timed calls than any median needs; the timings of each are kept, so a bound keeps them in the heap. */
  static final int MAX_ITERATIONS = 1_000_000;

  /**
   * At most this many rounds: each warms every call before timing it, so an unbounded count would run on silently
   * for years, and more rounds than this add nothing to a best-of.
   */
  static final int MAX_ROUNDS = 100;

  /** How errors name the side file: "--json FILE.partial is a directory" read as if FILE were the problem. */
  private static String partialOption(String json) {
    return "--json " + json + ": its side file";
  }

  /** Where a run keeps the shapes it measured so far: beside the --json file, named FILE.partial. */
  private static Path partial(String json) {
    Path target = AtomicOutput.target("--json", json);
    return target.resolveSibling(target.getFileName() + ".partial");
  }

  /**
   * Refuses more threads than this OpenBLAS runs: it caps them silently, which would leave the header's thread
   * count and the comparison wrong, and the per-pair pool would start that many platform threads.
   */
  private static void checkBlasThreads(OpenBlas blas, int threads) {
    int before = blas.threads();
    blas.threads(threads);
    int most = blas.threads();
    blas.threads(before);
    if (most < threads) {
      throw new UsageException("cpu: --threads = " + threads + " with --sgemm; this OpenBLAS (" + blas.config()
          + ") runs at most " + Counts.of(most, "thread") + "; expected --threads <= " + most);
    }
  }

  /**
   * Whether the naive path's grid, scores and fp32 copies of both inputs fit the heap beside the fp32 and typed
   * inputs this run holds: else it would end the run in an OutOfMemoryError after the fused kernel was timed.
   */
  private static boolean naiveFitsHeap(int[] sh, TokenBatch q, TokenBatch d) {
    long values = (long) sh[0] * sh[2] * sh[4] + (long) sh[1] * sh[3] * sh[4];
    long lanes = NaiveMaxSim.gridBytes(q, d) / (4L * sh[0] * sh[1] * sh[3]);
    long bytes = NaiveMaxSim.gridBytes(q, d) + 4L * sh[0] * sh[1] + 4L * sh[0] * sh[4] * lanes + 3L * 4 * values;
    return bytes <= Runtime.getRuntime().maxMemory();
  }

  /** {@code fp32} (whose values are {@code values}) as {@code type}. */
  private static TokenBatch as(TokenBatch fp32, float[] values, DType type) {
    return switch (type) {
      case FLOAT32 -> fp32;
      case FLOAT16, BFLOAT16 -> Synthetic.store(type, values, fp32.size(), fp32.maxLength(), fp32.dim());
      default -> fp32.quantize(type);
    };
  }

  /** Heap bytes of a copy of {@code tokens} fp32 tokens of {@code dim} in {@code type} (none for fp32 itself). */
  private static long typedBytes(DType type, long tokens, int dim) {
    return type == DType.FLOAT32 ? 0 : tokens * (type.bytesPerToken(dim) + (type.isQuantized() ? Float.BYTES : 0));
  }

  /**
   * A shape that ran out of heap, named: the check before the run counts the inputs and copies every shape holds,
   * not the kernels' own buffers nor what else the heap holds by then.
   */
  private static IllegalStateException outOfHeap(String shape, DType docType, DType queryType, OutOfMemoryError e) {
    return new IllegalStateException("cpu: --shape '" + shape + "' with " + shortType(docType) + " documents and "
        + shortType(queryType) + " queries ran out of memory with a heap of "
        + (Runtime.getRuntime().maxMemory() >> 20) + " MiB; expected a smaller shape, or a larger -Xmx through"
        + " JAVA_OPTS", e);
  }

  static String shortType(DType t) {
    return switch (t) {
      case FLOAT32 -> "fp32";
      case FLOAT16 -> "fp16";
      case BFLOAT16 -> "bf16";
      case INT8 -> "int8";
      case FLOAT8_E4M3 -> "fp8";
      case BINARY -> "bin";
    };
  }

  private static String header(boolean fp32, boolean sgemm) {
    return String.format(Locale.ROOT, "%-22s %-5s %-5s %-7s %3s %10s%s %10s %8s %9s %8s%s", "shape Nq,Nd,Lq,Ld,d",
        "docs", "query", "backend", "thr", "fused ms",
        fp32 ? String.format(Locale.ROOT, " %10s %8s", "fp32 ms", "vs fp32") : "",
        "naive ms", "speedup", "GFLOP/s", "GB/s",
        sgemm
            ? String.format(Locale.ROOT, " %11s %11s %9s %9s", "sgemm pairs", "sgemm all", "GFLOP/s", "vs sgemm")
            : "");
  }

  private static String row(String shape, Case c, boolean fp32, boolean sgemm) {
    return String.format(Locale.ROOT, "%-22s %-5s %-5s %-7s %3d %10.3f%s %10s %8s %9.1f %8.2f%s", shape,
        shortType(c.docType()), shortType(c.queryType()), c.backend(), c.threads(), c.fusedMs(),
        fp32 ? String.format(Locale.ROOT, " %10.3f %7.2fx", c.fp32Ms(), c.fp32Ms() / c.fusedMs()) : "",
        Double.isNaN(c.naiveMs()) ? "-" : String.format(Locale.ROOT, "%.3f", c.naiveMs()),
        Double.isNaN(c.naiveMs()) ? "-" : String.format(Locale.ROOT, "%.1fx", c.naiveMs() / c.fusedMs()), c.gflops(),
        c.gbps(), sgemm ? String.format(Locale.ROOT, " %11.3f %11s %9.1f %8.2fx", c.sgemmPairsMs(),
            Double.isNaN(c.sgemmAllMs()) ? "-" : String.format(Locale.ROOT, "%.3f", c.sgemmAllMs()),
            Shapes.flops(c.shape()) / c.sgemmBestMs() / 1e6, c.sgemmBestMs() / c.fusedMs()) : "");
  }

  /**
   * Compiles both paths on a small problem of the same d and types first: a long call measured cold runs
   * partly interpreted (on-stack replacement), which made the first naive shape look slower. The problem is never
   * larger than the shape's own on any axis, nor than 2 queries and 16 documents of 64 tokens, since the heap is
   * checked for the shape alone; the naive grid runs where the small problem's fits as the shape's is checked.
   */
  private static void jitWarmUp(MaxSim maxSim, SplittableRandom rnd, DType queryType, DType docType, int[] sh,
      int threads, boolean naive) {
    int[] small = {Math.min(sh[0], 2), Math.min(sh[1], 16), Math.min(sh[2], 64), Math.min(sh[3], 64), sh[4]};
    float[] qv = Synthetic.unitValues(rnd, small[0], small[2], small[4]);
    float[] dv = Synthetic.unitValues(rnd, small[1], small[3], small[4]);
    TokenBatch q = as(TokenBatch.ofFloats(qv, small[0], small[2], small[4]), qv, queryType);
    TokenBatch d = as(TokenBatch.ofFloats(dv, small[1], small[3], small[4]), dv, docType);
    boolean naiveToo = naive && NaiveMaxSim.gridBytes(q, d) <= NAIVE_GRID_LIMIT && naiveFitsHeap(small, q, d);
    for (int i = 0; i < 200; i++) {
      maxSim.scores(q, d);
      if (naiveToo) {
        NaiveMaxSim.scores(q, d, threads);
      }
    }
  }
}
