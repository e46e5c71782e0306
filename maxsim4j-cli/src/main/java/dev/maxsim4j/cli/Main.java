package dev.maxsim4j.cli;

import dev.maxsim4j.cli.text.EncodeCommand;
import dev.maxsim4j.cli.text.IndexCommand;
import dev.maxsim4j.cli.text.RerankCommand;
import dev.maxsim4j.cli.text.SearchCommand;
import java.io.IOException;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The {@code maxsim4j} command line. Every failure a user can cause ends as one line on stderr and a
 * non-zero exit status: 2 for a bad command line, 1 for bad input or a failed run. Set
 * {@code MAXSIM4J_DEBUG=1} to see stack traces.
 */
public final class Main {
  /** The user commands: each one's name, line in the overview, usage ({@code COMMAND --help}) and runner. */
  enum UserCommand {
    DEMO("demo", "search the bundled paragraphs (real text; --synthetic: a synthetic corpus)", DemoCommand.USAGE,
        DemoCommand::run),
    ENCODE("encode", "texts -> token embeddings (.safetensors) with all-MiniLM-L6-v2 used token-wise",
        EncodeCommand.USAGE, EncodeCommand::run),
    INDEX("index", "encode a folder of text files once, kept in FOLDER/.maxsim4j and reused", IndexCommand.USAGE,
        IndexCommand::run),
    SEARCH("search", "rank a folder's files against a query", SearchCommand.USAGE, SearchCommand::run),
    RERANK("rerank", "order given candidate texts against a query", RerankCommand.USAGE, RerankCommand::run),
    SCORE("score", "MaxSim of query and document embeddings from .npy / .safetensors files", ScoreCommand.USAGE,
        ScoreCommand::run),
    QUANTIZE("quantize", "float token embeddings -> int8, fp8 or 1-bit tokens with per-token scales",
        QuantizeCommand.USAGE, QuantizeCommand::run),
    TRAIN_EXAMPLE("train-example", "train a 384 -> 128 projection with the in-batch contrastive loss",
        TrainExample.USAGE, (args, out, err) -> TrainExample.run(args, out));

    /** A command's entry: the whole command line (its name first) and the streams; returns the exit status. */
    interface Runner {
      int run(String[] args, PrintStream out, PrintStream err) throws IOException;
    }

    final String name;
    final String summary;
    final String usage;
    final Runner runner;

    UserCommand(String name, String summary, String usage, Runner runner) {
      this.name = name;
      this.summary = summary;
      this.usage = usage;
      this.runner = runner;
    }

    static Optional<UserCommand> named(String name) {
      return Arrays.stream(values()).filter(c -> c.name.equals(name)).findFirst();
    }
  }

  /**
   * The overview {@code maxsim4j help} starts with: a line per command. Made when asked for, inside the run: it names
   * the library's backends, whose class (in another jar) may fail to load, and that failure is the run's to report.
   */
  static String overview() {
    StringBuilder s = new StringBuilder("usage: maxsim4j COMMAND [OPTIONS]\n\ncommands:\n");
    for (UserCommand c : UserCommand.values()) {
      s.append(line(c.name, c.summary));
    }
    s.append(line("help", "this text (help COMMAND, or COMMAND --help: that command's alone)"));
    return s.append("""

        options for every command that scores:
          --backend NAME  where the scoring runs, one of %s
                          (auto, the default: the fastest one this machine has)
          --verbose       say which backend runs and why faster ones were passed over (on stderr)

        """.formatted(String.join(", ", Engine.BACKENDS))).toString();
  }

  /** A command and its summary, the summaries in one column past the longest name. */
  private static String line(String name, String summary) {
    int width = Arrays.stream(UserCommand.values()).mapToInt(c -> c.name.length()).max().orElse(0) + 2;
    return "  " + name + " ".repeat(Math.max(2, width - name.length())) + summary + "\n";
  }

  private static final List<String> HELP = List.of("--help", "-h");

  static String usage(UserCommand command) {
    return Usage.of("maxsim4j", command.usage);
  }

  private Main() {}

  private static UserCommand command(String name) {
    Optional<UserCommand> command = UserCommand.named(name);
    if (command.isEmpty()) {
      throw new UsageException("unknown command '" + name + "'; expected "
          + Arrays.stream(UserCommand.values()).map(c -> c.name).collect(Collectors.joining(", ")) + " or help"
          + (name.equals("bench") || name.equals("plot") ? " (the benchmarks: ./maxsim4j bench)" : ""));
    }
    return command.get();
  }

  public static void main(String[] args) {
    NativeWork.exitOnSignals();
    System.exit(run(args, System.out, System.err));
  }

  /** Runs a command; returns the exit status. */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    return CommandRunner.run("maxsim4j", out, err, () -> {
      // help's own help is the overview
      if (args.length == 0 || HELP.contains(args[0]) || (args[0].equals("help") && (args.length == 1
          || args.length == 2 && (HELP.contains(args[1]) || args[1].equals("help"))))) {
        StringBuilder help = new StringBuilder(overview());
        for (UserCommand c : UserCommand.values()) {
          help.append("  ").append(c.usage.replace("\n", "\n  ")).append("\n\n");
        }
        out.print(help);
        return args.length == 0 ? 2 : 0;
      }
      if (args[0].equals("help")) { // help COMMAND, as COMMAND --help
        if (args.length > 2) {
          throw new UsageException("help takes one command name, got " + (args.length - 1) + "; expected help or"
              + " help COMMAND");
        }
        out.println(usage(command(args[1])));
        return 0;
      }
      UserCommand command = command(args[0]);
      try {
        return command.runner.run(args, out, err);
      } catch (HelpRequested asked) {
        out.println(usage(command));
        return 0;
      } catch (UsageException e) {
        // a check shared by several commands (an output path, a file's tensors) does not know which one it serves
        String prefix = command.name + ": ";
        if (e.getMessage() == null || e.getMessage().startsWith(prefix)) {
          throw e;
        }
        throw new UsageException(prefix + e.getMessage(), e);
      }
    });
  }
}
