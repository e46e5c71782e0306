package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** An option whose value is left out, so that the next option's name would be taken as its value. */
class HostileJobOptionsTest {
  private static String usageError(String... args) {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = TopKJob.start(() -> {
      throw new AssertionError("Spark was started for a bad command line");
    }, args, new PrintStream(err, true, StandardCharsets.UTF_8));
    assertEquals(2, status, err.toString(StandardCharsets.UTF_8));
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void anOptionFollowedByAnotherOptionNeedsAValue() {
    // without the check, --tag took "--mask" as the run's tag and the job ran
    String err = usageError("--queries", "q", "--corpus", "c", "--k", "5", "--out", "o", "--tag", "--mask");
    assertEquals(true, err.startsWith("maxsim4j-spark: --tag needs a value, not the option '--mask' (usage:"), err);
    err = usageError("--queries", "--corpus", "c", "--k", "5", "--out", "o");
    assertEquals(true, err.startsWith("maxsim4j-spark: --queries needs a value, not the option '--corpus'"), err);
  }

  @Test
  void anOptionLastOnTheLineWithoutItsValueIsAUsageError() {
    String err = usageError("--queries", "q", "--corpus", "c", "--out", "o", "--k");
    assertEquals(true, err.startsWith("maxsim4j-spark: --k needs a value (usage:"), err);
  }

  @Test
  void anOptionGivenTwiceIsAUsageErrorNamingBothValues() {
    // the last value silently winning would run a job other than the one a script's earlier --k asked for
    String err = usageError("--queries", "q", "--corpus", "c", "--k", "5", "--out", "o", "--k", "50");
    assertEquals(true, err.startsWith("maxsim4j-spark: --k is given twice ('5' and '50'); expected it once (usage:"),
        err);
  }

  @Test
  void aQuotedValueCannotBreakTheErrorLine() {
    for (String breaker : new String[] {"\n", "\u0085", "\u2028", "\u2029", "\u202e", "\ud800"}) {
      String err = usageError("--queries", "q", "--corpus", "c", "--k", "x" + breaker + "maxsim4j-spark: forged",
          "--out", "o");
      assertEquals(true, err.endsWith("\n"), err);
      assertEquals(false, err.substring(0, err.length() - 1).contains(breaker), err);
    }
  }
}
