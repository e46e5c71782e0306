package dev.maxsim4j.cli;

import dev.maxsim4j.cli.io.GivenFiles;
import dev.maxsim4j.cli.io.MappedFiles;
import dev.maxsim4j.cli.io.Printable;
import dev.maxsim4j.cli.io.RunMemory;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.lucene.index.CorruptIndexException;

/**
 * Runs one command of a command-line program so that every failure a user can cause ends as one line on
 * stderr and a non-zero exit status: 2 for a bad command line, 1 for bad input or a failed run. Set
 * {@code MAXSIM4J_DEBUG=1} to see stack traces. Shared by {@code maxsim4j} and {@code maxsim4j bench}, so
 * both report errors alike.
 */
public final class CommandRunner {
  /** A command: runs and returns its exit status. */
  @FunctionalInterface
  public interface Command {
    int run() throws IOException;
  }

  /**
   * Lucene announces its use of the Vector API at INFO on stderr, which is for warnings and errors here (held in a
   * field: the logging framework keeps only weak references to loggers, and would drop the level with one).
   */
  private static final Logger LUCENE_VECTORS = Logger.getLogger("org.apache.lucene.internal.vectorization");

  static {
    LUCENE_VECTORS.setLevel(Level.WARNING);
    OneLineLogs.install();
  }

  private CommandRunner() {}

  /**
   * Runs {@code command}, which writes its results to {@code out}; a failure is printed as {@code program: message}
   * on {@code err}, and so is a write to {@code out} that failed (a full disk), which a {@link PrintStream} only
   * records; where {@code out} is the process's standard output, a pipe or socket whose reader closed it, the run
   * ends quietly with {@value #CLOSED_PIPE} unless it failed otherwise (its work done: nothing stops it earlier).
   */
  public static int run(String program, PrintStream out, PrintStream err, Command command) {
    Map<Path, MappedFiles.Snapshot> mapped = new ConcurrentHashMap<>(); // this run's, apart from other threads'
    GivenFiles given = new GivenFiles();
    try {
      int status = Engine.reportingTo(err, () -> MappedFiles.recordedIn(mapped, () -> GivenFiles.recordedIn(given,
          () -> RunMemory.freedAfter(command::run))));
      // a run whose inputs changed fails though it printed its results (its files were refused as they were moved)
      MappedFiles.requireUnchanged(mapped);
      if (out.checkError()) {
        if (out == System.out && standardOutputIsPipe()) {
          // its reader closed it, as `head` does once it has its lines: no error, the status a Unix tool that the
          // pipe's signal stops reports
          return status != 0 ? status : CLOSED_PIPE;
        }
        err.println(program + ": error: writing standard output failed (a full disk, or a reader that closed it);"
            + " what this run printed is incomplete");
        return status != 0 ? status : 1;
      }
      return status;
    } catch (UsageException e) {
      return fail(program, err, e, e.getMessage(), 2);
    } catch (IOException e) {
      return fail(program, err, e, "error: " + describe(e, given), 1);
    } catch (UncheckedIOException e) {
      // a stream or worker wraps the same failures: worded alike, not as the wrapped class's name
      return fail(program, err, e, "error: " + describe(e.getCause(), given), 1);
    } catch (IllegalArgumentException | IllegalStateException | ArithmeticException e) {
      String message = e.getMessage() == null ? e.toString() : e.getMessage();
      // a file modified under the run can read as a damaged one: the refusal says so after its own words
      String changed = e instanceof IllegalStateException || message.startsWith(MappedFiles.CHANGED) ? ""
          : MappedFiles.modifiedInPlace(mapped);
      return fail(program, err, e, "error: " + message + (changed.isEmpty() ? "" : "; " + MappedFiles.CHANGED
          + changed + ": inputs must stay as they are until the run ends"), 1);
    } catch (OutOfMemoryError e) {
      return fail(program, err, e, "error: " + outOfMemory(e), 1);
    } catch (RuntimeException | InternalError | StackOverflowError | LinkageError | AssertionError e) {
      // LinkageError: a class or native library that cannot be loaded (a damaged jar, a JVM without a module)
      // a read from a mapped input faulted (an InternalError, maybe wrapped by a worker thread): most often its
      // file shrank or was replaced during the run
      // a fault reading a file modified in place names it; failing that, any file of another size or gone
      String changed = causedBy(e, InternalError.class) ? MappedFiles.modifiedInPlace(mapped) : "";
      if (changed.isEmpty() && causedBy(e, InternalError.class)) {
        changed = MappedFiles.changed(mapped);
      }
      if (!changed.isEmpty()) {
        return fail(program, err, e, "error: " + MappedFiles.refusal(changed), 1);
      }
      NoClassDefFoundError missing = causeOf(e, NoClassDefFoundError.class);
      if (missing != null && missing.getMessage() != null && missing.getMessage().matches("[\\w/$]+")
          && (descriptorsExhausted() || onClassPath(missing.getMessage()))) {
        // the JVM opens a jar when it first loads a class of it: without a descriptor to spare, the class is "not
        // found", which reads as a broken installation; descriptors freed since (the run's files closed as the error
        // passed) leave the class's file there, found now
        return fail(program, err, e, "error: the class " + missing.getMessage() + " could not be loaded when the run"
            + " needed it, though it is there: most often too many open files (raise ulimit -n)", 1);
      }
      // else a bug: still one line, and the trace on request
      return fail(program, err, e, "error: unexpected " + e + " (set MAXSIM4J_DEBUG=1 for the stack trace)", 1);
    }
  }

