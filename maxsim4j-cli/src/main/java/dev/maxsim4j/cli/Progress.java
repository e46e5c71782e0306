package dev.maxsim4j.cli;

import java.io.PrintStream;
import java.util.Locale;

/** Progress on stderr for work that runs past a second; silent for quicker work. */
public final class Progress {
  private static final long QUIET_NANOS = 1_000_000_000L;
  private final PrintStream err;
  private final String label;
  private final long start = System.nanoTime();
  private int lastPercent = -1;
  private boolean shown;

  public Progress(PrintStream err, String label) {
    this.err = err;
    this.label = label;
  }

  public void update(long done, long total) {
    int percent = (int) (100 * done / Math.max(1, total));
    if (percent / 10 == lastPercent / 10 || System.nanoTime() - start < QUIET_NANOS) {
      return;
    }
    lastPercent = percent;
    shown = true;
    err.printf(Locale.ROOT, "%s ... %d%%%n", label, percent);
  }

  public void done() {
    if (shown) {
      err.printf(Locale.ROOT, "%s ... done (%.1f s)%n", label, (System.nanoTime() - start) / 1e9);
    }
  }
}
