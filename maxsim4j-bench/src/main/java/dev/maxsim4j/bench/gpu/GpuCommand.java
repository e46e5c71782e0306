package dev.maxsim4j.bench.gpu;

import dev.maxsim4j.DType;
import dev.maxsim4j.bench.BenchTypes;
import dev.maxsim4j.bench.Shapes;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.UsageException;
import dev.maxsim4j.cli.io.AtomicOutput;
import dev.maxsim4j.cli.io.PathArgument;
import dev.maxsim4j.internal.BackendSelector;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** {@code gpu}: the inference bench ({@link GpuBench}) or, with {@code --train}, the training bench. */
public final class GpuCommand {
  public static final String USAGE = """
      gpu [--shape Nq,Nd,Lq,Ld,d]... [--dtype fp32|fp16|bf16] [--threads N] [--json FILE] [--compare EAGER.json]
        all-pairs forward on the GPU (default: the 15 shapes of docs/benchmarks.md; bf16): kernel ms (CUDA
        events, resident documents), whole-call ms (host and resident queries; awaited at once, and per call
        kept in flight with scoresAsync), top-10 ms, PyTorch eager ms from --compare, roofline floor and
        % of floor. --json writes one object per shape.
      gpu [--shape ...]... --dtype int8|fp8|binary|binary-sym [--query-dtype T] [--threads N] [--json FILE]
        compressed documents (queries bf16, 1-bit for binary-sym; --query-dtype: fp32, fp16, bf16, int8, fp8 or
        binary): kernel ms against the floor counted with the type's bytes and scales, beside the bf16 kernel
        on the same documents dequantized and on their original values, the call and a top-10 call.
      gpu --train [--shape ...]... [--dtype ...] [--json FILE] [--compare TRAIN-EAGER.json]
        forward + backward of scores.sum() (owned and atomic document gradient), op memory, eager autograd.""";

  private GpuCommand() {}

  public static int run(String[] argv, PrintStream out) throws IOException {
    GpuScaleCommand.oneDevice(0); // kernel timers and the documented numbers are one GPU's
    Shapes.Split split = Shapes.take(argv);
    List<String> shapes = split.shapes();
    Args a = new Args("maxsim4j bench", "gpu", split.rest(), 1,
        Set.of("--dtype", "--query-dtype", "--threads", "--json", "--compare"), Set.of("--train"));
    String dtypeName = a.getOr("--dtype", "bf16");
    boolean symmetric = BenchTypes.isSymmetric(dtypeName);
    DType dtype = symmetric ? DType.BINARY : BenchTypes.parse("gpu", "--dtype", dtypeName, BenchTypes.ALL, true);
    DType compressed = dtype.isQuantized() ? dtype : null;
    String queryName = a.get("--query-dtype");
    if (compressed == null && queryName != null) {
      throw new UsageException("gpu: --query-dtype goes with a compressed --dtype (int8, fp8, binary, binary-sym); "
          + "saw --dtype " + dtypeName);
    }
    DType queryType = compressed == null ? dtype
        : queryName != null ? BenchTypes.parse("gpu", "--query-dtype", queryName, BenchTypes.ALL, false)
        : symmetric ? DType.BINARY : DType.BFLOAT16;
    if (symmetric && queryType != DType.BINARY) {
      throw new UsageException("gpu: --dtype " + dtypeName + " times 1-bit queries, but --query-dtype is "
          + queryName + "; expected no --query-dtype, or binary (or --dtype binary for other queries)");
    }
    // the inputs are made on the heap before they go to the device: a shape past it is refused before any runs
    for (String s : shapes) {
      int[] sh = Shapes.parse("gpu", s);
      long documentValues = (long) sh[1] * sh[3] * sh[4];
      // beside the fp32 values: a 16-bit copy of the documents; compressed runs hold their bytes and scales, a copy
      // of those, the dequantized values and two bf16 copies (against dequantize-then-bf16 and the bf16 kernel)
      long copies = compressed != null ? 10 * documentValues : dtype == DType.FLOAT32 ? 0 : 2 * documentValues;
      Shapes.checkHeap("gpu", s, sh, copies, copies == 0 ? "" : ", and the documents' copies the run compares");
    }
    if (compressed != null && (a.has("--train") || a.get("--compare") != null)) {
      throw new UsageException("gpu: --dtype " + dtypeName + " times inference only; expected no --train or --compare");
    }
    if (a.has("--train") && a.get("--threads") != null) {
      // the training bench takes no thread count: a --threads there would be ignored
      throw new UsageException("gpu: --threads is not read with --train; expected it left out");
    }
    int threads = a.threads(Runtime.getRuntime().availableProcessors());
    List<Path> compare = a.get("--compare") == null ? List.of() : List.of(PathArgument.of("--compare",
        a.get("--compare")));
    if (a.get("--json") != null) {
      // a missing folder or a clash with --compare is found before the benchmark, not after it
      AtomicOutput.check("--json", AtomicOutput.target("--json", a.get("--json")), compare);
    }
    // the baseline is checked before the GPU is: a file that is no baseline is said at once, on any machine
    Map<List<Integer>, double[]> eager = compare.isEmpty() ? Map.of() : EagerBaseline.read(compare.get(0),
        a.has("--train"), shapes.isEmpty() ? (a.has("--train") ? GpuTrainBench.SHAPES : GpuBench.SHAPES) : shapes);
    Optional<String> noGpu = BackendSelector.cudaUnavailableReason();
    if (noGpu.isPresent()) {
      throw new IllegalArgumentException("gpu: no usable GPU here (" + noGpu.get()
          + "); expected one (the CPU bench is ./maxsim4j bench cpu)");
    }
    if (compressed != null) {
      return GpuCompressedBench.run(shapes, dtype, queryType, threads, a.get("--json"), out);
    }
    return a.has("--train") ? GpuTrainBench.run(shapes, dtype, a.get("--json"), eager, out)
        : GpuBench.run(shapes, dtype, threads, a.get("--json"), eager, out);
  }

}
