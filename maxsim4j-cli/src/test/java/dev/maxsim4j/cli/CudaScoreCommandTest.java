package dev.maxsim4j.cli;

import static dev.maxsim4j.cli.QuantizedFiles.codes;
import static dev.maxsim4j.cli.QuantizedFiles.gaussians;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.Npy;
import dev.maxsim4j.cli.io.SafeTensors;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code score --backend cuda} on files: every document type (fp32, bf16, int8, fp8, 1-bit) packed with a mask and
 * ragged rows, against fp32 and bf16 queries of 32 tokens at d = 33 and 128 (a width the tensor-core kernels take
 * with bf16 queries); all-pairs scores agree with the float64 reference to fp32 accuracy, and the top-k runs of the
 * file and of a folder of shards rank as the CPU backend's do.
 */
@Tag("gpu")
@ExtendWith(CudaScoreCommandTest.RequiresCuda.class)
class CudaScoreCommandTest {
  private static final DType[] TYPES = {DType.FLOAT32, DType.BFLOAT16, DType.INT8, DType.FLOAT8_E4M3, DType.BINARY};
  private static final int DOCS = 600;
  private static final int QUERIES = 3;
  private static final int QUERY_TOKENS = 32;
  private static final int K = 10;

  /** Fresh every run; a failure names it, and {@code -Dfuzz.seed} replays it. */
  private static final long SEED = Long.getLong("fuzz.seed", new SplittableRandom().nextLong());

  @TempDir Path dir;
  private final SplittableRandom rnd = new SplittableRandom(SEED);

  /** Enables the tests only where the CUDA backend can run (asked once), saying why not elsewhere. */
  static final class RequiresCuda implements ExecutionCondition {
    private static final ConditionEvaluationResult RESULT = probe();

