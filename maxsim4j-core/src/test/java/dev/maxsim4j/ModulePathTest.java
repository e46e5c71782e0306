package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The library as a named module on the module path (a small module that requires it, compiled and run in a
 * JVM of its own), and on the class path without the Vector API module: it loads and falls back to the
 * scalar loops in both. The other tests run on the class path, as most users do.
 */
class ModulePathTest {
  private static final String PROBE = """
      package probe;

      import dev.maxsim4j.MaxSim;
      import dev.maxsim4j.TokenBatch;

      public class Probe {
        public static void main(String[] args) {
          try (MaxSim maxSim = MaxSim.builder().backend("cpu").threads(1).build()) {
            float[][] s = maxSim.scores(TokenBatch.of(new float[][][] {{{1, 0}, {0, 1}}}),
                TokenBatch.of(new float[][][] {{{0.5f, 0.25f}}}));
            Module core = MaxSim.class.getModule();
            System.out.println("probe: " + core.getName() + " automatic=" + core.getDescriptor().isAutomatic()
                + " backend=" + maxSim.backendName() + " score=" + s[0][0]
                + " internal exported=" + core.isExported("dev.maxsim4j.internal"));
          }
        }
      }
      """;

  @TempDir Path dir;

  @Test
  void runsAsANamedModuleThatExportsOnlyItsApi() throws Exception {
    Path probe = compileProbe(PROBE);
    String withVector = probeLine(run("--module-path", core() + java.io.File.pathSeparator + probe,
        "--add-modules", "jdk.incubator.vector", "--enable-native-access=dev.maxsim4j", "-m", "probe/probe.Probe"));
    assertEquals("probe: dev.maxsim4j automatic=false backend=vector score=0.75 internal exported=false", withVector);
    // requires static: without the incubator module resolved the module still loads, on the scalar loops
    String without = probeLine(run("--module-path", core() + java.io.File.pathSeparator + probe,
        "--enable-native-access=dev.maxsim4j", "-m", "probe/probe.Probe"));
    assertEquals("probe: dev.maxsim4j automatic=false backend=scalar score=0.75 internal exported=false", without);
  }

  @Test
  void aModuleThatImportsTheInternalsDoesNotCompile() throws Exception {
    Path src = writeModule("intruder", """
        package intruder;

        public class Intruder {
          dev.maxsim4j.internal.Backend backend;
        }
        """);
    Result javac = javac(src, "intruder/Intruder.java", dir.resolve("intruder-out"));
    assertNotEquals(0, javac.status(), javac.output());
    assertTrue(javac.output().contains("package dev.maxsim4j.internal is not visible"), javac.output());
  }

  @Test
  void loadsOnTheClassPathWithoutTheVectorApiAndFallsBackToScalar() throws Exception {
    String line = probeLine(run("-cp", core() + java.io.File.pathSeparator + testClasses(),
        ClassPathProbe.class.getName()));
    assertEquals("probe: unnamed backend=scalar vectorApi=false score=0.75", line);
  }

  /** The class-path side of {@link #loadsOnTheClassPathWithoutTheVectorApiAndFallsBackToScalar}. */
  static final class ClassPathProbe {
    public static void main(String[] args) {
      try (MaxSim maxSim = MaxSim.builder().backend("cpu").threads(1).build()) {
        float[][] s = maxSim.scores(TokenBatch.of(new float[][][] {{{1, 0}, {0, 1}}}),
            TokenBatch.of(new float[][][] {{{0.5f, 0.25f}}}));
        System.out.println("probe: " + (MaxSim.class.getModule().isNamed() ? "named" : "unnamed") + " backend="
            + maxSim.backendName() + " vectorApi=" + MaxSim.vectorApiAvailable() + " score=" + s[0][0]);
      }
    }
  }

  private Path compileProbe(String source) throws Exception {
    Path out = dir.resolve("probe-out");
    Result javac = javac(writeModule("probe", source), "probe/Probe.java", out);
    assertEquals(0, javac.status(), javac.output());
    return out;
  }

  /** Compiles a module against the core with this runtime's javac; skips where the runtime has none. */
  private static Result javac(Path src, String file, Path out) throws Exception {
    Path javac = Path.of(System.getProperty("java.home"), "bin", "javac");
    assumeTrue(Files.isExecutable(javac), "this runtime has no javac (a trimmed one)");
    return exec(javac.toString(), "--module-path", core().toString(), "-d", out.toString(),
        src.resolve("module-info.java").toString(), src.resolve(file).toString());
  }

  private Path writeModule(String name, String source) throws IOException {
    Path src = dir.resolve(name + "-src");
    Files.createDirectories(src.resolve(name));
    Files.writeString(src.resolve("module-info.java"), "module " + name + " { requires dev.maxsim4j; }\n");
    String file = source.substring(source.indexOf("class ") + 6).split("[ {]")[0] + ".java";
    Files.writeString(src.resolve(name).resolve(file), source);
    return src;
  }

  /** The core as built: its classes folder under Maven, its jar elsewhere; either holds module-info.class. */
  private static Path core() {
    Path p = location(MaxSim.class);
    assertTrue(Files.exists(Files.isDirectory(p) ? p.resolve("module-info.class") : p), p + " has no module-info");
    return p;
  }

  private static Path testClasses() {
    return location(ModulePathTest.class);
  }

  private static Path location(Class<?> c) {
    try {
      return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  private record Result(int status, String output) {}

  /** Runs a JVM of this runtime with {@code args}; returns what it printed, after checking it exited 0. */
  private static String run(String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-XX:-UsePerfData");
    command.addAll(List.of(args));
    Result r = exec(command.toArray(String[]::new));
    assertEquals(0, r.status(), String.join(" ", command) + "\n" + r.output());
    return r.output();
  }

  private static Result exec(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    byte[] output;
    try (InputStream in = p.getInputStream()) {
      output = in.readAllBytes();
    }
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "finished: " + String.join(" ", command));
    return new Result(p.exitValue(), new String(output, StandardCharsets.UTF_8));
  }

  private static String probeLine(String output) {
    return output.lines().filter(l -> l.startsWith("probe: ")).findFirst().orElse("(no probe line in: " + output + ")");
  }
}
