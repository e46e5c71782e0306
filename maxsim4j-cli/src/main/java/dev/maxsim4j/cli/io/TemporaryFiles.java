package dev.maxsim4j.cli.io;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The temporary files this run is writing before it moves them into place: deleted if the JVM exits first (Ctrl-C,
 * SIGTERM), so an interrupted run leaves its outputs as they were and nothing beside them.
 */
public final class TemporaryFiles {
  private static final Set<Path> PENDING = ConcurrentHashMap.newKeySet();
  private static final AtomicBoolean HOOKED = new AtomicBoolean();

  private TemporaryFiles() {}

  /** Tracks {@code file} until {@link #done}; returns it. */
  public static Path track(Path file) {
    if (HOOKED.compareAndSet(false, true)) {
      Runtime.getRuntime().addShutdownHook(new Thread(TemporaryFiles::deleteAll, "maxsim4j-temporary-files"));
    }
    PENDING.add(file);
    return file;
  }

  /** {@code file} was moved into place or deleted (null: nothing to do). */
  public static void done(Path file) {
    if (file != null) {
      PENDING.remove(file);
    }
  }

  /** Whether {@code file} is one this JVM is writing now. */
  public static boolean isTracked(Path file) {
    return PENDING.contains(file);
  }

  private static void deleteAll() {
    for (Path file : PENDING) {
      try {
        Files.deleteIfExists(file);
      } catch (IOException ignored) {
        // the JVM is exiting: a file that cannot be deleted now stays, as it would have without the hook
      }
    }
  }
}
