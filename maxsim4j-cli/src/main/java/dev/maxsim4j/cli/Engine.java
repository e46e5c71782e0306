package dev.maxsim4j.cli;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.cli.io.RunMemory;
import java.io.IOException;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/**
 * The {@link MaxSim} a command scores with, opened the same way by every command from its {@code --backend}
 * and {@code --verbose} options: it refuses the scalar fallback that a JVM without the Vector API module
 * would silently take, and under {@code --verbose} says which backend runs and why faster ones were passed
 * over.
 */
public final class Engine {
  /** Where {@code --verbose} reports go: the error stream of the run on this thread. */
  private static final ScopedValue<PrintStream> LOG = ScopedValue.newInstance();

  private Engine() {}

  /** Runs {@code work} with its {@code --verbose} reports going to {@code err} (runs in other threads keep theirs). */
  static <T> T reportingTo(PrintStream err, RunMemory.Work<T> work) throws IOException {
    return ScopedValue.where(LOG, err).call(work::run);
  }

  /** The names the library's {@code MaxSim.Builder.backend} takes (case and surrounding space aside). */
  static final List<String> BACKENDS = MaxSim.backendNames();

  /**
   * Refuses a {@code --backend} name the library does not know, as a mistake in the command line, before any input
   * is read (the library would refuse it only once the inputs were loaded).
   */
  static void checkBackend(String command, String name) {
    if (!BACKENDS.contains(name.trim().toLowerCase(Locale.ROOT))) {
      throw new UsageException(command + ": --backend = " + name + "; expected one of "
          + String.join(", ", BACKENDS));
    }
  }

  /** The library's system property naming the default backend. */
  private static final String BACKEND_PROPERTY = "maxsim4j.backend";

  /**
   * Opens the backend {@code a} names with the default threads; without {@code --backend}, the library's default
   * (the {@code maxsim4j.backend} system property, else {@code auto}).
   */
  public static MaxSim open(Args a) {
    return open(a, MaxSim.builder());
  }

  /** Builds {@code builder} (threads already set) with the backend {@code a} names, as {@link #open(Args)}. */
  public static MaxSim open(Args a, MaxSim.Builder builder) {
    return open(a.get("--backend"), a.has("--verbose"), builder);
  }

  /**
   * Builds {@code builder} with the backend named {@code requested} (null: the builder's default); reports it when
   * {@code verbose}.
   */
  public static MaxSim open(String requested, boolean verbose, MaxSim.Builder builder) {
    String named = requested != null ? requested : System.getProperty(BACKEND_PROPERTY, "auto");
    // the library would name the property too, but advise a builder call: say it as a command line would
    if (requested == null && !BACKENDS.contains(named.trim().toLowerCase(Locale.ROOT))) {
      throw new IllegalArgumentException("-D" + BACKEND_PROPERTY + "=" + named + " (no --backend given); expected"
          + " one of " + String.join(", ", BACKENDS));
    }
    boolean fromProperty = requested == null && System.getProperty(BACKEND_PROPERTY) != null && !named.isBlank();
    MaxSim maxSim;
    try {
      maxSim = (requested == null && !fromProperty ? builder : builder.backend(named)).build();
    } catch (IllegalStateException e) {
      if (!fromProperty) {
        throw e;
      }
      throw new IllegalStateException(e.getMessage() + " (backend '" + named + "' from -D" + BACKEND_PROPERTY
          + ", no --backend given; unset it in JAVA_OPTS for auto, or pass --backend NAME)", e);
    }
    boolean slowPathAskedFor = named.trim().equalsIgnoreCase("scalar");
    if (maxSim.backendName().equals("scalar") && !slowPathAskedFor && !MaxSim.vectorApiAvailable()) {
      maxSim.close();
      throw new IllegalStateException("this JVM was started without --add-modules jdk.incubator.vector, so scoring"
          + " would run the scalar loops, an order of magnitude slower; add that flag (the ./maxsim4j launcher does),"
          + " or pass --backend scalar to accept the slow path");
    }
    if (verbose) {
      (LOG.isBound() ? LOG.get() : System.err).println("maxsim4j: backend " + maxSim.backendInfo());
    }
    return maxSim;
  }
}
