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

/**
 * {@code bench cpu} whose inputs leave the heap nearly full: the naive baseline's warm-up runs out of memory on a
 * worker thread, and the run ends in one line and status 1 (it waited forever for the dead worker, deaf to SIGTERM).
 */
class NaiveOutOfHeapTest {
  @TempDir Path dir;

  @Test
  void theNaiveBaselineOutOfHeapEndsTheRunInOneLine() throws Exception {
    String java = ProcessHandle.current().info().command().orElse("java");
    Path err = dir.resolve("err.txt");
    Process p = new ProcessBuilder(List.of(java, "-Xmx64m", "--add-modules", "jdk.incubator.vector",
        "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
        "dev.maxsim4j.bench.Main", "cpu", "--rounds", "1", "--iterations", "1", "--shape", "1,100,1,1000,100",
        "--dtype", "bf16"))
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(err.toFile()).start();
    boolean ended = p.waitFor(120, TimeUnit.SECONDS);
    if (!ended) {
      p.destroyForcibly().waitFor();
    }
    String text = Files.readString(err, StandardCharsets.UTF_8);
    assertTrue(ended, "the run still waited after 120 s: " + text);
    assertEquals(1, p.exitValue(), text);
    // the JVM's own line about the incubator module aside
    List<String> lines = text.lines().filter(l -> !l.startsWith("WARNING: Using incubator modules")).toList();
    assertTrue(lines.size() == 1 && lines.get(0).contains("ran out of memory"), text);
  }
}
