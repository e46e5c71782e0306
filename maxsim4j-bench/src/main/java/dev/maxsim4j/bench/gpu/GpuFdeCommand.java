package dev.maxsim4j.bench.gpu;

import dev.maxsim4j.DType;
import dev.maxsim4j.FixedDimensionalEncoder;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.bench.BenchTypes;
import dev.maxsim4j.bench.Synthetic;
import dev.maxsim4j.bench.Timing;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.UsageException;
import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.internal.BackendSelector;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/** {@code gpu-fde}: FDE encoding on the CPU encoder against the GPU path, in rows per second, bit for bit checked. */
public final class GpuFdeCommand {
  public static final String USAGE = """
      gpu-fde [--documents N] [--length L] [--queries N] [--query-length L] [--dim D] [--fde 5:20:8,3:8:16]
              [--dtype fp32|fp16|bf16] [--cpu-rows N] [--repeat R] [--seed S]
        FDE encodings of random unit tokens (default 10000 documents of 300 x 128 and 10000 queries of 32 x 128,
        fp32) for each bits:repetitions:projection[:final] of --fde: rows per second of the encoder on the CPU (all
        cores, over the first --cpu-rows rows, default 1000) and of MaxSim.encodeDocuments / encodeQueries on GPU 0
        (the median of --repeat calls, default 3, after one warm-up call), and whether the GPU's encodings of those
        rows equal the CPU's bit for bit.""";

  private GpuFdeCommand() {}

  public static int run(String[] argv, PrintStream out) {
    Args a = new Args("maxsim4j bench", "gpu-fde", argv, 1, Set.of("--documents", "--length", "--queries",
        "--query-length", "--dim", "--fde", "--dtype", "--cpu-rows", "--repeat", "--seed"), Set.of());
    int documents = a.intValue("--documents", 10_000, 1);
    int length = a.intValue("--length", 300, 1);
    int queries = a.intValue("--queries", 10_000, 1);
    int queryLength = a.intValue("--query-length", 32, 1);
    int dim = a.intValue("--dim", 128, 1);
    int cpuRows = a.intValue("--cpu-rows", 1000, 1);
    int repeat = a.intValue("--repeat", 3, 1, 100_000);
    long seed = a.intValue("--seed", 1, 0);
    DType dtype = BenchTypes.parse("gpu-fde", "--dtype", a.getOr("--dtype", "fp32"), BenchTypes.FLOATS, false);
    List<Named> encoders = new ArrayList<>();
    String fdeList = a.getOr("--fde", "5:20:8,3:8:16");
    // -1: an empty entry, even a last one, is an error rather than dropped
    for (String spec : fdeList.split(",", -1)) {
      encoders.add(new Named(spec.strip(), encoder(fdeList, spec.strip(), dim)));
    }
    for (int[] sized : new int[][] {{documents, length}, {queries, queryLength}}) {
      // divided, not multiplied: rows and a length near 2^31 each wrapped their product past a long
      if (sized[0] > (Integer.MAX_VALUE - 8) / ((long) sized[1] * dim)) {
        throw new UsageException("gpu-fde: " + Counts.of(sized[0], "row") + " of " + sized[1] + " x " + dim
            + " values is more than one Java array holds; expected fewer rows");
      }
    }
    Optional<String> noGpu = BackendSelector.cudaUnavailableReason();
    if (noGpu.isPresent()) {
      throw new IllegalArgumentException("gpu-fde: no usable GPU here (" + noGpu.get() + "); expected one");
    }
    GpuScaleCommand.oneDevice(0);
    TokenBatch docs = batch(seed, dtype, documents, length, dim);
    TokenBatch qs = batch(seed + 1, dtype, queries, queryLength, dim);
    out.printf(Locale.ROOT, "%-10s %-9s %6s %5s %8s %13s %13s %9s %6s%n", "fde", "side", "rows", "L", "dim",
        "cpu rows/s", "gpu rows/s", "speed-up", "equal");
    try (MaxSim gpu = MaxSim.builder().backend("cuda").build()) {
      for (Named e : encoders) {
        row(out, e, "documents", docs, length, Math.min(cpuRows, documents), repeat, gpu, dtype, seed);
        row(out, e, "queries", qs, queryLength, Math.min(cpuRows, queries), repeat, gpu, dtype, seed + 1);
      }
      out.println("on " + gpu.backendInfo() + "; CPU: " + Runtime.getRuntime().availableProcessors() + " threads");
    }
    return 0;
  }

  /** An encoder and the parameters it was given as. */
  private record Named(String spec, FixedDimensionalEncoder encoder) {}

  private static void row(PrintStream out, Named named, String side, TokenBatch batch, int length,
      int cpuRows, int repeat, MaxSim gpu, DType dtype, long seed) {
    boolean documents = side.equals("documents");
    FixedDimensionalEncoder e = named.encoder();
    TokenBatch head = batch(seed, dtype, cpuRows, length, batch.dim()); // the batch's first rows: the same seed
    float[][] cpu = documents ? e.encodeDocuments(head) : e.encodeQueries(head); // also warms the JIT up
    long t0 = System.nanoTime();
    cpu = documents ? e.encodeDocuments(head) : e.encodeQueries(head);
    double cpuSeconds = (System.nanoTime() - t0) / 1e9;
    float[][][] gpuRows = new float[1][][];
    Runnable call = () -> gpuRows[0] = documents ? gpu.encodeDocuments(e, batch) : gpu.encodeQueries(e, batch);
    double gpuMillis = Timing.medianMillis(call, 0, 1, repeat);
    boolean equal = true;
    for (int i = 0; i < cpuRows; i++) {
      equal &= Arrays.equals(cpu[i], gpuRows[0][i]);
    }
    double cpuRate = cpuRows / cpuSeconds;
    double gpuRate = batch.size() / (gpuMillis / 1e3);
    out.printf(Locale.ROOT, "%-10s %-9s %6d %5d %8d %13.0f %13.0f %8.0fx %6s%n", named.spec(), side, batch.size(),
        length, batch.dim(), cpuRate, gpuRate, gpuRate / cpuRate, equal ? "yes" : "NO");
  }

  /** Rows of random unit tokens: the first rows of a larger batch of the same seed are this batch. */
  private static TokenBatch batch(long seed, DType dtype, int rows, int length, int dim) {
    return Synthetic.store(dtype, Synthetic.fastUnitValues(seed, rows * length, dim), rows, length, dim);
  }

  private static FixedDimensionalEncoder encoder(String list, String spec, int dim) {
    String[] f = spec.split(":", -1);
    try {
      if (f.length < 3 || f.length > 4) {
        throw new NumberFormatException();
      }
      return FixedDimensionalEncoder.builder(dim).simHashBits(Args.parseInt(f[0])).repetitions(
          Args.parseInt(f[1])).projectionDim(Args.parseInt(f[2]))
          .finalDim(f.length == 4 ? Args.parseInt(f[3]) : 0).build();
    } catch (NumberFormatException e) {
      throw new UsageException("gpu-fde: --fde '" + list + "': '" + spec + "'; expected"
          + " bits:repetitions:projection[:final], e.g. 5:20:8");
    } catch (IllegalArgumentException e) {
      throw new UsageException("gpu-fde: --fde '" + spec + "': " + e.getMessage());
    }
  }
}
