package dev.maxsim4j.cli.text;

import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.cli.io.Printable;
import java.io.PrintStream;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

/**
 * Warnings on stderr, one line each. Past the first few of a stage (reading the inputs, then finding which hold a
 * word piece) they are only counted, so that a folder of binary files names some of them without burying the
 * result, and a later stage's warnings are named even where an earlier stage's filled its share.
 */
public final class Warnings {
  private static final int SHOWN = 20;
  private final PrintStream err;
  private int count;
  /** The warnings shown, at most {@link #SHOWN} a stage. */
  private final Set<String> shown = new HashSet<>();

  public Warnings(PrintStream err) {
    this.err = err;
  }

  public void warn(String message) {
    // a name or line of a file quoted in it must not split the warning or forge a line of its own
    String line = Printable.oneLine(message);
    if (shown.contains(line)) {
      return; // said already: a run that reads the folder again (TextIndex.update) names each file once
    }
    count++;
    if (count <= SHOWN) {
      shown.add(line);
      err.println("maxsim4j: warning: " + line);
    }
  }

  /** Says how many of the stage's warnings were not shown, if any; the next stage names its own first few. */
  public void finish() {
    if (count > SHOWN) {
      err.printf(Locale.ROOT, "maxsim4j: warning: %s not shown%n", Counts.of(count - SHOWN, "more warning"));
    }
    count = 0;
  }
}
