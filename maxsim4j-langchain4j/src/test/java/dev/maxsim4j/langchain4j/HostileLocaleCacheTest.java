package dev.maxsim4j.langchain4j;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile tests: the encoder in a C locale (cron, containers) where a cache or home folder has a non-ASCII name,
 * which the JVM reads with U+FFFD and cannot turn into a Path.
 */
class HostileLocaleCacheTest {

  /** Loads the encoder; prints "loaded" or the IllegalStateException's message. */
  public static final class LoadOrSayWhy {
    public static void main(String[] args) {
      try (MiniLmTokenEncoder encoder = MiniLmTokenEncoder.load()) {
        System.out.println("loaded");
      } catch (IllegalStateException e) {
        System.out.println(e.getMessage());
      }
    }
  }

  private static String inTheCLocale(Path tmp, String xdgCacheHome, String... properties) throws Exception {
    List<String> command = new java.util.ArrayList<>(List.of(ProcessHandle.current().info().command().orElseThrow(),
        "--enable-native-access=ALL-UNNAMED", "-Djava.io.tmpdir=" + tmp));
    command.addAll(List.of(properties));
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), LoadOrSayWhy.class.getName()));
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    Map<String, String> env = pb.environment();
    env.keySet().removeIf(k -> k.startsWith("LC_") || k.equals("LANG"));
    env.put("LC_ALL", "C");
    env.put("XDG_CACHE_HOME", xdgCacheHome);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, TimeUnit.SECONDS));
    assertTrue(p.exitValue() == 0, "the child JVM failed: " + out);
    return out.lines().filter(l -> !l.startsWith("WARNING")).reduce((a, b) -> b).orElse("");
  }

  /**
   * OnnxNatives.prepare documents that without a usable cache folder it changes nothing (ONNX Runtime unpacks its
   * libraries itself); a non-ASCII XDG_CACHE_HOME under the C locale threw InvalidPathException from cacheRoot()
   * instead, so every text command failed ("Malformed input or input contains unmappable characters").
   */
  @Test
  @Timeout(300)
  void aNonAsciiCacheFolderUnderTheCLocaleStillLoads(@TempDir Path root) throws Exception {
    Path tmp = Files.createDirectory(root.resolve("tmp"));
    Path cache = Files.createDirectory(root.resolve("c\u00e4che"));
    String out = inTheCLocale(tmp, cache.toString());
    assertTrue(out.equals("loaded"), out);
  }

  /**
   * Where the DJL tokenizer cannot load (its cache under a home it cannot name), the failure is to be an
   * IllegalStateException naming the folder; the diagnosis itself threw InvalidPathException from
   * Path.of(user.home), hiding the cause.
   */
  @Test
  @Timeout(300)
  void aNonAsciiHomeUnderTheCLocaleIsNamedNotACrashOfTheDiagnosis(@TempDir Path root) throws Exception {
    Path tmp = Files.createDirectory(root.resolve("tmp"));
    Path cache = Files.createDirectory(root.resolve("cache"));
    Path home = Files.createDirectory(root.resolve("h\u00f6me"));
    String out = inTheCLocale(tmp, cache.toString(), "-Duser.home=" + home);
    assertTrue(out.equals("loaded") || out.contains("DJL_CACHE_DIR"), out);
  }
}
