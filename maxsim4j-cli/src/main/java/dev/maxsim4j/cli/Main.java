package dev.maxsim4j.cli;

import dev.maxsim4j.cli.plot.PlotCommand;
import dev.maxsim4j.cli.text.EncodeCommand;
import dev.maxsim4j.cli.text.IndexCommand;
import dev.maxsim4j.cli.text.RerankCommand;
import dev.maxsim4j.cli.text.SearchCommand;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;

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
        bench   time the fused kernel against the naive grid path
        plot    SVG charts from the bench tools' JSON (for docs/benchmarks.md)
        train-example  train a 384 -> 128 projection with the in-batch contrastive loss
                [--steps N] [--batch B] [--seed S] [--lr X] [--naive] [--backend NAME]
        help    this text

      options for every command that scores:
        --verbose  say which backend runs and why faster ones were passed over (on stderr)

      """;

  private Main() {}

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /** Runs a command; returns the exit status. */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    Engine.logTo(err);
    try {
      if (args.length == 0 || args[0].equals("help") || args[0].equals("--help") || args[0].equals("-h")) {
        StringBuilder help = new StringBuilder(USAGE);
        for (String usage : new String[] {DemoCommand.USAGE, EncodeCommand.USAGE, IndexCommand.USAGE,
            SearchCommand.USAGE, RerankCommand.USAGE, ScoreCommand.USAGE, BenchCommand.USAGE, PlotCommand.USAGE}) {
          help.append("  ").append(usage.replace("\n", "\n  ")).append("\n\n");
        }
        out.print(help);
        return args.length == 0 ? 2 : 0;
      }
      return switch (args[0]) {
        case "score" -> ScoreCommand.run(args, out);
        case "bench" -> BenchCommand.run(args, out);
        case "demo" -> DemoCommand.run(args, out, err);
        case "encode" -> EncodeCommand.run(args, out, err);
        case "index" -> IndexCommand.run(args, out, err);
        case "search" -> SearchCommand.run(args, out, err);
        case "rerank" -> RerankCommand.run(args, out, err);
        case "plot" -> PlotCommand.run(args, out);
        case "train-example" -> TrainExample.run(args, out);
        default -> throw new UsageException("unknown command '" + args[0] + "'; expected demo, encode, index, search, rerank, score, bench, plot, train-example or help");
      };
    } catch (UsageException e) {
      return fail(err, e, e.getMessage(), 2);
    } catch (NoSuchFileException e) {
      return fail(err, e, "error: no such file: " + e.getFile(), 1);
    } catch (AccessDeniedException e) {
      return fail(err, e, "error: permission denied: " + e.getFile(), 1);
    } catch (FileSystemException e) {
      String what = e.getFile() == null ? e.getMessage() : e.getFile() + ": " + e.getReason();
      return fail(err, e, "error: " + what, 1);
    } catch (IOException e) {
      return fail(err, e, "error: " + e, 1);
    } catch (UncheckedIOException e) {
      return fail(err, e, "error: " + e.getCause(), 1);
    } catch (IllegalArgumentException | IllegalStateException | ArithmeticException e) {
      return fail(err, e, "error: " + (e.getMessage() == null ? e : e.getMessage()), 1);
    } catch (OutOfMemoryError e) {
      return fail(err, e, "error: " + outOfMemory(e), 1);
    } catch (RuntimeException | InternalError | StackOverflowError e) {
      // a bug, or a mapped input truncated while it was read: still one line, and the trace on request
      return fail(err, e, "error: unexpected " + e + " (set MAXSIM4J_DEBUG=1 for the stack trace)", 1);
    }
  }

  /** Suggests a larger heap only where one helps: not for an array past the JVM's size limit or native memory. */
  static String outOfMemory(OutOfMemoryError e) {
    String why = String.valueOf(e.getMessage());
    if (why.contains("Java heap space") || why.contains("GC overhead")) {
      return "out of memory with a heap of " + Runtime.getRuntime().maxMemory() / (1 << 20)
          + " MiB (raise -Xmx through JAVA_OPTS)";
    }
    if (why.contains("array size exceeds")) {
      return "out of memory: an array over the JVM's limit of 2^31-1 elements was needed, which no -Xmx allows";
    }
    return "out of memory: " + why;
  }

  private static int fail(PrintStream err, Throwable e, String line, int status) {
    // a file name or file content quoted in the message must not break the one-line contract
    err.println("maxsim4j: " + line.replaceAll("\\p{Cntrl}", "?"));
    if ("1".equals(System.getenv("MAXSIM4J_DEBUG"))) {
      e.printStackTrace(err);
    }
    return status;
  }
}
