package dev.maxsim4j.internal.cuda;

import static dev.maxsim4j.internal.cuda.plan.PairLayout.ALL_PAIRS;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.Residency;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan;
import dev.maxsim4j.internal.cuda.plan.ForwardShape;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A/B runs of forward kernels on the GPU host (scripts/gpu-ab.sh): for each shape, the all-pairs kernel
 * alone (CUDA events, the median of 21 batches of 10 back-to-back launches, documents rotated through copies
 * that together exceed three times the H200's L2) under each kernel name of {@link ForcedKernels}
 * ({@code default}: the rules). Prints one table of kernel ms, a row per shape and a column per name.
 *
 * With {@code --dtype int8|fp8|binary} the documents are those values quantized, and with
 * {@code --query-dtype} the queries (bf16 otherwise).
 *
 * <pre>AbMain [--shape Nq,Nd,Lq,Ld,d]... [--dtype T] [--query-dtype T] NAME...</pre>
 */
public final class AbMain {
  private AbMain() {}

  /** The bench's 15 shapes (docs/benchmarks.md). */
  static final List<String> SHAPES = List.of("1,1000,32,300,128", "1,1000,32,1024,128", "1,1000,128,1024,128",
      "1,1000,1024,1024,128", "1,5000,32,300,128", "1,10000,32,300,128", "32,32,32,300,128", "128,128,32,300,128",
      "1,1000,32,300,512", "1,500,32,300,1024", "1,1000,32,2048,48", "1,4000,32,2048,48", "1,1000,32,300,64",
      "1,10000,32,300,64", "16,32,32,8192,128");
  private static final long ROTATION_BYTES = 180L << 20;
  /** The documents' and queries' types: bf16, or the compressed types --dtype and --query-dtype name. */
  private static DType documentType = DType.BFLOAT16;
  private static DType queryType = DType.BFLOAT16;

  public static void main(String[] args) throws Exception {
    List<String> shapes = new ArrayList<>();
    List<String> names = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--shape") && i + 1 < args.length) {
        shapes.add(args[++i]);
      } else if (args[i].equals("--dtype") && i + 1 < args.length) {
        documentType = compressedType("--dtype", args[++i]);
      } else if (args[i].equals("--query-dtype") && i + 1 < args.length) {
        String t = args[++i];
        queryType = t.equals("fp16") ? DType.FLOAT16 : compressedType("--query-dtype", t);
      } else {
        ForcedKernels.planner(args[i]); // refuses an unknown name before any GPU work
        names.add(args[i]);
      }
    }
    if (names.isEmpty()) {
      throw new IllegalArgumentException("kernel names = none; expected at least one, e.g. default stream");
    }
    if (shapes.isEmpty()) {
      shapes = SHAPES;
    }
    double[][] ms = new double[shapes.size()][names.size()];
    for (int n = 0; n < names.size(); n++) {
      try (CudaBackend cuda = new CudaBackend(1, ForcedKernels.planner(names.get(n)))) {
        if (n == 0) {
          System.out.println(cuda.deviceDescription() + ", " + queryType + " queries, " + documentType
              + " documents, kernel ms (median batch)");
        }
        for (int s = 0; s < shapes.size(); s++) {
          int[] sh = shape(shapes.get(s));
          ForwardShape fs = new ForwardShape(ALL_PAIRS, sh[0], sh[1], 0, sh[0] * sh[1], sh[2], sh[3], sh[4], queryType,
              documentType, false, false);
          ForwardKernels.Planner planner = ForcedKernels.planner(names.get(n));
          ForwardPlan.Plan p = planner.plan(fs, cuda.capabilities());
          String copy = "";
          // as a call stages and runs it (random queries always fit)
          if (planner.halfOperands(fs, p) && planner.halfCopy(shapeOnly(queryType, sh[0], sh[2], sh[4]),
              shapeOnly(documentType, sh[1], sh[3], sh[4]), cuda.capabilities())) {
            p = planner.plan(new ForwardShape(ALL_PAIRS, sh[0], sh[1], 0, sh[0] * sh[1], sh[2], sh[3], sh[4],
                DType.FLOAT16, documentType, false, false), cuda.capabilities());
            copy = " (the queries' fp16 copy)";
          }
          System.out.println(names.get(n) + " " + shapes.get(s) + ": " + p.entry() + copy + " grid " + p.blocks()
              + " x " + p.threads() + ", " + cuda.capabilities().residentBlocks(p.module(), p.entry(), p.threads(),
              p.sharedBytes()) + " blocks per SM");
          ms[s][n] = kernelMillis(cuda, sh, s);
          System.out.printf("  %.5f ms%n", ms[s][n]); // as it comes, so a run cut short still reports it
        }
      }
    }
    StringBuilder head = new StringBuilder(String.format("%-24s", "shape"));
    for (String name : names) {
      head.append(String.format(" %14s", name));
    }
    System.out.println(head);
    for (int s = 0; s < shapes.size(); s++) {
      StringBuilder row = new StringBuilder(String.format("%-24s", shapes.get(s)));
      for (int n = 0; n < names.size(); n++) {
        row.append(String.format(" %14.5f", ms[s][n]));
      }
      System.out.println(row);
    }
  }

  private static double kernelMillis(CudaBackend cuda, int[] sh, int seed) throws Exception {
    Tokens q = tokens(new SplittableRandom(7 + seed), sh[0], sh[2], sh[4]);
    if (queryType == DType.FLOAT16) {
      q = halves(q);
    } else if (queryType != DType.BFLOAT16) {
      q = quantized(q, queryType);
    }
    // the documents' stored bytes (a compressed token's scale included), rotated over enough device copies that
    // a launch finds none of them in L2 from the launch before
    long tokenBytes = documentType.isQuantized() ? documentType.bytesPerToken(sh[4]) + 4 : 2L * sh[4];
    long corpusBytes = tokenBytes * sh[1] * sh[3];
    int copies = (int) Math.max(2, Math.min(8, (ROTATION_BYTES + corpusBytes - 1) / corpusBytes));
    List<Tokens> documents = new ArrayList<>();
    List<Residency> resident = new ArrayList<>();
    try {
      // one batch made once; each copy a distinct Tokens over the same arrays, so that each is uploaded on its own
      // (the backend holds one device copy per Tokens object)
      Tokens d = tokens(new SplittableRandom(1000 + seed), sh[1], sh[3], sh[4]);
      if (documentType != DType.BFLOAT16) {
        d = quantized(d, documentType);
      }
      for (int c = 0; c < copies; c++) {
        Tokens copy = d.withValidity(d.rowLength, d.mask);
        documents.add(copy);
        resident.add(cuda.makeResident(copy));
      }
      Tokens queries = q;
      return cuda.withDevice(device -> medianMillis(device, device.allPairsForward(queries, documents)));
    } finally {
      for (Residency r : resident) {
        r.close();
      }
    }
  }

  /**
   * The median per-launch milliseconds of 21 batches of 10 launches, after launching for 300 ms: long enough for
   * the JIT to compile the launch path, which would otherwise time the host.
   */
  private static double medianMillis(DeviceAccess device, Runnable launch) {
    for (long end = System.nanoTime() + 300_000_000L; System.nanoTime() < end; ) {
      for (int i = 0; i < 10; i++) {
        launch.run();
      }
      device.synchronize();
    }
    double[] batches = new double[21];
    for (int b = 0; b < batches.length; b++) {
      batches[b] = device.millis(() -> {
        for (int i = 0; i < 10; i++) {
          launch.run();
        }
      }) / 10;
    }
    Arrays.sort(batches);
    return batches[batches.length / 2];
  }

  /** A batch of {@code n} rows of {@code length} tokens that holds no values: what the planner asks of a call. */
  private static Tokens shapeOnly(DType type, int n, int length, int dim) {
    int[] start = new int[n];
    int[] lengths = new int[n];
    for (int i = 0; i < n; i++) {
      start[i] = i * length;
      lengths[i] = length;
    }
    long bytes = type == DType.BFLOAT16 ? 2L * n * length * dim : 0; // values "on the host", for the copy's test
    return new Tokens(type, dim, length, start, lengths, n * length, null, null, null,
        java.lang.foreign.MemorySegment.ofArray(new byte[(int) Math.min(bytes, Integer.MAX_VALUE - 8)]));
  }

  private static int[] shape(String s) {
    String[] p = s.split(",");
    if (p.length != 5) {
      throw new IllegalArgumentException("shape = " + s + "; expected Nq,Nd,Lq,Ld,d");
    }
    int[] sh = new int[5];
    for (int i = 0; i < 5; i++) {
      sh[i] = Integer.parseInt(p[i].trim());
    }
    return sh;
  }

  private static DType compressedType(String flag, String t) {
    return switch (t) {
      case "int8" -> DType.INT8;
      case "fp8" -> DType.FLOAT8_E4M3;
      case "binary" -> DType.BINARY;
      default -> throw new IllegalArgumentException(flag + " = " + t + "; expected int8, fp8 or binary (or fp16 for --query-dtype)");
    };
  }

  /** {@code t}'s values quantized to {@code type}. */
  private static Tokens quantized(Tokens t, DType type) {
    float[] v = DType.BFLOAT16.widen(t.s16);
    return dev.maxsim4j.internal.Internals.tokens(
        dev.maxsim4j.TokenBatch.ofFloats(v, t.rows, t.maxRowLength, t.dim).quantize(type));
  }

  /** {@code t}'s bf16 values as fp16 (exact for these: unit-scale values of at most 8 significant bits). */
  private static Tokens halves(Tokens t) {
    short[] bits = new short[t.s16.length];
    for (int i = 0; i < bits.length; i++) {
      bits[i] = DType.FLOAT16.narrow(DType.BFLOAT16.widen(t.s16[i]));
    }
    return new Tokens(DType.FLOAT16, t.dim, t.paddedLength, t.rowStart, t.rowLength, t.storedTokens, null, null,
        bits, null);
  }

  /** {@code rows} full rows of {@code length} tokens of unit-scale bf16 values. */
  private static Tokens tokens(SplittableRandom rnd, int rows, int length, int dim) {
    int[] start = new int[rows];
    int[] lengths = new int[rows];
    for (int i = 0; i < rows; i++) {
      start[i] = i * length;
      lengths[i] = length;
    }
    short[] bits = new short[rows * length * dim];
    for (int i = 0; i < bits.length; i++) {
      bits[i] = DType.BFLOAT16.narrow((float) (rnd.nextDouble() * 2 - 1) / (float) Math.sqrt(dim));
    }
    return new Tokens(DType.BFLOAT16, dim, length, start, lengths, rows * length, null, null, bits, null);
  }
}
