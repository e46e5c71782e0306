package dev.maxsim4j.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * A process that loads the encoder leaves nothing in java.io.tmpdir: ONNX Runtime's libraries are unpacked once into
 * the cache and loaded from there by every later process.
 */
class OnnxNativesTest {

  /** Loads the encoder, prints where ONNX Runtime's libraries came from. */
  public static final class LoadOnce {
    public static void main(String[] args) {
      try (MiniLmTokenEncoder encoder = MiniLmTokenEncoder.load()) {
        System.out.println(System.getProperty(OnnxNatives.PATH_PROPERTY));
      }
    }
  }

  /** Loads the encoder; prints why it could not. */
  public static final class LoadOrSayWhy {
    public static void main(String[] args) {
      try (MiniLmTokenEncoder encoder = MiniLmTokenEncoder.load()) {
        System.out.println("loaded");
      } catch (IllegalStateException e) {
        System.out.println(e.getMessage());
      }
    }
  }

  private static String load(Path tmp, Path cache) throws IOException, InterruptedException {
    return run(LoadOnce.class, tmp, cache);
  }

  private static String run(Class<?> main, Path tmp, Path cache, String... properties)
      throws IOException, InterruptedException {
    return run(main, tmp, cache, Map.of(), properties);
  }

  /**
   * {@code main}'s last line in a child JVM with {@code environment} added (LC_ALL=C: cron jobs, containers), where
   * DJL's folders come from that, or from the home, not from this environment.
   */
  private static String run(Class<?> main, Path tmp, Path cache, Map<String, String> environment,
      String... properties) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--enable-native-access=ALL-UNNAMED", "-Djava.io.tmpdir=" + tmp));
    command.addAll(List.of(properties));
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.environment().put("XDG_CACHE_HOME", cache.toString());
    if (!environment.isEmpty()) {
      boolean locale = environment.containsKey("LC_ALL");
      pb.environment().keySet().removeIf(k -> locale && (k.startsWith("LC_") || k.equals("LANG"))
          || k.equals("DJL_CACHE_DIR") || k.equals("ENGINE_CACHE_DIR"));
      pb.environment().putAll(environment);
    }
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the child JVM ended");
    assertEquals(0, p.exitValue(), out);
    return out.lines().filter(l -> !l.startsWith("WARNING")).reduce((a, b) -> b).orElse("");
  }

  /**
   * A cache folder the C locale cannot name (non-ASCII: the JVM reads it with U+FFFD) leaves ONNX Runtime to unpack
   * its libraries itself, as without a cache: it threw InvalidPathException, so that every text command failed.
   */
  @Test
  @Timeout(300)
  void aNonAsciiCacheFolderUnderTheCLocaleStillLoads(@TempDir Path root) throws Exception {
    Path tmp = Files.createDirectory(root.resolve("tmp"));
    Path cache = Files.createDirectory(root.resolve("c\u00e4che"));
    String out = run(LoadOrSayWhy.class, tmp, cache, Map.of("LC_ALL", "C"));
    assertEquals("loaded", out);
  }

  /**
   * A home the C locale cannot name, where the DJL tokenizer keeps its cache, which then does not load: the failure
   * names DJL's folder and why (the diagnosis itself threw InvalidPathException, hiding the cause; then it called a
   * folder it could not name unwritable).
   */
  @Test
  @Timeout(300)
  void aNonAsciiHomeUnderTheCLocaleIsNamedNotACrashOfTheDiagnosis(@TempDir Path root) throws Exception {
    Path tmp = Files.createDirectory(root.resolve("tmp"));
    Path cache = Files.createDirectory(root.resolve("cache"));
    Path home = Files.createDirectory(root.resolve("h\u00f6me"));
    String out = run(LoadOrSayWhy.class, tmp, cache, Map.of("LC_ALL", "C"), "-Duser.home=" + home);
    assertTrue(out.contains("DJL's cache (" + root.resolve("h")), out); // the rest as this locale reads it
    assertTrue(out.contains("has a name this locale's encoding (ANSI_X3.4-1968) cannot hold: set DJL_CACHE_DIR"), out);
  }

  /**
   * A DJL tokenizer library that does not load (damaged here; on a noexec mount or a full disk alike) is named as the
   * one that failed, not blamed on ONNX Runtime's cached libraries, which load: the message said to delete those; one
   * cut short is unpacked again. Found by hostile testers.
   */
  @Test
  @Timeout(300)
  void aDamagedTokenizerLibraryIsNotBlamedOnOnnxRuntime(@TempDir Path root) throws Exception {
    Path tmp = Files.createDirectory(root.resolve("tmp"));
    Path cache = Files.createDirectory(root.resolve("cache"));
    Path djl = Files.createDirectory(root.resolve("djl"));
    Map<String, String> environment = Map.of("DJL_CACHE_DIR", djl.toString());
    assertEquals("loaded", run(LoadOrSayWhy.class, tmp, cache, environment));
    try (Stream<Path> s = Files.walk(djl.resolve("tokenizers"))) {
      for (Path f : s.filter(Files::isRegularFile).toList()) {
        Files.write(f, new byte[(int) Files.size(f)]); // the same size, not an ELF file
      }
    }
    String why = run(LoadOrSayWhy.class, tmp, cache, environment);
    assertTrue(why.startsWith("cannot load the native library of the DJL tokenizer") && why.contains("libtokenizers")
        && !why.contains("delete that folder"), why);
    // cut short (a full disk, a killed unpacking), it faulted inside the dynamic loader and took the JVM down: a
    // copy of another size than the jar's is unpacked again
    try (Stream<Path> s = Files.walk(djl.resolve("tokenizers"))) {
      for (Path f : s.filter(Files::isRegularFile).toList()) {
        Files.write(f, new byte[1_000_000]);
      }
    }
    assertEquals("loaded", run(LoadOrSayWhy.class, tmp, cache, environment));
    // an environment variable set to nothing hides the property of its name, as DJL reads it: the check must look
    // in DJL_CACHE_DIR, where DJL loads the copy cut short from, not in the property's folder
    try (Stream<Path> s = Files.walk(djl.resolve("tokenizers"))) {
      for (Path f : s.filter(Files::isRegularFile).toList()) {
        Files.write(f, new byte[1_000_000]);
      }
    }
    Path other = Files.createDirectory(root.resolve("other"));
    assertEquals("loaded", run(LoadOrSayWhy.class, tmp, cache,
        Map.of("DJL_CACHE_DIR", djl.toString(), "ENGINE_CACHE_DIR", ""), "-DENGINE_CACHE_DIR=" + other));
  }

  /** DJL's reading of a setting: the environment's value where it is set, even to nothing; empty as unset. */
  @Test
  void aSettingIsReadAsDjlReadsIt() {
    assertEquals("/env", DjlNatives.effective("/env", "/property"));
    assertEquals(null, DjlNatives.effective("", "/property"));
    assertEquals("/property", DjlNatives.effective(null, "/property"));
    assertEquals(null, DjlNatives.effective(null, ""));
    assertEquals(null, DjlNatives.effective(null, null));
  }

  /**
   * A java.io.tmpdir that is not there is named as the cause: ONNX Runtime unpacks into it. The message blamed the
   * cached libraries ("delete that folder"), since a missing folder whose parent could be written passed as
   * writable.
   */
  @Test
  @Timeout(300)
  void aMissingTemporaryFolderIsNamedAsTheCause(@TempDir Path root) throws Exception {
    Path cache = Files.createDirectory(root.resolve("cache"));
    String missing = run(LoadOrSayWhy.class, root.resolve("no-such-tmp"), cache);
    assertTrue(missing.contains("java.io.tmpdir (" + root.resolve("no-such-tmp") + ") is not a folder this process"
        + " can write") && !missing.contains("delete that folder"), missing);
  }

  /**
   * A DJL cache that cannot be made where its permissions say it could (in /proc, which a root process may "write";
   * for another user the permissions already refuse it) is named as not writable, not as a file system with 0
   * bytes free, which /proc reports.
   */
  @Test
  @Timeout(300)
  @EnabledOnOs(OS.LINUX)
  void aCacheThatCannotBeMadeIsNotWritableRatherThanFull(@TempDir Path root) throws Exception {
    Path tmp = Files.createDirectory(root.resolve("tmp"));
    Path cache = Files.createDirectory(root.resolve("cache"));
    String djl = "/proc/maxsim4j-no-such-cache";
    String why = run(LoadOrSayWhy.class, tmp, cache, Map.of("DJL_CACHE_DIR", djl));
    assertTrue(why.contains("DJL's cache (" + djl + ") is not a folder this process can write")
        && !why.contains("bytes free"), why);
  }

  /**
   * Libraries that do not load are to be deleted only from maxsim4j's own cache, which is unpacked again; a folder the
   * user named is theirs: the message asked to delete it too.
   */
  @Test
  @Timeout(300)
  void onlyMaxsim4jsOwnCacheIsToBeDeleted(@TempDir Path root) throws Exception {
    Path tmp = Files.createDirectory(root.resolve("tmp"));
    Path cache = Files.createDirectory(root.resolve("cache"));
    Path chosen = Files.createDirectory(root.resolve("chosen"));
    Files.write(chosen.resolve(System.mapLibraryName("onnxruntime")), new byte[64]);
    Files.write(chosen.resolve(System.mapLibraryName("onnxruntime4j_jni")), new byte[64]);
    String theirs = run(LoadOrSayWhy.class, tmp, cache, "-D" + OnnxNatives.PATH_PROPERTY + "=" + chosen);
    assertTrue(theirs.contains("came from " + chosen) && theirs.contains("as set") && !theirs.contains("delete"),
        theirs);

    // the cache's libraries overwritten in place, their sizes kept: they are not unpacked again, and do not load
    Path folder = Path.of(load(tmp, cache));
    for (Path library : under(folder)) {
      Files.write(library, new byte[(int) Files.size(library)]);
    }
    String ours = run(LoadOrSayWhy.class, tmp, cache);
    assertTrue(ours.contains("came from " + folder) && ours.contains("delete that folder"), ours);
    // also where the property names that folder by hand (copied from an earlier message, say)
    String named = run(LoadOrSayWhy.class, tmp, cache, "-D" + OnnxNatives.PATH_PROPERTY + "=" + folder);
    assertTrue(named.contains("came from " + folder) && named.contains("delete that folder"), named);
  }

  /**
   * A library file named by hand (ONNX Runtime's per-library property) that does not load is named in the message,
   * unless the folder's property is set too, which ONNX Runtime reads first.
   */
  @Test
  @Timeout(300)
  void aLibraryFileChosenByHandIsNamed(@TempDir Path root) throws Exception {
    Path tmp = Files.createDirectory(root.resolve("tmp"));
    Path cache = Files.createDirectory(root.resolve("cache"));
    Path bad = Files.write(root.resolve(System.mapLibraryName("onnxruntime")), new byte[64]);
    String why = run(LoadOrSayWhy.class, tmp, cache, "-Donnxruntime.native.onnxruntime.path=" + bad);
    assertTrue(why.startsWith("cannot load the native library of ONNX Runtime")
        && why.contains("came from the system property onnxruntime.native.onnxruntime.path=" + bad)
        && !why.contains("delete"), why);
    // with the folder's property set too, ONNX Runtime loads from the folder, and the message names that
    Path chosen = Files.createDirectory(root.resolve("chosen"));
    Files.write(chosen.resolve(System.mapLibraryName("onnxruntime")), new byte[64]);
    Files.write(chosen.resolve(System.mapLibraryName("onnxruntime4j_jni")), new byte[64]);
    String both = run(LoadOrSayWhy.class, tmp, cache, "-Donnxruntime.native.onnxruntime.path=" + bad,
        "-D" + OnnxNatives.PATH_PROPERTY + "=" + chosen);
    assertTrue(both.contains("came from " + chosen) && !both.contains("onnxruntime.native.onnxruntime.path"), both);
  }

  private static List<Path> under(Path folder) throws IOException {
    try (Stream<Path> s = Files.list(folder)) {
      return s.toList();
    }
  }

  @Test
  @Timeout(300)
  void aProcessLeavesNothingInTheTemporaryFolderAndTheLibrariesAreUnpackedOnce(@TempDir Path root)
      throws Exception {
    Path tmp = Files.createDirectory(root.resolve("tmp"));
    Path cache = Files.createDirectory(root.resolve("cache"));
    String folder = load(tmp, cache);
    assertTrue(folder.startsWith(cache.resolve("maxsim4j").resolve("onnxruntime").toString()), folder);
    assertEquals(List.of(), under(tmp), "nothing left in java.io.tmpdir");
    Path library = Path.of(folder, System.mapLibraryName("onnxruntime"));
    assertTrue(Files.size(library) > 0, library.toString());
    assertEquals(2, under(Path.of(folder)).size(), "the two libraries, no partial file: " + under(Path.of(folder)));
    FileTime unpacked = Files.getLastModifiedTime(library);
    assertEquals(folder, load(tmp, cache), "the same folder again");
    assertEquals(unpacked, Files.getLastModifiedTime(library), "not unpacked again");
    assertEquals(List.of(), under(tmp));
  }
}
