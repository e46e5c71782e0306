package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.cli.io.Npy;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A path option whose name the file system's encoding cannot hold (a non-ASCII name under the C locale, as in many
 * containers and cron jobs) is refused naming the option and the encoding, with the way out. It was "Malformed input
 * or input contains unmappable characters: ??.npy", naming neither the option nor what to do, for every command.
 */
class NonUtf8LocaleTest {
  private static final String SEPARATOR = "\u0001";
  @TempDir Path dir;

  /** Runs each command line (arguments joined by SEPARATOR) in this JVM; prints each one's status and stderr. */
  public static final class Child {
    public static void main(String[] args) {
      System.out.println("encoding " + System.getProperty("sun.jnu.encoding"));
      for (String line : args) {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = Main.run(line.split(SEPARATOR), new PrintStream(new ByteArrayOutputStream()),
            new PrintStream(err, true, StandardCharsets.UTF_8));
        System.out.println(status + " " + err.toString(StandardCharsets.UTF_8).strip().replace('\n', '|'));
      }
    }
  }

  @Test
  void pathsTheEncodingCannotHoldAreRefusedNamingTheOption() throws Exception {
    String name = "caf\u00e9";
    Npy.writeFloats(dir.resolve("q.npy"), new float[2 * 3 * 4], 2, 3, 4);
    Npy.writeFloats(dir.resolve("d.npy"), new float[2 * 3 * 4], 2, 3, 4);
    Npy.writeFloats(dir.resolve(name + ".npy"), new float[2 * 3 * 4], 2, 3, 4);
    Files.writeString(dir.resolve(name + ".txt"), "otters\n");
    Files.createDirectories(dir.resolve(name));
    Files.writeString(dir.resolve(name).resolve("a.txt"), "otters");
    String q = dir.resolve("q.npy").toString();
    String d = dir.resolve("d.npy").toString();
    String odd = dir.resolve(name).toString();
    String[][] cases = {
        {"--queries", "score", "--queries", odd + ".npy", "--docs", d, "--out", dir.resolve("s.npy").toString()},
        {"--doc-mask", "score", "--queries", q, "--docs", d, "--doc-mask", odd + ".npy", "--out", d + ".s.npy"},
        {"--out", "score", "--queries", q, "--docs", d, "--out", odd + ".s.npy"},
        {"--docs", "score", "--queries", q, "--docs", odd, "--top-k", "1", "--out-run", d + ".tsv"},
        {"--in", "quantize", "--in", odd + ".safetensors", "--to", "int8", "--out", d + ".safetensors"},
        {"--in", "encode", "--in", odd + ".txt", "--out", d + ".safetensors"},
        {"--dir", "index", "--dir", odd},
        {"--dir", "search", "--dir", odd, "--query", "otters"},
        {"--queries", "search", "--dir", dir.toString(), "--queries", odd + ".txt"},
        {"--candidates", "rerank", "--query", "otters", "--candidates", odd + ".txt"}};
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-cp",
        System.getProperty("java.class.path"), Child.class.getName()));
    for (String[] c : cases) {
      command.add(String.join(SEPARATOR, List.of(c).subList(1, c.length)));
    }
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    Map<String, String> env = pb.environment();
    env.keySet().removeIf(k -> k.startsWith("LC_") || k.equals("LANG"));
    env.put("LC_ALL", "C");
    Process p = pb.start();
    byte[] out = p.getInputStream().readAllBytes();
    assertTrue(p.waitFor(120, TimeUnit.SECONDS));
    List<String> lines = new String(out, StandardCharsets.UTF_8).lines()
        .filter(l -> !l.startsWith("WARNING:")).toList();
    Assumptions.assumeFalse(lines.get(0).contains("UTF-8"), "this system's C locale names files in UTF-8");
    assertEquals(cases.length + 1, lines.size(), String.join("\n", lines));
    for (int i = 0; i < cases.length; i++) {
      String line = lines.get(i + 1);
      String what = String.join(" ", cases[i]) + " -> " + line;
      assertTrue(line.startsWith("1 maxsim4j: error: " + cases[i][0] + " "), what);
      assertTrue(line.contains("file system's encoding") && line.contains("UTF-8 locale"), what);
      assertTrue(!line.contains("|"), "one line: " + what);
    }
  }
}
