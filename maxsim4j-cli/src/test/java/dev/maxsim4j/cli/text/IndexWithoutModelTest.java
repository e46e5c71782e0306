package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.cli.Main;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code index} loads the model only to encode: in a JVM where ONNX Runtime cannot load at all (its library path
 * points nowhere), an unchanged folder is indexed and a folder without text is refused for what it is.
 */
class IndexWithoutModelTest {

  private static List<String> indexWithoutOnnxRuntime(Path folder, Path scratch) throws Exception {
    List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
        "-Donnxruntime.native.path=" + scratch.resolve("no-such-folder"), "-cp", System.getProperty("java.class.path"),
        Main.class.getName(), "index", "--dir", folder.toString(), "--backend", "vector");
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the child JVM ended");
    return List.of(Integer.toString(p.exitValue()), out);
  }

  @Test
  @Timeout(300)
  void anUnchangedFolderAndOneWithoutTextNeedNoModel(@TempDir Path dir) throws Exception {
    Path folder = Files.createDirectory(dir.resolve("texts"));
    Files.writeString(folder.resolve("a.txt"), "Late interaction scores every query token against every document"
        + " token.");
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    assertEquals(0, Main.run(new String[] {"index", "--dir", folder.toString(), "--backend", "vector"},
        new PrintStream(new ByteArrayOutputStream()), new PrintStream(err, true, StandardCharsets.UTF_8)),
        err.toString(StandardCharsets.UTF_8));
    List<String> unchanged = indexWithoutOnnxRuntime(folder, dir);
    assertEquals("0", unchanged.get(0), unchanged.get(1));
    assertTrue(unchanged.get(1).contains("(0 encoded, 1 reused, 0 skipped)"), unchanged.get(1));
    Path empty = Files.createDirectory(dir.resolve("empty"));
    List<String> none = indexWithoutOnnxRuntime(empty, dir);
    assertTrue(none.get(1).contains("holds no .txt or .md file"), none.get(1));
  }
}
