package dev.maxsim4j.cli;

import dev.maxsim4j.MaxSim;
import java.io.PrintStream;

/**
 * The {@link MaxSim} a command scores with, opened the same way by every command: it refuses the scalar
 * fallback that a JVM without the Vector API module would silently take, and under {@code --verbose} says
 * which backend runs and why the faster ones were passed over.
 */
public final class Engine {
  private static volatile boolean verbose;
  private static volatile PrintStream log = System.err;

  private Engine() {}

  /** Set by {@link Main} for each run. */
  static void configure(boolean verboseRun, PrintStream err) {
    verbose = verboseRun;
    log = err;
  }

  /** Opens backend {@code requested} ({@code auto}, {@code cpu}, {@code vector}, ...) with the default threads. */
  public static MaxSim open(String requested) {
    return open(MaxSim.builder().backend(requested), requested);
  }

  /** Builds {@code builder}, which was given backend {@code requested}. */
  public static MaxSim open(MaxSim.Builder builder, String requested) {
    MaxSim maxSim = builder.build();
    if (maxSim.backendName().equals("scalar") && !requested.equals("scalar") && !MaxSim.vectorApiAvailable()) {
      maxSim.close();
      throw new IllegalStateException("this JVM was started without --add-modules jdk.incubator.vector, so scoring"
          + " would run the scalar loops, about 20x slower; add that flag (the ./maxsim4j launcher does), or pass"
          + " --backend scalar to accept the slow path");
    }
    if (verbose) {
      log.println("maxsim4j: backend " + maxSim.backendInfo());
    }
    return maxSim;
  }
}
