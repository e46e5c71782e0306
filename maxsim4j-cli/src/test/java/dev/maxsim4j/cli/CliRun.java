package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Runs the command line in-process and keeps what it printed (public: the text commands' tests use it too). */
public record CliRun(int status, String out, String err) {
  public static CliRun of(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new CliRun(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** A failure the contract allows: one "maxsim4j: error:" line (plus any warnings), no stack trace. */
  boolean failedCleanly() {
    return status == 1 && err.lines().filter(l -> !l.startsWith("maxsim4j: warning:")).count() == 1
        && err.startsWith("maxsim4j: ") && err.contains("maxsim4j: error: ") && !err.contains("\tat ");
  }

  /** Asserts a failure with exit {@code status} as one "maxsim4j: ..." line holding {@code fragment}. */
  static void assertOneLineError(CliRun r, int status, String fragment) {
    assertEquals(status, r.status(), r.err());
    assertEquals(1, r.err().lines().count(), "exactly one line on stderr: " + r.err());
    assertTrue(r.err().startsWith("maxsim4j: "), r.err());
    assertTrue(r.err().contains(fragment), r.err());
    assertFalse(r.err().contains("\tat "), "no stack trace: " + r.err());
  }
}