  /**
   * Whether the class file of {@code name} (as a NoClassDefFoundError names it) is on the class path now: not the
   * runtime image's, whose classes no descriptor limit keeps out (a module not resolved is not found at all).
   */
  private static boolean onClassPath(String name) {
    java.net.URL url = ClassLoader.getSystemResource(name + ".class");
    return url != null && !"jrt".equals(url.getProtocol());
  }

  /** Whether this process has no file descriptor to spare: opening one more file fails for want of one. */
  private static boolean descriptorsExhausted() {
    try (var probe = Files.newByteChannel(Path.of(System.getProperty("java.home"), "release"))) {
      return false;
    } catch (FileSystemException e) {
      return e.getReason() != null && e.getReason().toLowerCase(java.util.Locale.ROOT).contains("too many open");
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /** The status of a run whose reader closed its standard output early: 128 + SIGPIPE, as the shell reports it. */
  static final int CLOSED_PIPE = 141;

  /** The file type bits of a Unix mode, and those of a pipe (named or not) and of a socket. */
  private static final int TYPE_BITS = 0170000;
  private static final int FIFO = 0010000;
  private static final int SOCKET = 0140000;

  /**
   * Whether this process's standard output is a pipe or a socket, where a failed write means that the reader closed
   * it (on Linux, whose /proc names the descriptor's file; false where that cannot be told).
   */
  private static boolean standardOutputIsPipe() {
    try {
      int type = (Integer) Files.getAttribute(Path.of("/proc/self/fd/1"), "unix:mode") & TYPE_BITS;
      return type == FIFO || type == SOCKET;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /**
   * A failed file operation in a few words: what it was, on which file; on an input an option named ({@code given}),
   * led by that option, with what the input must be.
   */
  static String describe(IOException e, GivenFiles given) {
    String option = e instanceof FileSystemException f ? given.optionsOf(f.getFile()) : null;
    if (option != null) {
      String file = ((FileSystemException) e).getFile();
      return switch (e) {
        case NoSuchFileException f -> option + " " + file + ": no such file (gone since the run checked it); expected"
            + " inputs to stay until the run ends";
        case AccessDeniedException f -> option + " " + file + ": permission denied; expected an input this user can"
            + " read";
        default -> option + " " + describe(e);
      };
    }
    return describe(e);
  }

  private static String describe(IOException e) {
    return switch (e) {
      case NoSuchFileException f -> "no such file: " + f.getFile();
      case AccessDeniedException f -> "permission denied: " + f.getFile();
      // a NotDirectoryException or FileAlreadyExistsException carries no reason: its kind says what went wrong
      case FileSystemException f -> f.getFile() == null ? f.getMessage() : f.getFile() + ": " + (f.getReason() != null
          ? f.getReason() : f.getClass().getSimpleName().replaceAll("Exception$", "").replaceAll("([a-z])([A-Z])",
              "$1 $2").toLowerCase(java.util.Locale.ROOT));
      case CorruptIndexException c -> c.getMessage(); // it names the index
      // a file channel of a thread interrupted (before or during the run) closes at its next read or write
      case ClosedByInterruptException c -> "interrupted while reading or writing a file";
      default -> e.toString();
    };
  }

  private static boolean causedBy(Throwable e, Class<? extends Throwable> kind) {
    return causeOf(e, kind) != null;
  }

  /** {@code e} or its first cause of {@code kind}, or null; within a bound, as causes can form a cycle. */
  private static <T extends Throwable> T causeOf(Throwable e, Class<T> kind) {
    Throwable t = e;
    for (int depth = 0; depth < 32 && t != null; depth++, t = t.getCause()) {
      if (kind.isInstance(t)) {
        return kind.cast(t);
      }
    }
    return null;
  }

  /**
   * Suggests a larger limit only where one helps: the heap, or the direct-memory limit (which follows the heap by
   * default), never an array past the JVM's size limit.
   */
  static String outOfMemory(OutOfMemoryError e) {
    String why = String.valueOf(e.getMessage());
    if (why.contains("Java heap space") || why.contains("GC overhead")) {
      return "out of memory with a heap of " + Runtime.getRuntime().maxMemory() / (1 << 20)
          + " MiB (raise -Xmx through JAVA_OPTS)";
    }
    if (why.contains("array size exceeds")) {
      return "out of memory: an array over the JVM's limit of 2^31-1 elements was needed, which no -Xmx allows";
    }
    if (why.contains("direct buffer memory")) {
      // native allocations (quantize holds its output there) count against it, the heap's size unless set apart
      return "out of memory: " + why + " (raise -XX:MaxDirectMemorySize, by default the heap's -Xmx, through"
          + " JAVA_OPTS)";
    }
    if (why.startsWith("Unable to allocate")) {
      // native memory (an arena's allocation) past what the process may have, whatever the heap
      return "out of native memory: " + why + " (the process's address space, ulimit -v, or the machine's memory"
          + " with overcommit off: raise the limit or free memory)";
    }
    if (why.contains("unable to create native thread")) {
      return "out of threads: " + why + " (the user's process limit, ulimit -u, or a container's pids limit: raise"
          + " it)";
    }
    return "out of memory: " + why;
  }

  /** Whether the user asked for stack traces ({@code MAXSIM4J_DEBUG=1}). */
  static boolean stackTracesAsked() {
    return "1".equals(System.getenv("MAXSIM4J_DEBUG"));
  }

  private static int fail(String program, PrintStream err, Throwable e, String line, int status) {
    // a file name or file content quoted in the message must not break the one-line contract
    err.println(program + ": " + Printable.oneLine(line));
    if (stackTracesAsked()) {
      e.printStackTrace(err);
    }
    return status;
  }
}
