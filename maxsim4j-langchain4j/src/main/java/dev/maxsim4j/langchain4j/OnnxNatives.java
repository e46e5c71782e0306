package dev.maxsim4j.langchain4j;

import ai.onnxruntime.OrtEnvironment;
import java.io.IOException;
import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URL;
import java.net.URLConnection;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.jar.JarEntry;

/**
 * ONNX Runtime's native libraries unpacked once into a cache folder, which ONNX Runtime is then told to load them
 * from ({@value #PATH_PROPERTY}): left to itself it unpacks them into a new folder of java.io.tmpdir at every start,
 * and leaves that folder behind at exit, one per process.
 */
final class OnnxNatives {
  static final String PATH_PROPERTY = "onnxruntime.native.path";
  /** The libraries of ONNX Runtime's jar that it loads, in its own names. */
  private static final String[] LIBRARIES = {"onnxruntime", "onnxruntime4j_jni"};
  /** The cache folder {@link #prepare} set {@value #PATH_PROPERTY} to, or null where it left the property alone. */
  private static volatile String unpackedTo;

  private OnnxNatives() {}

  /** The system properties that name one of ONNX Runtime's library files by hand, as {@code name=value}, if set. */
  static List<String> librariesChosen() {
    List<String> chosen = new ArrayList<>();
    for (String library : LIBRARIES) {
      String property = "onnxruntime.native." + library + ".path";
      String value = System.getProperty(property);
      if (value != null) {
        chosen.add(property + "=" + value);
      }
    }
    return chosen;
  }

  /**
   * Sets {@value #PATH_PROPERTY} to the cache folder holding this ONNX Runtime's libraries, unpacking them there
   * first where they are not yet. Changes nothing where the user chose a path, or where the libraries or the folder
   * cannot be had (not in a jar, an unknown platform, no absolute cache folder, one that cannot be written), or
   * where the jar brings more libraries than these two (a GPU build's execution providers, which ONNX Runtime
   * unpacks and loads its own way): ONNX Runtime then unpacks them as it would without this.
   */
  static synchronized void prepare() {
    if (System.getProperty(PATH_PROPERTY) != null) {
      return;
    }
    if (!librariesChosen().isEmpty()) {
      return;
    }
    String platform = platform();
    Path root = cacheRoot();
    if (platform == null || root == null) {
      return;
    }
    try {
      JarEntry[] entries = new JarEntry[LIBRARIES.length];
      URL[] urls = new URL[LIBRARIES.length];
      long key = 17;
      for (int i = 0; i < LIBRARIES.length; i++) {
        urls[i] = OrtEnvironment.class.getResource("/ai/onnxruntime/native/" + platform + "/" + fileName(i));
        URLConnection connection = urls[i] == null ? null : urls[i].openConnection();
        if (!(connection instanceof JarURLConnection jar) || jar.getJarEntry().getCrc() < 0) {
          return;
        }
        entries[i] = jar.getJarEntry();
        key = key * 31 + entries[i].getCrc();
        if (i == 0 && librariesIn(jar, "ai/onnxruntime/native/" + platform + "/") != LIBRARIES.length) {
          return;
        }
      }
      // named by the libraries' checksums: another version of ONNX Runtime unpacks into a folder of its own
      Path folder = cacheFolders(root).resolve(platform + "-" + Long.toHexString(key));
      Files.createDirectories(folder);
      for (int i = 0; i < LIBRARIES.length; i++) {
        Path library = folder.resolve(fileName(i));
        if (!Files.isRegularFile(library) || Files.size(library) != entries[i].getSize()) {
          unpack(urls[i], library);
        }
      }
      System.setProperty(PATH_PROPERTY, folder.toString());
      unpackedTo = folder.toString();
    } catch (IOException | InvalidPathException | SecurityException | UnsupportedOperationException e) {
      // ONNX Runtime unpacks them itself
    }
  }

  /**
   * Whether {@code folder} is a cache folder this class unpacks into (this process's, or one of its cache root named
   * in the property by hand or by another class loader): one that may be deleted and made again.
   */
  static boolean unpackedHere(String folder) {
    if (folder == null) {
      return false;
    }
    if (folder.equals(unpackedTo)) {
      return true;
    }
    Path root = cacheRoot();
    try {
      return root != null && Path.of(folder).toAbsolutePath().normalize().startsWith(cacheFolders(root));
    } catch (InvalidPathException e) {
      return false;
    }
  }

  /** The folder under {@code root} that holds this class's unpacked libraries, a folder per version and platform. */
  private static Path cacheFolders(Path root) {
    return root.resolve("maxsim4j").resolve("onnxruntime");
  }

  /** Copies {@code from} to {@code to} through a file beside it renamed at the end: no process sees it half made. */
  private static void unpack(URL from, Path to) throws IOException {
    Path part = Files.createTempFile(to.getParent(), to.getFileName().toString(), ".part");
    try {
      try (InputStream in = from.openStream()) {
        Files.copy(in, part, StandardCopyOption.REPLACE_EXISTING);
      }
      Files.move(part, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(part);
    }
  }

  /** The libraries in {@code folder} of the jar (debug symbols not counted). */
  private static long librariesIn(JarURLConnection jar, String folder) throws IOException {
    return jar.getJarFile().stream().map(JarEntry::getName)
        .filter(n -> n.startsWith(folder) && n.length() > folder.length() && !n.endsWith("/"))
        .filter(n -> !n.endsWith(".pdb") && !n.contains(".dSYM")).count();
  }

  private static String fileName(int library) {
    return System.mapLibraryName(LIBRARIES[library]);
  }

  /** The folder ONNX Runtime's jar keeps this platform's libraries in (its own names), or null where unknown. */
  private static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    String o = os.contains("linux") ? "linux" : os.contains("mac") || os.contains("darwin") ? "osx"
        : os.contains("win") ? "win" : null;
    String a = arch.equals("amd64") || arch.equals("x86_64") ? "x64" : arch.equals("aarch64") ? "aarch64" : null;
    return o == null || a == null ? null : o + "-" + a;
  }

  /**
   * XDG_CACHE_HOME where it is an absolute path (as the XDG rules have it), else ~/.cache; null without a home, or
   * where the folder's name is not one this locale's encoding can hold (a non-ASCII home under the C locale).
   */
  private static Path cacheRoot() {
    try {
      String xdg = System.getenv("XDG_CACHE_HOME");
      if (xdg != null && !xdg.isEmpty() && Path.of(xdg).isAbsolute()) {
        return Path.of(xdg);
      }
      Path home = Path.of(System.getProperty("user.home", ""));
      return home.isAbsolute() ? home.resolve(".cache") : null;
    } catch (InvalidPathException e) {
      return null;
    }
  }
}
