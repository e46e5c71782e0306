package dev.maxsim4j.bench;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Runs the bench command line in-process and keeps what it printed. */
public record BenchRun(int status, String out, String err) {
  public static BenchRun of(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new BenchRun(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** A failure the contract allows: one "maxsim4j bench: error:" line (plus any warnings), no stack trace. */
  public boolean failedCleanly() {
    return status == 1 && err.lines().filter(l -> !l.startsWith("maxsim4j bench: warning:")).count() == 1
        && err.startsWith("maxsim4j bench: error: ") && !err.contains("\tat ");
  }

  /** A bad command line: exit status 2 and one line naming {@code fragment}. */
  public boolean refusedWith(String fragment) {
    return status == 2 && err.lines().count() == 1 && err.contains(fragment);
  }
}
