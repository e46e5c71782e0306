package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * A library that logs a failure with its exception (JNA, ONNX Runtime) leaves one line on the command line's stderr:
 * the logging framework printed a date line and the whole stack trace.
 */
class OneLineLogsTest {
  /** A run whose command logs as JNA does where java.io.tmpdir is missing, then succeeds. */
  public static final class LoggingRun {
    public static void main(String[] args) {
      System.exit(CommandRunner.run("maxsim4j", System.out, System.err, () -> {
        Logger.getLogger("com.sun.jna.Native").log(Level.WARNING, "JNA Warning: IOException removing temporary"
            + " files", new IOException("temporary directory '/nonexist' does not exist",
            new IllegalStateException("root")));
        return 0;
      }));
    }
  }

  private static String stderrOf(String... environment) throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), LoggingRun.class.getName());
    pb.environment().remove("MAXSIM4J_DEBUG");
    for (int i = 0; i < environment.length; i += 2) {
      pb.environment().put(environment[i], environment[i + 1]);
    }
    Process p = pb.redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the child JVM ended");
    assertEquals(0, p.exitValue(), err);
    return err;
  }

  @Test
  void aLoggedFailureIsOneLineWithoutItsStackTrace() throws Exception {
    List<String> lines = stderrOf().lines().filter(l -> !l.startsWith("WARNING: Using incubator")).toList();
    assertEquals(List.of("WARNING: JNA Warning: IOException removing temporary files (java.io.IOException: temporary"
        + " directory '/nonexist' does not exist; caused by java.lang.IllegalStateException: root)"), lines);
    // MAXSIM4J_DEBUG=1 keeps the trace
    assertTrue(stderrOf("MAXSIM4J_DEBUG", "1").contains("\tat "), "the stack trace under MAXSIM4J_DEBUG=1");
  }
}
