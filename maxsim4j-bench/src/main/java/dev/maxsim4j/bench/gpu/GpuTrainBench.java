package dev.maxsim4j.bench.gpu;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.ResidentBatch;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.bench.Shapes;
import dev.maxsim4j.bench.Synthetic;
import dev.maxsim4j.bench.Timing;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code gpu --train}: forward + backward of {@code scores.sum()} over all pairs on
 * resident bf16 inputs (CUDA events, median of 21 batches of 5 steps after 5 warm-up steps), with the
 * document gradient by the deterministic (owned) and the atomic kernel, and the op's device memory (scores,
 * argmax, dScores and the gradients in the inputs' dtype) from the library's allocator: each shape runs in
 * a fresh instance that holds only its inputs. {@code --compare train.json} (maxsim4j-bench/python/
 * torch_eager_baseline.py --train) adds PyTorch eager autograd times and its peak memory.
 */
final class GpuTrainBench {
  /** The shapes of docs/benchmarks.md's training table. */
  static final List<String> SHAPES = List.of("128,128,32,300,128", "256,256,32,300,128", "128,128,32,1030,128",
      "16,32,32,8192,128", "64,32,128,2048,128", "128,32,128,2048,128", "256,32,128,2048,128", "64,32,128,4096,128",
      "128,32,128,4096,128", "256,32,128,4096,128", "64,32,128,8192,128", "128,32,128,8192,128",
      "256,32,128,8192,128", "128,128,48,300,128", "256,256,48,300,128", "512,512,48,300,128",
      "1024,1024,48,300,128");

  private GpuTrainBench() {}

  static int run(List<String> shapes, DType dtype, String json, Map<List<Integer>, double[]> eager, PrintStream out)
      throws IOException {
    if (shapes.isEmpty()) {
      shapes = SHAPES;
    }
    StringBuilder jsonOut = new StringBuilder("[\n");
    out.printf(Locale.ROOT, "%-22s %12s %12s %10s %11s %10s %10s %8s%n", "shape Nq,Nd,Lq,Ld,d", "owned ms",
        "atomic ms", "op MiB", "driver MiB", "eager ms", "eager MiB", "speedup");
    for (int s = 0; s < shapes.size(); s++) {
      String shape = shapes.get(s);
      int[] sh = Shapes.parse("gpu", shape);
      TokenBatch q =
          Synthetic.store(dtype, Synthetic.fastUnitValues(7 + s, sh[0] * sh[2], sh[4]), sh[0], sh[2], sh[4]);
      TokenBatch d =
          Synthetic.store(dtype, Synthetic.fastUnitValues(1000 + s, sh[1] * sh[3], sh[4]), sh[1], sh[3], sh[4]);
      double owned;
      double atomic;
      long[] opBytes = new long[2];
      try (MaxSim maxSim = MaxSim.builder().backend("cuda").build();
          ResidentBatch rq = maxSim.upload(q);
          ResidentBatch rd = maxSim.upload(d)) {
        if (s == 0) {
          out.println("device: " + KernelTimer.device(maxSim) + ", " + dtype + " inputs, gradients in " + dtype);
        }
        owned = Timing.median(KernelTimer.trainingStepMillis(maxSim, rq, rd, true, true, 5, 21, 5, opBytes));
      }
      try (MaxSim maxSim = MaxSim.builder().backend("cuda").build();
          ResidentBatch rq = maxSim.upload(q);
          ResidentBatch rd = maxSim.upload(d)) {
        atomic = Timing.median(KernelTimer.trainingStepMillis(maxSim, rq, rd, false, false, 5, 21, 5, new long[1]));
      }
      double mib = opBytes[0] / (1024.0 * 1024.0);
      double driverMib = opBytes[1] / (1024.0 * 1024.0);
      double[] e = eager.get(EagerBaseline.key(shape));
      double best = Math.min(owned, atomic);
      out.printf(Locale.ROOT, "%-22s %12.4f %12.4f %10.1f %11.1f %10s %10s %8s%n", shape, owned, atomic, mib, driverMib,
          e == null || Double.isNaN(e[0]) ? (e == null ? "-" : "OOM") : String.format(Locale.ROOT, "%.4f", e[0]),
          e == null || Double.isNaN(e[1]) ? (e == null ? "-" : "OOM") : String.format(Locale.ROOT, "%.1f", e[1]),
          e == null || Double.isNaN(e[0]) ? "-" : String.format(Locale.ROOT, "%.1fx", e[0] / best));
      // eager columns only where --compare measured them; null there is an out-of-memory, as plot memory reads it
      String eagerColumns = e == null ? "" : String.format(Locale.ROOT, ", \"eager_ms\": %s, \"eager_mib\": %s",
          Double.isNaN(e[0]) ? "null" : String.format(Locale.ROOT, "%.5f", e[0]),
          Double.isNaN(e[1]) ? "null" : String.format(Locale.ROOT, "%.2f", e[1]));
      jsonOut.append(String.format(Locale.ROOT,
          "  {\"shape\": [%d, %d, %d, %d, %d], \"dtype\": \"%s\", \"owned_ms\": %.5f, \"atomic_ms\": %.5f, "
              + "\"op_mib\": %.2f, \"driver_mib\": %.2f%s},%n",
          sh[0], sh[1], sh[2], sh[3], sh[4], dtype.name().toLowerCase(Locale.ROOT), owned, atomic, mib, driverMib,
          eagerColumns));
    }
    if (json != null) {
      GpuBench.writeJsonArray(Path.of(json), jsonOut);
    }
    return 0;
  }
}
