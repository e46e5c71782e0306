package dev.maxsim4j.langchain4j;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URL;
import java.net.URLConnection;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Properties;

/**
 * Where the DJL tokenizer keeps its native library, worked out as DJL does, and a check of the copy there before
 * DJL loads it: a copy cut short (a full disk, a killed unpacking) faults inside the system's dynamic loader, which
 * takes the whole JVM down, where a damaged one of its full size is only refused.
 */
final class DjlNatives {
  private DjlNatives() {}

  /**
   * DJL's engine cache, as its Utils has it: ENGINE_CACHE_DIR, else DJL_CACHE_DIR, else .djl.ai in the home folder,
   * or in java.io.tmpdir where the home cannot be written; each variable from the environment where it is set there,
   * even to nothing, else from the system property, and an empty value as unset. A string: a folder this locale
   * cannot name is still named.
   */
  static String cacheFolder() {
    String engine = setting("ENGINE_CACHE_DIR");
    if (engine != null) {
      return engine;
    }
    String cache = setting("DJL_CACHE_DIR");
    if (cache != null) {
      return cache;
    }
    String home = System.getProperty("user.home", "");
    String base;
    try {
      base = Files.isWritable(Path.of(home)) ? home : System.getProperty("java.io.tmpdir", "");
    } catch (InvalidPathException e) {
      base = home; // DJL fails on it too: that is the folder to name
    }
    return base.isEmpty() ? ".djl.ai" : base + File.separator + ".djl.ai";
  }

  /** As DJL reads a setting: an environment variable set to nothing hides the system property of its name. */
  static String setting(String name) {
    return effective(System.getenv(name), System.getProperty(name));
  }

  static String effective(String environment, String property) {
    String v = environment != null ? environment : property;
    return v == null || v.isEmpty() ? null : v;
  }

  /**
   * Removes the cached tokenizer library where its size is not that of the copy in DJL's jar, so that DJL unpacks it
   * again; changes nothing where either cannot be found (another platform, a GPU flavour, a folder this locale
   * cannot name).
   */
  static void prepare() {
    try {
      String platform = platform();
      URL version = HuggingFaceTokenizer.class.getResource("/native/lib/tokenizers.properties");
      if (platform == null || version == null) {
        return;
      }
      Properties p = new Properties();
      try (InputStream in = version.openStream()) {
        p.load(in);
      }
      String library = System.mapLibraryName("tokenizers");
      URL bundled = HuggingFaceTokenizer.class.getResource("/native/lib/" + platform + "/cpu/" + library);
      URLConnection connection = bundled == null ? null : bundled.openConnection();
      if (!(connection instanceof JarURLConnection jar) || jar.getJarEntry().getSize() < 0
          || p.getProperty("version") == null) {
        return;
      }
      Path cached = Path.of(cacheFolder(), "tokenizers", p.getProperty("version") + "-cpu-" + platform, library);
      if (Files.isRegularFile(cached) && Files.size(cached) != jar.getJarEntry().getSize()) {
        Files.delete(cached);
      }
    } catch (IOException | InvalidPathException | SecurityException e) {
      // DJL loads what is there, and a failure is explained then (NativeLoadFailure)
    }
  }

  /** DJL's name for this platform's folder of native libraries, or null where unknown. */
  private static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    String o = os.contains("linux") ? "linux" : os.contains("mac") ? "osx" : os.contains("win") ? "win" : null;
    String a = arch.equals("amd64") || arch.equals("x86_64") ? "x86_64" : arch.equals("aarch64") ? "aarch64" : null;
    return o == null || a == null ? null : o + "-" + a;
  }
}
