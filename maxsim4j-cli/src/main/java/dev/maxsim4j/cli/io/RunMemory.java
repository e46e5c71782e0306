package dev.maxsim4j.cli.io;

import java.io.IOException;
import java.lang.foreign.Arena;

/**
 * The native memory of one command run: the inputs it maps and the buffers it allocates off the heap belong to
 * an arena that closes when the command returns or fails, so a JVM that runs many commands (a test suite, an
 * application calling {@code Main.run}) unmaps each run's inputs at its end, not when the garbage collector finds
 * them. A step whose memory the rest of the run does not read (a shard checked or scored) takes an
 * arena of its own the same way. Outside a run (a reader used on its own) the memory is freed by the collector.
 */
public final class RunMemory {
  private static final ScopedValue<Arena> ARENA = ScopedValue.newInstance();

  private RunMemory() {}

  /** A command's work. */
  @FunctionalInterface
  public interface Work<T> {
    T run() throws IOException;
  }

  /** Runs {@code work}, then frees what it mapped or allocated through {@link #arena()} on its thread. */
  public static <T> T freedAfter(Work<T> work) throws IOException {
    // shared: the scoring threads read the inputs too; closed after the work, whose calls have all returned
    try (Arena arena = Arena.ofShared()) {
      return ScopedValue.where(ARENA, arena).call(work::run);
    }
  }

  /** The arena of the run on this thread, or an automatic one outside a run. */
  public static Arena arena() {
    return ARENA.isBound() ? ARENA.get() : Arena.ofAuto();
  }
}
