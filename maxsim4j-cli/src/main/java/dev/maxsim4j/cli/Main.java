package dev.maxsim4j.cli;

import dev.maxsim4j.cli.text.EncodeCommand;
import dev.maxsim4j.cli.text.IndexCommand;
import dev.maxsim4j.cli.text.RerankCommand;
import dev.maxsim4j.cli.text.SearchCommand;
import java.io.PrintStream;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The {@code maxsim4j} command line. Every failure a user can cause ends as one line on stderr and a
 * non-zero exit status: 2 for a bad command line, 1 for bad input or a failed run. Set
 * {@code MAXSIM4J_DEBUG=1} to see stack traces.
 */
public final class Main {
  static final String USAGE = """
      usage: maxsim4j COMMAND [OPTIONS]

      commands:
        demo    search the bundled paragraphs (real text; --synthetic: a synthetic corpus)
        encode  texts -> token embeddings (.safetensors) with all-MiniLM-L6-v2 used token-wise
        index   encode a folder of text files once, kept in FOLDER/.maxsim4j and reused
        search  rank a folder's files against a query
        rerank  order given candidate texts against a query
        score   MaxSim of query and document embeddings from .npy / .safetensors files
        quantize  float token embeddings -> int8, fp8 or 1-bit tokens with per-token scales
        train-example  train a 384 -> 128 projection with the in-batch contrastive loss
                [--steps N] [--batch B] [--seed S] [--lr X] [--naive] [--backend NAME]
        help    this text (COMMAND --help: that command's alone)

      options for every command that scores:
        --verbose  say which backend runs and why faster ones were passed over (on stderr)

      """;

  /** Lucene announces its use of the Vector API at INFO on stderr, which is for warnings and errors here. */
  private static final Logger LUCENE_VECTORS = Logger.getLogger("org.apache.lucene.internal.vectorization");

  static {
    LUCENE_VECTORS.setLevel(Level.WARNING);
  }

  private Main() {}

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /** Runs a command; returns the exit status. */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    return CommandRunner.run("maxsim4j", err, () -> {
      if (args.length == 0 || args[0].equals("help") || args[0].equals("--help") || args[0].equals("-h")) {
        StringBuilder help = new StringBuilder(USAGE);
        for (String usage : new String[] {DemoCommand.USAGE, EncodeCommand.USAGE, IndexCommand.USAGE,
            SearchCommand.USAGE, RerankCommand.USAGE, ScoreCommand.USAGE, QuantizeCommand.USAGE}) {
          help.append("  ").append(usage.replace("\n", "\n  ")).append("\n\n");
        }
        out.print(help);
        return args.length == 0 ? 2 : 0;
      }
      if (args.length == 2 && (args[1].equals("--help") || args[1].equals("-h"))) {
        String usage = usageOf(args[0]);
        if (usage != null) {
          out.print("usage: maxsim4j " + usage);
          return 0;
        }
      }
      return switch (args[0]) {
        case "demo" -> DemoCommand.run(args, out, err);
        case "encode" -> EncodeCommand.run(args, out, err);
        case "index" -> IndexCommand.run(args, out, err);
        case "search" -> SearchCommand.run(args, out, err);
        case "rerank" -> RerankCommand.run(args, out, err);
        case "score" -> ScoreCommand.run(args, out, err);
        case "quantize" -> QuantizeCommand.run(args, out);
        case "train-example" -> TrainExample.run(args, out);
        default -> throw new UsageException("unknown command '" + args[0]
            + "'; expected demo, encode, index, search, rerank, score, quantize, train-example or help"
            + (args[0].equals("bench") || args[0].equals("plot") ? " (the benchmarks: ./maxsim4j bench)" : ""));
      };
    });
  }

  /** The usage text of {@code command} ({@code maxsim4j COMMAND --help}); null for a command without one. */
  private static String usageOf(String command) {
    return switch (command) {
      case "demo" -> DemoCommand.USAGE;
      case "encode" -> EncodeCommand.USAGE;
      case "index" -> IndexCommand.USAGE;
      case "search" -> SearchCommand.USAGE;
      case "rerank" -> RerankCommand.USAGE;
      case "score" -> ScoreCommand.USAGE;
      case "quantize" -> QuantizeCommand.USAGE;
      case "train-example" -> TrainExample.USAGE;
      default -> null;
    };
  }
}
