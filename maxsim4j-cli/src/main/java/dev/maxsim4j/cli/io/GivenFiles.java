package dev.maxsim4j.cli.io;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The input files a run's options named (and the shards found in a folder one named), by path, so that a failed read
 * of one (no permission, a file gone since it was checked) names the options that gave it, as every other refusal of
 * an input does. The runner binds one record per run; outside a run nothing is recorded.
 */
public final class GivenFiles {
  private static final ScopedValue<GivenFiles> CURRENT = ScopedValue.newInstance();

  private final Map<String, Set<String>> options = new ConcurrentHashMap<>();

  /** Runs {@code work} with {@code given} recording the inputs its options name. */
  public static <T> T recordedIn(GivenFiles given, RunMemory.Work<T> work) throws IOException {
    return ScopedValue.where(CURRENT, given).call(work::run);
  }

  /** Records that {@code option} named {@code file}, an input the run has checked and reads. */
  public static void given(String option, Path file) {
    if (CURRENT.isBound()) {
      CURRENT.get().options.compute(file.toString(), (f, named) -> {
        Set<String> all = named == null ? new LinkedHashSet<>() : named;
        all.add(option); // under the map's lock for this path: a run's worker threads may record too
        return all;
      });
    }
  }

  /**
   * The options that named {@code file} (a path as a failed file operation reports it), in the order they did, joined
   * ("--queries and --docs"); null where none did.
   */
  public String optionsOf(String file) {
    Set<String> named = file == null ? null : options.get(file);
    return named == null ? null : String.join(" and ", named);
  }
}
