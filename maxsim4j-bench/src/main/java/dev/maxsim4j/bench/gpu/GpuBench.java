package dev.maxsim4j.bench.gpu;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.ResidentBatch;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.bench.Shapes;
import dev.maxsim4j.bench.Synthetic;
import dev.maxsim4j.bench.Timing;
import dev.maxsim4j.cli.io.AtomicOutput;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * {@code gpu}: all-pairs forward on device-resident documents. Times per shape: the
 * kernel alone (CUDA events, batches of back-to-back launches, median batch, documents rotated through
 * enough copies that the working set exceeds L2); the whole call as a Java caller sees it
 * ({@code scores(queries, resident)}: query upload, launch, score download; median of 60 after at least
 * a second of warm-up, so the call path is JIT-compiled as in a long-running caller); the same call with
 * the queries uploaded once too ("call rq"); the same as asynchronous calls kept in flight, 100 submitted
 * back to back before the last is awaited ("async rq", per call; median of 5 rounds); and a top-10 call. With
 * {@code --compare eager.json} (written by maxsim4j-bench/python/torch_eager_baseline.py) the table gains
 * PyTorch eager times. Floor = max(FLOPs / 790 TFLOP/s, bytes / 4.3 TB/s), the H200's measured ceilings.
 */
public final class GpuBench {
  /** The shapes of docs/benchmarks.md's GPU table. */
  static final List<String> SHAPES = List.of("1,1000,32,300,128", "1,1000,32,1024,128", "1,1000,128,1024,128",
      "1,1000,1024,1024,128", "1,5000,32,300,128", "1,10000,32,300,128", "32,32,32,300,128", "128,128,32,300,128",
      "1,1000,32,300,512", "1,500,32,300,1024", "1,1000,32,2048,48", "1,4000,32,2048,48", "1,1000,32,300,64",
      "1,10000,32,300,64", "16,32,32,8192,128");
  /** Per-call goals on the H200 (ms, resident bf16 inputs), by shape of {@link #SHAPES}. */
  public static final Map<String, Double> PER_CALL_GOALS = Map.ofEntries(Map.entry("1,1000,32,300,128", 0.024),
      Map.entry("1,1000,32,1024,128", 0.068), Map.entry("1,1000,128,1024,128", 0.068),
      Map.entry("1,1000,1024,1024,128", 0.391), Map.entry("1,5000,32,300,128", 0.099),
      Map.entry("1,10000,32,300,128", 0.198), Map.entry("32,32,32,300,128", 0.013),
      Map.entry("128,128,32,300,128", 0.152), Map.entry("1,1000,32,300,512", 0.079),
      Map.entry("1,500,32,300,1024", 0.079), Map.entry("1,1000,32,2048,48", 0.051),
      Map.entry("1,4000,32,2048,48", 0.203), Map.entry("1,1000,32,300,64", 0.015),
      Map.entry("1,10000,32,300,64", 0.099), Map.entry("16,32,32,8192,128", 0.121));
  static final double PEAK_FLOPS = 790e12;
  /**
   * The compute ceiling of fp32 operands, which run in FFMA on the CUDA cores, not on the tensor cores: the H100's
   * and H200's datasheet fp32 figure (not measured here), so that an fp32 run's floor is not the bf16 one.
   */
  static final double FFMA_PEAK_FLOPS = 67e12;
  /** Calls kept in flight: rounds of this many, per shape (pipelinedMillisPerCall). */
  private static final int PIPELINED_CALLS = 100;
  private static final int PIPELINED_ROUNDS = 5;
  static final double PEAK_BYTES = 4.3e12;
  private static final long ROTATION_BYTES = 180L << 20; // three times the H200's 60 MB L2

  private GpuBench() {}

