package dev.maxsim4j.cli;

import java.io.PrintStream;
import java.util.Locale;

/**
 * Progress on stderr for work that runs past a second (silent for quicker work): the percentage and the count
 * done of the total, at the first update past that second and then every tenth of the way.
 */
public final class Progress {
  private static final long QUIET_NANOS = 1_000_000_000L;
  /** Whether every piece of work reports, however quick: the tests of what commands report set it. */
  private static volatile boolean always;

  private final PrintStream err;
  private final String label;
  private final long start = System.nanoTime();
  private final long quietNanos = always ? 0 : QUIET_NANOS;
  private int lastPercent = Integer.MIN_VALUE;
  private boolean shown;

  public Progress(PrintStream err, String label) {
    this.err = err;
    this.label = label;
  }

  /** Makes progress shown for quick work too, or quiet for it again. */
  static void showAlways(boolean show) {
    always = show;
  }

  public void update(long done, long total) {
    int percent = (int) (100 * done / Math.max(1, total));
    if (percent / 10 == lastPercent / 10 || System.nanoTime() - start < quietNanos) {
      return;
    }
    lastPercent = percent;
    shown = true;
    err.printf(Locale.ROOT, "%s ... %d%% (%d of %d)%n", label, percent, done, total);
  }

  public void done() {
    if (shown) {
      err.printf(Locale.ROOT, "%s ... done (%.1f s)%n", label, (System.nanoTime() - start) / 1e9);
    }
  }
}
