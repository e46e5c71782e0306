package dev.maxsim4j.cli.io;

import java.io.IOException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Map;

/**
 * The input files and folders a run's options named, by option, so that a failed read of one (no permission, a file
 * gone since it was checked) names the option that gave it, as every other refusal of an input does. The runner binds
 * one record per run; outside a run nothing is recorded.
 */
public final class GivenFiles {
  private static final ScopedValue<Map<String, String>> GIVEN = ScopedValue.newInstance();

  private GivenFiles() {}

  /** Runs {@code work} with {@code given} recording, path by option, the inputs its options name. */
  public static <T> T recordedIn(Map<String, String> given, RunMemory.Work<T> work) throws IOException {
    return ScopedValue.where(GIVEN, given).call(work::run);
  }

  /** Records that {@code option} named {@code path}: a file, or a folder whose files the run reads. */
  public static void given(String option, Path path) {
    if (GIVEN.isBound()) {
      GIVEN.get().putIfAbsent(path.toString(), option);
    }
  }

  /**
   * The option of {@code given} that named {@code file} (a path as a failed file operation reports it), or the folder
   * holding it; null where none did.
   */
  public static String optionOf(Map<String, String> given, String file) {
    if (file == null) {
      return null;
    }
    String option = given.get(file);
    if (option != null) {
      return option;
    }
    try {
      Path parent = Path.of(file).getParent();
      return parent == null ? null : given.get(parent.toString());
    } catch (InvalidPathException e) {
      return null;
    }
  }
}
