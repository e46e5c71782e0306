package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Automatic choice, forcing by name and by system property, and the logged fallback. */
class BackendSelectionTest {

  @Test
  void autoPicksCudaWhenUsableElseTheVectorKernel() {
    String expected = dev.maxsim4j.internal.BackendSelector.cudaUnavailableReason().isEmpty() ? "cuda" : "vector";
    try (MaxSim m = MaxSim.builder().backend("auto").build()) {
      assertEquals(expected, m.backendName());
    }
    try (MaxSim m = MaxSim.builder().backend("cpu").build()) {
      assertEquals("vector", m.backendName());
    }
  }

  @Test
  void namesForceABackend() {
    for (String name : new String[] {"reference", "scalar", "vector"}) {
      try (MaxSim m = MaxSim.builder().backend(name).threads(1).build()) {
        assertEquals(name, m.backendName());
        assertEquals(1, m.threads());
      }
    }
  }

  /** A child JVM without --add-modules jdk.incubator.vector falls back to scalar and says why, once. */
  @Test
  void fallsBackToScalarWithOneLoggedReason() throws IOException, InterruptedException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
        BackendSelectionTest.Probe.class.getName())
        .redirectErrorStream(true).start();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child JVM finished");
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.exitValue(), out);
    assertTrue(out.contains("backend=scalar score=5.0"), out);
    List<String> reasons = out.lines().filter(l -> l.contains("using the scalar CPU backend because")).toList();
    assertEquals(1, reasons.size(), out);
    assertTrue(reasons.get(0).contains("--add-modules jdk.incubator.vector"), out);
    assertTrue(reasons.get(0).contains("an order of magnitude slower"), "the warning names the cost: " + out);
    assertTrue(out.contains("WARNING"), out);
    assertTrue(out.contains("vector not used: the JVM was started without --add-modules jdk.incubator.vector"), out);
    assertTrue(out.contains("vectorApiAvailable=false"), out);
  }

  /** On a machine without a GPU, auto says nothing at INFO or above; backendInfo() keeps the reason. */
  @Test
  void autoIsQuietOnACpuOnlyMachine() throws IOException, InterruptedException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(java, "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
        "-Dmaxsim4j.backend=auto",
        "-cp", System.getProperty("java.class.path"), BackendSelectionTest.Probe.class.getName())
        .redirectErrorStream(true).start();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.exitValue(), out);
    if (dev.maxsim4j.internal.BackendSelector.cudaUnavailableReason().isPresent()) {
      List<String> noise = out.lines().filter(l -> !l.isBlank() && !l.startsWith("backend=") && !l.startsWith("info=")
          && !l.contains("Using incubator modules")).toList();
      assertEquals(List.of(), noise, out);
      assertTrue(out.contains("info=vector (Vector API, "), out);
      assertTrue(out.contains("; cuda not used: "), out);
    }
  }

  @Test
  void propertyForcesTheBackendInAChildJvm() throws IOException, InterruptedException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(java, "--add-modules", "jdk.incubator.vector", "-Dmaxsim4j.backend=reference",
        "-cp", System.getProperty("java.class.path"), BackendSelectionTest.Probe.class.getName())
        .redirectErrorStream(true).start();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(out.contains("backend=reference score=5.0"), out);
  }

  /** Main of the child JVMs. */
  public static final class Probe {
    public static void main(String[] args) {
      TokenBatch q = TokenBatch.ofFloats(new float[] {1, 0, 0, 1}, 1, 2, 2);
      TokenBatch d = TokenBatch.ofFloats(new float[] {2, 1, -1, 3}, 1, 2, 2);
      for (int i = 0; i < 2; i++) {
        try (MaxSim m = MaxSim.builder().backend(System.getProperty("maxsim4j.backend", "cpu")).build()) {
          System.out.println("backend=" + m.backendName() + " score=" + m.scores(q, d)[0][0]);
          System.out.println("info=" + m.backendInfo() + " vectorApiAvailable=" + MaxSim.vectorApiAvailable());
        }
      }
    }
  }
}
