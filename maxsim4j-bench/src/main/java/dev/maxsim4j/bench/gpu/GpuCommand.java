package dev.maxsim4j.bench.gpu;

import dev.maxsim4j.DType;
import dev.maxsim4j.bench.Shapes;
import dev.maxsim4j.bench.Synthetic;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.io.AtomicOutput;
import dev.maxsim4j.internal.BackendSelector;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
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
      gpu --train [--shape ...]... [--dtype ...] [--json FILE] [--compare TRAIN-EAGER.json]
        forward + backward of scores.sum() (owned and atomic document gradient), op memory, eager autograd.""";

  private GpuCommand() {}

  public static int run(String[] argv, PrintStream out) throws IOException {
    Shapes.Split split = Shapes.take(argv);
    List<String> shapes = split.shapes();
    Args a = new Args("maxsim4j bench", "gpu", split.rest(), 1,
        Set.of("--dtype", "--threads", "--json", "--compare"), Set.of("--train"));
    shapes.forEach(s -> Shapes.parse("gpu", s));
    DType dtype = Synthetic.parseDType(a.getOr("--dtype", "bf16"));
    int threads = a.intValue("--threads", Runtime.getRuntime().availableProcessors(), 1);
    if (a.get("--json") != null) {
      // a missing folder or a clash with --compare is found before the benchmark, not after it
      AtomicOutput.check("--json", Path.of(a.get("--json")), a.get("--compare") == null ? List.of()
          : List.of(Path.of(a.get("--compare"))));
    }
    Optional<String> noGpu = BackendSelector.cudaUnavailableReason();
    if (noGpu.isPresent()) {
      throw new IllegalArgumentException("gpu: no usable GPU here (" + noGpu.get()
          + "); expected one (the CPU bench is ./maxsim4j bench cpu)");
    }
    return a.has("--train") ? GpuTrainBench.run(shapes, dtype, a.get("--json"), a.get("--compare"), out)
        : GpuBench.run(shapes, dtype, threads, a.get("--json"), a.get("--compare"), out);
  }
}
