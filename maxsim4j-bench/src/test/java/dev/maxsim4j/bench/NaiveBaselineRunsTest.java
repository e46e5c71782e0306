package dev.maxsim4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code bench cpu}'s naive column in JVMs of their own: a heap nearly full, no Vector API module. */
class NaiveBaselineRunsTest {
  @TempDir Path dir;

  /** Runs {@code bench} with {@code jvm} options; its status, and stdout and stderr in {@code out} and {@code err}. */
  private int bench(List<String> jvm, Path out, Path err, String... args) throws Exception {
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> command = new java.util.ArrayList<>(List.of(java));
    command.addAll(jvm);
    command.addAll(List.of("--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
        "dev.maxsim4j.bench.Main"));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    boolean ended = p.waitFor(120, TimeUnit.SECONDS);
    if (!ended) {
      p.destroyForcibly().waitFor();
    }
    assertTrue(ended, "the run still waited after 120 s: " + Files.readString(err, StandardCharsets.UTF_8));
    return p.exitValue();
  }

  /**
   * Inputs that leave the heap nearly full: the naive baseline's warm-up runs out of memory on a worker thread, and
   * the run ends in one line and status 1 (it waited forever for the dead worker, deaf to SIGTERM).
   */
  @Test
  void theNaiveBaselineOutOfHeapEndsTheRunInOneLine() throws Exception {
    Path err = dir.resolve("err.txt");
    int status = bench(List.of("-Xmx64m", "--add-modules", "jdk.incubator.vector"), dir.resolve("out.txt"), err,
        "cpu", "--rounds", "1", "--iterations", "1", "--shape", "1,100,1,1000,100", "--dtype", "bf16");
    String text = Files.readString(err, StandardCharsets.UTF_8);
    assertEquals(1, status, text);
    // the JVM's own lines aside: the incubator module, and (after a blank line) an out-of-memory error thrown where
    // no handler runs (a dying thread's), which the JVM prints itself
    List<String> lines = text.lines().filter(l -> !l.isBlank() && !l.startsWith("WARNING: Using incubator modules")
        && !l.startsWith("Exception: java.lang.OutOfMemoryError thrown from the UncaughtExceptionHandler")).toList();
    assertTrue(lines.size() == 1 && lines.get(0).contains("ran out of memory"), text);
  }

  /**
   * A JVM without the Vector API's module runs the scalar backend it is told to and leaves the naive column, written
   * with the Vector API, empty (it ended in an unexpected NoClassDefFoundError).
   */
  @Test
  void aScalarRunWithoutTheVectorApiLeavesTheNaiveColumnEmpty() throws Exception {
    Path out = dir.resolve("out.txt");
    Path err = dir.resolve("err.txt");
    int status = bench(List.of(), out, err, "cpu", "--backend", "scalar", "--rounds", "1", "--iterations", "1",
        "--shape", "1,4,2,4,8");
    String table = Files.readString(out, StandardCharsets.UTF_8);
    assertEquals(0, status, table + Files.readString(err, StandardCharsets.UTF_8));
    String row = table.lines().filter(l -> l.startsWith("1,4,2,4,8")).findFirst().orElseThrow();
    assertTrue(row.matches(".*\\s-\\s+-\\s.*"), "naive ms and speedup '-': " + table);
  }
}
