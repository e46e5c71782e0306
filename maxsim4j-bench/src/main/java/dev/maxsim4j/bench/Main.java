package dev.maxsim4j.bench;

import dev.maxsim4j.bench.cpu.CpuBench;
import dev.maxsim4j.bench.gpu.GpuCommand;
import dev.maxsim4j.bench.gpu.GpuFdeCommand;
import dev.maxsim4j.bench.gpu.GpuScaleCommand;
import dev.maxsim4j.bench.plot.PlotCommand;
import dev.maxsim4j.bench.quality.QualityCommand;
import dev.maxsim4j.bench.retrieval.RetrievalCommand;
import dev.maxsim4j.cli.CommandRunner;
import dev.maxsim4j.cli.HelpRequested;
import dev.maxsim4j.cli.NativeWork;
import dev.maxsim4j.cli.Usage;
import dev.maxsim4j.cli.UsageException;
import java.io.IOException;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code ./maxsim4j bench} command line: the maintainers' measurements behind docs/benchmarks.md. The
 * JMH benchmarks of this module run from its shaded jar instead ({@code java -jar target/maxsim4j-benchmarks.jar}).
 * Failures end as one line on stderr, as in {@code maxsim4j}.
 */
public final class Main {
  static final String USAGE = """
      usage: ./maxsim4j bench COMMAND [OPTIONS]

      commands:
        gpu        time the GPU kernels and calls (inference; --train: forward + backward)
        gpu-scale  exact top-k at scale on the GPU: a corpus generated on the device, one streamed from pinned memory
        gpu-fde    FDE encoding on the CPU against the GPU, rows per second, checked bit for bit
        cpu        time the fused kernel against the naive grid path on the CPU
        plot       SVG charts from the JSON of gpu and cpu (for docs/benchmarks.md)
        quality    score error and top-10 agreement of compressed documents against fp32
        retrieval  known-item retrieval on real text: exact MaxSim, FDE candidates + rerank, timings
        help       this text (help COMMAND, or COMMAND --help: that command's alone)

      """;

  /** Each command's own usage text, in the order help lists them. */
  private static final Map<String, String> USAGES = new LinkedHashMap<>();

  static {
    USAGES.put("gpu", GpuCommand.USAGE);
    USAGES.put("gpu-scale", GpuScaleCommand.USAGE);
    USAGES.put("gpu-fde", GpuFdeCommand.USAGE);
    USAGES.put("cpu", CpuBench.USAGE);
    USAGES.put("plot", PlotCommand.USAGE);
    USAGES.put("quality", QualityCommand.USAGE);
    USAGES.put("retrieval", RetrievalCommand.USAGE);
  }

  private static final List<String> HELP = List.of("--help", "-h");

  private Main() {}

  public static void main(String[] args) {
    NativeWork.exitOnSignals();
    System.exit(run(args, System.out, System.err));
  }

  /** Runs a command; returns the exit status. */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    return CommandRunner.run("maxsim4j bench", out, err, () -> {
      // help COMMAND; help --help and help help are the overview, but help -h x is refused, not read as it
      boolean overview = args.length == 2 && (HELP.contains(args[1]) || args[1].equals("help"));
      if (args.length >= 2 && args[0].equals("help") && !overview) {
        if (args.length > 2 || !USAGES.containsKey(args[1])) {
          throw new UsageException("help " + String.join(" ", Arrays.copyOfRange(args, 1, args.length))
              + ": expected help or help COMMAND, COMMAND one of " + String.join(", ", USAGES.keySet()));
        }
        out.print(usage(args[1]));
        return 0;
      }
      if (args.length == 0 || args[0].equals("help") || args[0].equals("--help") || args[0].equals("-h")) {
        StringBuilder help = new StringBuilder(USAGE);
        for (String usage : USAGES.values()) {
          help.append("  ").append(usage.replace("\n", "\n  ")).append("\n\n");
        }
        out.print(help);
        return args.length == 0 ? 2 : 0;
      }
      // COMMAND --help, as every maxsim4j command takes it: first, or where the command's options expect a name
      if (USAGES.containsKey(args[0]) && args.length > 1 && HELP.contains(args[1])) {
        out.print(usage(args[0]));
        return 0;
      }
      try {
        return command(args, out);
      } catch (HelpRequested asked) {
        out.print(usage(args[0]));
        return 0;
      }
    });
  }

  /** {@code command}'s usage as its --help prints it. */
  static String usage(String command) {
    return Usage.of("./maxsim4j bench", USAGES.get(command)) + "\n";
  }

  private static int command(String[] args, PrintStream out) throws IOException {
    try {
      return dispatch(args, out);
    } catch (UsageException e) {
      throw named(args[0], e) ? e : new UsageException(args[0] + ": " + e.getMessage(), e);
    } catch (IllegalArgumentException e) {
      throw named(args[0], e) ? e : new IllegalArgumentException(args[0] + ": " + e.getMessage(), e);
    }
  }

  /**
   * Whether {@code e}'s message names {@code command} ("cpu: ...", "plot memory: ...") or needs no name (not one of
   * the commands): every refusal of a command names it, as most of their messages do themselves.
   */
  private static boolean named(String command, RuntimeException e) {
    String m = String.valueOf(e.getMessage());
    return !USAGES.containsKey(command) || m.startsWith(command + ": ") || m.startsWith(command + " ");
  }

  private static int dispatch(String[] args, PrintStream out) throws IOException {
    return switch (args[0]) {
      case "gpu" -> GpuCommand.run(args, out);
      case "gpu-scale" -> GpuScaleCommand.run(args, out);
      case "gpu-fde" -> GpuFdeCommand.run(args, out);
      case "cpu" -> CpuBench.run(args, out);
      case "plot" -> PlotCommand.run(args, out);
      case "quality" -> QualityCommand.run(args, out);
      case "retrieval" -> RetrievalCommand.run(args, out);
      default -> throw new UsageException("unknown command '" + args[0]
          + "'; expected gpu, gpu-scale, gpu-fde, cpu, plot, quality, retrieval or help");
    };
  }
}