    private static ConditionEvaluationResult probe() {
      try (MaxSim cuda = MaxSim.builder().backend("cuda").build()) {
        return ConditionEvaluationResult.enabled("a CUDA device is present: " + cuda.backendInfo());
      } catch (IllegalStateException e) {
        return ConditionEvaluationResult.disabled("GPU test skipped: " + e.getMessage());
      }
    }

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
      return RESULT;
    }
  }

  @Test
  void everyDocumentTypeScoresAndRanksOnTheGpuAsOnTheCpu() throws IOException {
    for (DType type : TYPES) {
      for (int d : new int[] {33, 128}) {
        int[] offsets = new int[DOCS + 1];
        for (int i = 0; i < DOCS; i++) {
          offsets[i + 1] = offsets[i] + 1 + rnd.nextInt(i % 7 == 0 ? 1 : 80); // ragged, L = 1 included
        }
        int tokens = offsets[DOCS];
        boolean[] mask = new boolean[tokens];
        for (int t = 0; t < tokens; t++) {
          mask[t] = offsets[5] <= t && t < offsets[6] ? false : rnd.nextInt(6) != 0; // row 5: all masked
        }
        Map<String, NdArray> file = new LinkedHashMap<>();
        TokenBatch docs = documents(type, d, offsets, file);
        file.put("mask", new NdArray("m", NdArray.ElementType.BOOL, new long[] {tokens}, null, null, mask));
        long[] o = Arrays.stream(offsets).asLongStream().toArray();
        file.put("offsets", NdArray.ofSegment("o", NdArray.ElementType.I64, new long[] {o.length},
            MemorySegment.ofArray(o)));
        SafeTensors.write(dir.resolve("all.safetensors"), file);
        docs = docs.withMask(mask);
        Path shards = Files.createDirectories(dir.resolve("shards-" + type + "-" + d));
        writeShards(shards, file, offsets, new int[] {0, 1, 300, DOCS});
        for (boolean bf16Queries : new boolean[] {false, true}) {
          String what = type + " documents, d=" + d + ", " + (bf16Queries ? "bf16" : "fp32") + " queries (seed "
              + SEED + "L)";
          TokenBatch queries = queries(bf16Queries, d);
          String q = dir.resolve(bf16Queries ? "q-bf16.safetensors" : "q-fp32.safetensors").toString();
          List<String> bits = type == DType.BINARY ? List.of("--docs-bits", String.valueOf(d)) : List.of();
          CliRun all = run(bits, "score", "--backend", "cuda", "--queries", q, "--docs", dir.resolve("all.safetensors")
              .toString(), "--out", dir.resolve("s.npy").toString());
          assertEquals(0, all.status(), what + ": " + all.err());
          float[] scores = Npy.read(dir.resolve("s.npy")).floats();
          assertEquals(QUERIES * DOCS, scores.length, what);
          double[][] reference = QuantizedFiles.reference(queries, docs);
          for (int i = 0; i < QUERIES; i++) {
            for (int j = 0; j < DOCS; j++) {
              QuantizedFiles.assertClose(reference[i][j], scores[i * DOCS + j], queries, i, docs, j,
                  what + " [" + i + ", " + j + "]");
            }
          }
          assertEquals(-1e9f, scores[5], 0f, what + ": the all-masked document");
          List<String> cpu = topK(bits, "cpu", q, dir.resolve("all.safetensors"), what);
          assertSameRanking(what + ", one file", cpu, topK(bits, "cuda", q, dir.resolve("all.safetensors"), what),
              reference);
          assertSameRanking(what + ", shards", cpu, topK(bits, "cuda", q, shards, what), reference);
        }
      }
    }
  }

  /** The documents' tensors into {@code file} (embeddings, and scales where quantized) and the same values batched. */
  private TokenBatch documents(DType type, int d, int[] offsets, Map<String, NdArray> file) {
    int tokens = offsets[offsets.length - 1];
    switch (type) {
      case FLOAT32 -> {
        float[] v = gaussians(rnd, tokens * d);
        file.put("embeddings", NdArray.ofFloats("e", new long[] {tokens, d}, v));
        return TokenBatch.packedFloats(v, offsets, d);
      }
      case BFLOAT16 -> {
        short[] v = bf16(gaussians(rnd, tokens * d));
        file.put("embeddings", NdArray.ofSegment("e", NdArray.ElementType.BF16, new long[] {tokens, d},
            MemorySegment.ofArray(v)));
        return TokenBatch.packedHalfs(DType.BFLOAT16, v, offsets, d);
      }
      default -> {
        byte[] c = codes(rnd, type, tokens, d);
        float[] s = QuantizedFiles.scales(rnd, tokens);
        file.put("embeddings", NdArray.ofSegment("e", TokenType.elementType(type),
            new long[] {tokens, type.bytesPerToken(d)}, MemorySegment.ofArray(c)));
        file.put("scales", NdArray.ofFloats("s", new long[] {tokens}, s));
        return TokenBatch.packedBytes(type, c, s, offsets, d);
      }
    }
  }

  /** Rows cuts[s] to cuts[s + 1] of the packed {@code file} as shard s of the folder. */
  private static void writeShards(Path folder, Map<String, NdArray> file, int[] offsets, int[] cuts)
      throws IOException {
    for (int s = 0; s + 1 < cuts.length; s++) {
      int t0 = offsets[cuts[s]];
      int t1 = offsets[cuts[s + 1]];
      Map<String, NdArray> shard = new LinkedHashMap<>();
      for (var e : file.entrySet()) {
        NdArray a = e.getValue();
        if (e.getKey().equals("offsets")) {
          long[] o = new long[cuts[s + 1] - cuts[s] + 1];
          for (int i = 0; i < o.length; i++) {
            o[i] = offsets[cuts[s] + i] - t0;
          }
          shard.put("offsets", NdArray.ofSegment("o", NdArray.ElementType.I64, new long[] {o.length},
              MemorySegment.ofArray(o)));
        } else {
          long[] shape = a.shape().clone();
          long row = a.byteSize() / shape[0];
          shape[0] = t1 - t0;
          shard.put(e.getKey(), NdArray.ofSegment(e.getKey(), a.type(), shape,
              a.segment().asSlice(t0 * row, (t1 - t0) * row)));
        }
      }
      SafeTensors.write(folder.resolve("part-" + s + ".safetensors"), shard);
    }
  }

  /** Queries of 32 tokens, some masked, as q-fp32.safetensors or q-bf16.safetensors, and the same values batched. */
  private TokenBatch queries(boolean bf16, int d) throws IOException {
    float[] v = gaussians(rnd, QUERIES * QUERY_TOKENS * d);
    boolean[] mask = new boolean[QUERIES * QUERY_TOKENS];
    for (int t = 0; t < mask.length; t++) {
      mask[t] = t % QUERY_TOKENS < 20 || rnd.nextBoolean();
    }
    Map<String, NdArray> file = new LinkedHashMap<>();
    TokenBatch batch;
    if (bf16) {
      short[] h = bf16(v);
      file.put("embeddings", NdArray.ofSegment("q", NdArray.ElementType.BF16, new long[] {QUERIES, QUERY_TOKENS, d},
          MemorySegment.ofArray(h)));
      batch = TokenBatch.ofHalfs(DType.BFLOAT16, h, QUERIES, QUERY_TOKENS, d);
    } else {
      file.put("embeddings", NdArray.ofFloats("q", new long[] {QUERIES, QUERY_TOKENS, d}, v));
      batch = TokenBatch.ofFloats(v, QUERIES, QUERY_TOKENS, d);
    }
    file.put("mask", new NdArray("m", NdArray.ElementType.BOOL, new long[] {QUERIES, QUERY_TOKENS}, null, null,
        mask));
    SafeTensors.write(dir.resolve(bf16 ? "q-bf16.safetensors" : "q-fp32.safetensors"), file);
    return batch.withMask(mask);
  }

  private CliRun run(List<String> bits, String... args) {
    List<String> a = new ArrayList<>(List.of(args));
    a.addAll(bits);
    return CliRun.of(a.toArray(String[]::new));
  }

  /** The run file's lines of {@code score --top-k} on {@code backend}. */
  private List<String> topK(List<String> bits, String backend, String queries, Path docs, String what)
      throws IOException {
    Path out = dir.resolve("run-" + backend + ".tsv");
    CliRun r = run(bits, "score", "--backend", backend, "--queries", queries, "--docs", docs.toString(), "--top-k",
        String.valueOf(K), "--out-run", out.toString());
    assertEquals(0, r.status(), what + ", " + backend + ": " + r.err());
    return Files.readAllLines(out);
  }

  /**
   * Each query's K lines on the GPU: documents whose reference scores are within fp32 accuracy of the CPU's at the
   * same rank (near-ties may swap), each GPU score within that of its document's reference.
   */
  private static void assertSameRanking(String what, List<String> cpu, List<String> gpu, double[][] reference) {
    assertEquals(QUERIES * K, cpu.size(), what + ": CPU run lines");
    assertEquals(cpu.size(), gpu.size(), what + ": run lines");
    for (int line = 0; line < cpu.size(); line++) {
      String[] c = cpu.get(line).split("\t");
      String[] g = gpu.get(line).split("\t");
      assertEquals(c[0], g[0], what + ": query of line " + line);
      assertEquals(c[2], g[2], what + ": rank of line " + line);
      int query = Integer.parseInt(c[0]);
      double expected = reference[query][Integer.parseInt(c[1])];
      double got = reference[query][Integer.parseInt(g[1])];
      double tolerance = 1e-4 * Math.max(1, Math.abs(expected));
      assertEquals(expected, got, tolerance, what + ": the document at line " + line + ": " + gpu.get(line));
      assertEquals(got, Float.parseFloat(g[3]), tolerance, what + ": the score at line " + line);
      assertTrue(Float.parseFloat(g[3]) > -1e9f, what + ": an empty document ranked");
    }
  }

  /** Round to nearest even bf16 bits. */
  private static short[] bf16(float[] v) {
    short[] h = new short[v.length];
    for (int i = 0; i < v.length; i++) {
      int b = Float.floatToRawIntBits(v[i]);
      h[i] = (short) ((b + 0x7FFF + ((b >>> 16) & 1)) >>> 16);
    }
    return h;
  }
}
