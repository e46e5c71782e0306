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
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * {@code gpu --dtype int8|fp8|binary|binary-sym}: compressed documents on the GPU, each shape timed in the
 * same run three ways, kernel alone on resident documents (CUDA events, as {@link GpuBench}): the compressed
 * documents; the same documents dequantized and stored as bf16 (dequantize-then-bf16: the bf16 kernel over
 * what an expansion in memory would leave, the expansion itself not timed); and the bf16 kernel over the
 * original values (both with bf16 queries, the queries' values). Then the compressed call (resident documents, host
 * queries) and a top-10 call. Floors count each type's bytes, scales included: max(FLOPs / 790 TFLOP/s, bytes / 4.3
 * TB/s), FLOPs / 67 TFLOP/s (FFMA) for fp32 queries ({@link GpuBench}'s ceilings).
 */
final class GpuCompressedBench {
  private static final long ROTATION_BYTES = 180L << 20; // three times the H200's 60 MB L2

  private GpuCompressedBench() {}

  static int run(List<String> shapes, DType documentType, DType queryType, int threads, String json, PrintStream out)
      throws IOException {
    if (shapes.isEmpty()) {
      shapes = GpuBench.SHAPES;
    }
    StringBuilder jsonOut = new StringBuilder("[\n");
    try (MaxSim maxSim = MaxSim.builder().backend("cuda").threads(threads).build()) {
      out.println("device: " + KernelTimer.device(maxSim) + ", documents " + documentType + ", queries " + queryType
          + ", fp32 scores; kernel ms on resident documents");
      out.printf(Locale.ROOT, "%-22s %10s %9s %7s %12s %10s %9s %10s %10s%n", "shape Nq,Nd,Lq,Ld,d", "kernel ms",
          "floor ms", "% floor", "dequant ms", "bf16 ms", "bf16 flr", "call ms", "top-10 ms");
      for (int s = 0; s < shapes.size(); s++) {
        String shape = shapes.get(s);
        int[] sh = Shapes.parse("gpu", shape);
        float[] queryValues = Synthetic.fastUnitValues(7 + s, sh[0] * sh[2], sh[4]);
        TokenBatch q = queryType.isQuantized()
            ? TokenBatch.ofFloats(queryValues, sh[0], sh[2], sh[4]).quantize(queryType)
            : Synthetic.store(queryType, queryValues, sh[0], sh[2], sh[4]);
        // the bf16 kernels read bf16 queries: these queries' values (dequantized where compressed) in bf16
        TokenBatch qBf16 = queryType == DType.BFLOAT16 ? q
            : Synthetic.store(DType.BFLOAT16, q.toFloatArray(), sh[0], sh[2], sh[4]);
        float[] docValues = Synthetic.fastUnitValues(1000 + s, sh[1] * sh[3], sh[4]);
        TokenBatch compressed = TokenBatch.ofFloats(docValues, sh[1], sh[3], sh[4]).quantize(documentType);
        byte[] bytes = compressed.toByteArray();
        float[] scales = compressed.scales();
        long tokens = (long) sh[1] * sh[3];
        long compressedBytes = tokens * (documentType.bytesPerToken(sh[4]) + 4);
        double kernelMs = kernelMillis(maxSim, q, compressedBytes,
            c -> TokenBatch.ofBytes(documentType, bytes, scales, sh[1], sh[3], sh[4]));
        double callMs;
        double topMs;
        try (ResidentBatch rd = maxSim.upload(TokenBatch.ofBytes(documentType, bytes, scales, sh[1], sh[3], sh[4]))) {
          callMs = Timing.medianMillis(() -> maxSim.scores(q, rd), 1_000_000_000L, 200, 60);
          topMs = Timing.medianMillis(() -> maxSim.topK(q, rd, 10), 0L, 10, 30);
        }
        short[] dequantized = Synthetic.narrow(DType.BFLOAT16, compressed.toFloatArray());
        double dequantMs = kernelMillis(maxSim, qBf16, tokens * sh[4] * 2,
            c -> TokenBatch.ofHalfs(DType.BFLOAT16, dequantized, sh[1], sh[3], sh[4]));
        short[] original = Synthetic.narrow(DType.BFLOAT16, docValues);
        double bf16Ms = kernelMillis(maxSim, qBf16, tokens * sh[4] * 2,
            c -> TokenBatch.ofHalfs(DType.BFLOAT16, original, sh[1], sh[3], sh[4]));
        double queryBytes = (double) sh[0] * sh[2] * (queryType.isQuantized() ? queryType.bytesPerToken(sh[4]) + 4
            : (long) sh[4] * queryType.byteSize());
        // fp32 queries meet compressed documents in scaled FFMA, not on the tensor cores
        double peak = queryType == DType.FLOAT32 ? GpuBench.FFMA_PEAK_FLOPS : GpuBench.PEAK_FLOPS;
        double flopMs = Shapes.flops(sh) / peak * 1e3;
        double floorMs = Math.max(flopMs, (queryBytes + compressedBytes) / GpuBench.PEAK_BYTES * 1e3);
        double bf16FloorMs =
            Math.max(Shapes.flops(sh) / GpuBench.PEAK_FLOPS, Shapes.inputBytes(sh, 2) / GpuBench.PEAK_BYTES) * 1e3;
        out.printf(Locale.ROOT, "%-22s %10.4f %9.4f %6.0f%% %12.4f %10.4f %9.4f %10.4f %10.4f%n", shape, kernelMs,
            floorMs, 100 * floorMs / kernelMs, dequantMs, bf16Ms, bf16FloorMs, callMs, topMs);
        jsonOut.append(String.format(Locale.ROOT,
            "  {\"shape\": [%d, %d, %d, %d, %d], \"dtype\": \"%s\", \"query_dtype\": \"%s\", \"device\": \"cuda\", "
                + "\"fused_ms\": %.5f, \"floor_ms\": %.5f, \"dequantized_bf16_ms\": %.5f, \"bf16_ms\": %.5f, "
                + "\"bf16_floor_ms\": %.5f, \"call_ms\": %.5f, \"topk10_ms\": %.5f},\n",
            sh[0], sh[1], sh[2], sh[3], sh[4], name(documentType), name(queryType), kernelMs, floorMs, dequantMs,
            bf16Ms, bf16FloorMs, callMs, topMs));
      }
    }
    if (json != null) {
      GpuBench.writeJsonArray(Path.of(json), jsonOut);
    }
    return 0;
  }

  /**
   * The median kernel ms over copies of the documents {@code copy} makes (each its own upload), as many as
   * keep the working set above L2 (at least two).
   */
  private static double kernelMillis(MaxSim maxSim, TokenBatch q, long corpusBytes,
      Function<Integer, TokenBatch> copy) {
    int copies = (int) Math.max(2, Math.min(8, (ROTATION_BYTES + corpusBytes - 1) / corpusBytes));
    List<ResidentBatch> resident = new ArrayList<>();
    try {
      for (int c = 0; c < copies; c++) {
        resident.add(maxSim.upload(copy.apply(c)));
      }
      double[] kernel = KernelTimer.allPairsKernelMillis(maxSim, q, resident, 10, 21, 10);
      return Timing.median(kernel);
    } finally {
      resident.forEach(ResidentBatch::close);
    }
  }

  private static String name(DType t) {
    return t.name().toLowerCase(Locale.ROOT);
  }
}
