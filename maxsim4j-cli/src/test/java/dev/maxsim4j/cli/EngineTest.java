package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.cli.io.Npy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How every scoring command opens its backend: --verbose, and no silent scalar path. */
class EngineTest {
  @TempDir
  Path dir;

  private String[] scoreArgs(String... extra) throws IOException {
    Path q = dir.resolve("q.npy");
    Path d = dir.resolve("d.npy");
    Npy.writeFloats(q, new float[] {1, 0, 0, 1}, 1, 2, 2);
    Npy.writeFloats(d, new float[] {2, 1, -1, 3}, 1, 2, 2);
    List<String> args = new ArrayList<>(List.of("score", "--queries", q.toString(), "--docs", d.toString(),
        "--out", dir.resolve("s.npy").toString()));
    args.addAll(List.of(extra));
    return args.toArray(String[]::new);
  }

  @Test
  void verboseSaysWhichBackendRunsAndWhy() throws IOException {
    CliRun r = CliRun.of(scoreArgs("--verbose", "--backend", "cpu"));
    assertEquals(0, r.status(), r.err());
    assertTrue(r.err().contains("maxsim4j: backend vector (Vector API"), r.err());
    assertTrue(r.err().contains("cuda not used: "), r.err());
    CliRun quiet = CliRun.of(scoreArgs("--backend", "cpu"));
    assertEquals(0, quiet.status(), quiet.err());
    assertEquals("", quiet.err());
  }

  /** Without --backend, the maxsim4j.backend system property names it, as the README says; a bad name is an error. */
  @Test
  void theBackendPropertyIsHonouredWithoutTheFlag() throws IOException {
    String before = System.getProperty("maxsim4j.backend");
    try {
      System.setProperty("maxsim4j.backend", "reference");
      CliRun r = CliRun.of(scoreArgs("--verbose"));
      assertEquals(0, r.status(), r.err());
      assertTrue(r.err().contains("maxsim4j: backend reference"), r.err());
      System.setProperty("maxsim4j.backend", "nope");
      CliRun bad = CliRun.of(scoreArgs());
      assertTrue(bad.failedCleanly(), "an unknown name is refused: " + bad.err());
      assertTrue(bad.err().contains("-Dmaxsim4j.backend=nope (no --backend given)"), bad.err());
      // a backend that cannot run here is named as the command line sets it, not as a library caller would
      System.setProperty("maxsim4j.backend", "cuda");
      CliRun missing = CliRun.of(scoreArgs());
      if (missing.status() != 0) {
        assertTrue(missing.failedCleanly(), missing.err());
        assertTrue(missing.err().contains("from -Dmaxsim4j.backend, no --backend given; unset it in JAVA_OPTS"),
            missing.err());
        assertTrue(!missing.err().contains("builder"), missing.err());
      }
      CliRun flag = CliRun.of(scoreArgs("--verbose", "--backend", "cpu"));
      assertTrue(flag.err().contains("maxsim4j: backend vector"), "the flag wins: " + flag.err());
    } finally {
      if (before == null) {
        System.clearProperty("maxsim4j.backend");
      } else {
        System.setProperty("maxsim4j.backend", before);
      }
    }
  }

  /** A bad setting other than the backend is reported as itself, not as the backend property's. */
  @Test
  void aBadThreadCountIsNotBlamedOnTheBackendProperty() throws IOException {
    String before = System.getProperty("maxsim4j.threads");
    try {
      System.setProperty("maxsim4j.threads", "40000");
      CliRun bad = CliRun.of(scoreArgs());
      assertTrue(bad.failedCleanly(), bad.err());
      assertTrue(bad.err().contains("maxsim4j.threads = '40000'"), bad.err());
      assertTrue(!bad.err().contains("-Dmaxsim4j.backend"), bad.err());
    } finally {
      if (before == null) {
        System.clearProperty("maxsim4j.threads");
      } else {
        System.setProperty("maxsim4j.threads", before);
      }
    }
  }

  /** A JVM without the Vector API module is refused, unless the slow path is asked for by name. */
  @Test
  void refusesTheScalarFallbackOfAJvmWithoutTheVectorApi() throws Exception {
    String[] args = scoreArgs();
    Child refused = child(args);
    assertEquals(1, refused.status(), refused.output());
    assertTrue(refused.output().contains("maxsim4j: error: this JVM was started without --add-modules"
        + " jdk.incubator.vector"), refused.output());
    assertTrue(refused.output().contains("an order of magnitude slower"), refused.output());
    String[] scalar = scoreArgs("--backend", "scalar");
    Child accepted = child(scalar);
    assertEquals(0, accepted.status(), accepted.output());
  }

  private record Child(int status, String output) {}

  private static Child child(String[] args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), Main.class.getName()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), output);
    return new Child(p.exitValue(), output);
  }

  /**
   * An unknown --backend is a mistake in the command line (exit 2), found before any input is read, for every
   * command; the names the CLI accepts are the library's own.
   */
  @Test
  void anUnknownBackendIsAUsageErrorBeforeAnyWork() {
    CliRun r = CliRun.of("score", "--queries", "missing-q.npy", "--docs", "missing-d.npy", "--out", "s.npy",
        "--backend", "gpu");
    CliRun.assertOneLineError(r, 2, "score: --backend = gpu; expected one of auto, cpu, cuda, reference, scalar,"
        + " vector");
    CliRun.assertOneLineError(CliRun.of("train-example", "--backend", "nope"), 2, "--backend = nope");
    IllegalArgumentException unknown = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
        () -> dev.maxsim4j.MaxSim.builder().backend("gpu").build());
    assertTrue(unknown.getMessage().contains("is unknown"), "the library words a name it lacks so");
    for (String name : Engine.BACKENDS) {
      try (dev.maxsim4j.MaxSim m = dev.maxsim4j.MaxSim.builder().backend(" " + name.toUpperCase() + " ").build()) {
        assertTrue(m.backendName() != null);
      } catch (RuntimeException e) {
        assertTrue(!String.valueOf(e.getMessage()).contains("is unknown"), name + ": " + e.getMessage());
      }
    }
  }
}