  static int run(List<String> shapes, DType dtype, int threads, String json, Map<List<Integer>, double[]> eager,
      PrintStream out) throws IOException {
    if (shapes.isEmpty()) {
      shapes = SHAPES;
    }
    StringBuilder jsonOut = new StringBuilder("[\n");
    try (MaxSim maxSim = MaxSim.builder().backend("cuda").threads(threads).build()) {
      out.println("device: " + KernelTimer.device(maxSim) + ", documents " + dtype + ", queries " + dtype
          + ", fp32 scores");
      out.printf(Locale.ROOT, "%-22s %10s %10s %10s %12s %10s %10s %8s %9s %7s%n", "shape Nq,Nd,Lq,Ld,d",
          "kernel ms", "call ms", "call rq ms", "async rq ms", "top-10 ms", "eager ms", "speedup", "floor ms",
          "% floor");
      for (int s = 0; s < shapes.size(); s++) {
        String shape = shapes.get(s);
        int[] sh = Shapes.parse("gpu", shape);
        TokenBatch q =
            Synthetic.store(dtype, Synthetic.fastUnitValues(7 + s, sh[0] * sh[2], sh[4]), sh[0], sh[2], sh[4]);
        float[] docValues = Synthetic.fastUnitValues(1000 + s, sh[1] * sh[3], sh[4]);
        long corpusBytes = (long) docValues.length * dtype.byteSize();
        // at least two: calls kept in flight overlap on two streams, and two calls reading the same copy at
        // once would share its DRAM reads through L2, which is batching, not a call's cost
        int copies = (int) Math.max(2, Math.min(8, (ROTATION_BYTES + corpusBytes - 1) / corpusBytes));
        List<ResidentBatch> resident = new ArrayList<>();
        try {
          short[] bits = dtype == DType.FLOAT32 ? null : Synthetic.narrow(dtype, docValues);
          for (int c = 0; c < copies; c++) {
            TokenBatch d = bits == null ? TokenBatch.ofFloats(docValues, sh[1], sh[3], sh[4])
                : TokenBatch.ofHalfs(dtype, bits, sh[1], sh[3], sh[4]);
            resident.add(maxSim.upload(d));
          }
          double[] kernel = KernelTimer.allPairsKernelMillis(maxSim, q, resident, 10, 21, 10);
          double kernelMs = Timing.median(kernel);
          // the call path (FFM downcalls, staging) must be JIT-compiled like in a long-running caller:
          // at least a second and 200 calls of warm-up (10 calls measured it half-interpreted)
          int[] next = {0};
          Runnable scoresCall = () -> maxSim.scores(q, resident.get(next[0]++ % copies));
          double callMs = Timing.medianMillis(scoresCall, 1_000_000_000L, 200, 60);
          // the same with the queries resident too (uploaded once, as the documents are)
          double residentCallMs;
          double asyncMs;
          try (ResidentBatch rq = maxSim.upload(q)) {
            residentCallMs = Timing.medianMillis(scoresCall, 200_000_000L, 100, 60);
            asyncMs = pipelinedMillisPerCall(() -> maxSim.scoresAsync(q, resident.get(next[0]++ % copies)));
          }
          // top-10 selected on the device, the whole call (only Nq x 10 results come back)
          double topMs = Timing.medianMillis(() -> maxSim.topK(q, resident.get(next[0]++ % copies), 10), 0L, 10, 30);
          double flops = Shapes.flops(sh);
          double bytes = Shapes.inputBytes(sh, dtype.byteSize());
          double peak = dtype == DType.FLOAT32 ? FFMA_PEAK_FLOPS : PEAK_FLOPS;
          double floorMs = Math.max(flops / peak, bytes / PEAK_BYTES) * 1e3;
          double[] e = eager.get(EagerBaseline.key(shape));
          Double eagerMs = e == null || Double.isNaN(e[0]) ? null : e[0];
          out.printf(Locale.ROOT, "%-22s %10.4f %10.4f %10.4f %12.4f %10.4f %10s %8s %9.4f %6.0f%%%n", shape, kernelMs,
              callMs, residentCallMs, asyncMs, topMs,
              eagerMs == null ? "-" : String.format(Locale.ROOT, "%.4f", eagerMs),
              eagerMs == null ? "-" : String.format(Locale.ROOT, "%.1fx", eagerMs / kernelMs), floorMs,
              100 * floorMs / kernelMs);
          jsonOut.append(String.format(Locale.ROOT,
              "  {\"shape\": [%d, %d, %d, %d, %d], \"dtype\": \"%s\", \"device\": \"cuda\", \"fused_ms\": %.5f, "
                  + "\"call_ms\": %.5f, \"call_resident_queries_ms\": %.5f, \"async_resident_queries_ms\": %.5f, "
                  + "\"topk10_ms\": %.5f, \"naive_ms\": %s, "
                  + "\"floor_ms\": %.5f, \"gflops\": %.1f, "
                  + "\"copies\": %d},\n",
              sh[0], sh[1], sh[2], sh[3], sh[4], dtype.name().toLowerCase(Locale.ROOT), kernelMs, callMs,
              residentCallMs, asyncMs, topMs,
              eagerMs == null ? "null" : String.format(Locale.ROOT, "%.5f", eagerMs), floorMs, flops / kernelMs / 1e6,
              copies));
        } finally {
          resident.forEach(ResidentBatch::close);
        }
      }
    }
    if (json != null) {
      writeJsonArray(Path.of(json), jsonOut);
    }
    return 0;
  }

  /**
   * Milliseconds per call of {@code submit} kept in flight: rounds of {@value #PIPELINED_CALLS} calls
   * submitted back to back, the last one awaited (calls complete in order), after a warm-up of 0.2 s;
   * the median of {@value #PIPELINED_ROUNDS} rounds, per call.
   */
  private static double pipelinedMillisPerCall(Supplier<CompletableFuture<float[][]>> submit) {
    long warmEnd = System.nanoTime() + 200_000_000L;
    while (System.nanoTime() < warmEnd) {
      submit.get().join();
    }
    double[] perCall = new double[PIPELINED_ROUNDS];
    for (int r = 0; r < PIPELINED_ROUNDS; r++) {
      long t0 = System.nanoTime();
      CompletableFuture<float[][]> last = null;
      for (int i = 0; i < PIPELINED_CALLS; i++) {
        last = submit.get();
      }
      last.join();
      perCall[r] = (System.nanoTime() - t0) / 1e6 / PIPELINED_CALLS;
    }
    Arrays.sort(perCall);
    return perCall[PIPELINED_ROUNDS / 2];
  }

  /** Writes objects collected as {@code "[\n" + "  {...},\n"...} as a JSON array (the last comma dropped). */
  static void writeJsonArray(Path file, StringBuilder objects) throws IOException {
    int last = objects.lastIndexOf(",");
    if (last > 0) {
      objects.deleteCharAt(last);
    }
    AtomicOutput.writeString("--json", file, List.of(), objects.append("]\n").toString());
  }

}
