package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A class's main run in a JVM of its own (JVM flags such as lane widths apply per process), on this class path. */
final class ChildJvm {
  private ChildJvm() {}

  /** Runs {@code main} with {@code jvmOptions} and {@code args}; asserts it ended in time with status 0. */
  static String run(List<String> jvmOptions, Class<?> main, int seconds, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-XX:-UsePerfData"));
    command.addAll(jvmOptions);
    command.addAll(List.of("--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-cp",
        System.getProperty("java.class.path"), main.getName()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output;
    try (InputStream in = p.getInputStream()) {
      output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    assertTrue(p.waitFor(seconds, TimeUnit.SECONDS), "finished: " + String.join(" ", command));
    assertEquals(0, p.exitValue(), String.join(" ", command) + "\n" + output);
    return output;
  }
}
