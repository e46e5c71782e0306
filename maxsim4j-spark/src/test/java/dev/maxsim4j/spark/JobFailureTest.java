package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The one line a failed job prints: its cause's first line, what Spark's own failures hold in theirs. */
class JobFailureTest {
  @Test
  void anArgumentErrorAnywhereInTheChainIsTheLine() {
    Throwable wrapped = new RuntimeException("Job aborted due to stage failure:\n stage dump",
        new IllegalArgumentException("document 'x' has 3 dims; expected 4\nmore"));
    assertEquals("error: document 'x' has 3 dims; expected 4", JobFailure.describe(wrapped));
  }

  @Test
  void aStateInputOrMemoryErrorAnywhereInTheChainIsTheLine() {
    // their messages say what went wrong, where Spark's wrappers around them only name a stage
    for (Throwable cause : List.of(new IllegalStateException("MaxSim is closed"),
        new IOException("No space left on device"), new OutOfMemoryError("Java heap space"))) {
      Throwable wrapped = new RuntimeException("Job aborted due to stage failure:\n stage dump",
          new RuntimeException("task failed", cause));
      assertEquals("error: " + cause.getMessage(), JobFailure.describe(wrapped), cause.toString());
    }
  }

  /**
   * A failure of Spark's own names its root cause too: a table whose Parquet files disagree on a column's type said
   * only "[FAILED_READ_FILE.NO_HINT] Encountered error while reading file ...", naming neither column nor types.
   */
  @Test
  void sparksOwnFailureNamesItsRootCause() {
    Throwable read = new RuntimeException("[FAILED_READ_FILE.NO_HINT] Encountered error while reading file f.parquet.",
        new RuntimeException("wrapped", new ClassCastException("optional binary tokens is not a group")));
    assertEquals("error: [FAILED_READ_FILE.NO_HINT] Encountered error while reading file f.parquet."
        + " (ClassCastException: optional binary tokens is not a group)", JobFailure.describe(read));
    // a root cause without a message is named by its class; one the line names already is not named twice
    assertEquals("error: failed (ClassCastException)",
        JobFailure.describe(new RuntimeException("failed", new ClassCastException())));
    ClassCastException cast = new ClassCastException("x is not y");
    assertEquals("error: " + cast, JobFailure.describe(new RuntimeException(cast)));
  }

  @Test
  @Timeout(10)
  void causesInALoopEndTheWalk() {
    RuntimeException a = new RuntimeException("a");
    RuntimeException b = new RuntimeException("b", a);
    a.initCause(b);
    assertEquals("error: a", JobFailure.describe(a).substring(0, "error: a".length()));
  }
}
