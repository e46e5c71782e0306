package dev.maxsim4j.langchain4j;

import ai.djl.engine.EngineException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Why ONNX Runtime's or the DJL tokenizer's native library did not load, in words a user can act on. Both unpack
 * their libraries on first use (ONNX Runtime into java.io.tmpdir or maxsim4j's cache, the tokenizer into DJL's
 * cache), and the cause names a folder they cannot use only deep down: the folders are checked and named, and the
 * system's words for a mount that forbids running code or a process out of file descriptors are turned into the
 * way out. Only where the failing library is ONNX Runtime's and nothing else explains it is its folder suspect.
 */
final class NativeLoadFailure {
  /** Free bytes below which a folder cannot take the tokenizer's library (about 10 MB) unpacked into it. */
  private static final long LIBRARY_ROOM = 16L << 20;

  private NativeLoadFailure() {}

  static IllegalStateException explain(Throwable e) {
    Throwable root = root(e);
    // a Java class missing is no native library: on the module path, SLF4J, which nothing requires, is not resolved
    if (root instanceof ClassNotFoundException || root instanceof NoClassDefFoundError) {
      return new IllegalStateException("a class that ONNX Runtime or the DJL tokenizer needs cannot be found ("
          + root + "); put it on the class path, or on the module path add its module (--add-modules org.slf4j"
          + " for org.slf4j)", e);
    }
    String said = messages(e);
    // the library's file names which failed (a folder's name may hold "tokenizers" too)
    boolean tokenizer = said.contains("libtokenizers.") || said.contains("tokenizers.dll")
        || root instanceof EngineException;
    String tmp = System.getProperty("java.io.tmpdir", "");
    String djl = DjlNatives.cacheFolder();
    List<String> causes = new ArrayList<>();
    // ONNX Runtime makes its folder in java.io.tmpdir, which must be there already (DJL makes its cache)
    if (!isFolder(tmp) || !writable(tmp)) {
      causes.add("java.io.tmpdir (" + tmp + ") is not a folder this process can write: set -Djava.io.tmpdir");
    }
    if (!nameable(djl)) {
      causes.add("DJL's cache (" + djl + ") has a name this locale's encoding ("
          + System.getProperty("sun.jnu.encoding") + ") cannot hold: set DJL_CACHE_DIR to another folder (or"
          + " ENGINE_CACHE_DIR for the native libraries alone), or use a UTF-8 locale");
    } else if (!writable(djl)) {
      causes.add("DJL's cache (" + djl + ") is not a folder this process can write: set DJL_CACHE_DIR (or"
          + " ENGINE_CACHE_DIR for the native libraries alone)");
    }
    if (said.contains("failed to map segment")) {
      causes.add((tokenizer ? "DJL's cache (" + djl + ")" : "the folder ONNX Runtime unpacked into") + " is on a file"
          + " system mounted noexec, where no library may be loaded: set " + (tokenizer
              ? "DJL_CACHE_DIR (or ENGINE_CACHE_DIR)" : "XDG_CACHE_HOME (maxsim4j's cache) and -Djava.io.tmpdir")
          + " to a folder on another");
    }
    if (said.contains("Too many open files")) {
      causes.add("this process has no file descriptor left to open the library: raise ulimit -n");
    }
    // a full disk shows only as DJL's "Unexpected flavor": its library was never written whole
    if (causes.isEmpty() && tokenizer && writable(djl) && free(djl) < LIBRARY_ROOM) {
      causes.add("DJL's cache (" + djl + ") has " + free(djl) + " bytes free, too few to unpack the tokenizer's"
          + " library: free some, or set DJL_CACHE_DIR (or ENGINE_CACHE_DIR) to another file system");
    }
    String suspect = tokenizer ? "" : onnxRuntimeSource();
    return new IllegalStateException("cannot load the native library of " + (tokenizer ? "the DJL tokenizer"
        : "ONNX Runtime or the DJL tokenizer") + " (" + root + ")"
        + (causes.isEmpty() ? suspect : "; " + String.join("; ", causes)), e);
  }

  /**
   * Where ONNX Runtime's libraries came from, as a message's last clause, when the user or maxsim4j chose it; empty
   * where ONNX Runtime unpacked them itself. They are suspect only where nothing else explains the failure, and are
   * to be deleted only where maxsim4j unpacked them, not where the user chose them. ONNX Runtime's own loader reads
   * the folder's property first, and a library's own property only where the folder's is unset.
   */
  private static String onnxRuntimeSource() {
    String natives = System.getProperty(OnnxNatives.PATH_PROPERTY);
    if (natives == null) {
      List<String> files = OnnxNatives.librariesChosen();
      if (files.isEmpty()) {
        return "";
      }
      boolean one = files.size() == 1;
      return "; ONNX Runtime's came from the system propert" + (one ? "y " : "ies ") + String.join(" and ", files)
          + ": expected " + (one ? "it" : "each") + " to name this ONNX Runtime's library file, or the propert"
          + (one ? "y" : "ies") + " unset";
    }
    return "; ONNX Runtime's came from " + natives + " (the system property " + OnnxNatives.PATH_PROPERTY
        + (OnnxNatives.unpackedHere(natives)
            ? ", maxsim4j's cache): delete that folder, and it is unpacked again at the next start"
            : ", as set): expected that folder to hold this ONNX Runtime's libraries, or the property unset");
  }

  /** Every message of the chain of causes: the system's words may sit on any of them. */
  private static String messages(Throwable e) {
    StringBuilder all = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      all.append(t.getMessage()).append('\n');
    }
    return all.toString();
  }

  /** Whether {@code folder} is a name this locale's encoding can hold (not so for non-ASCII under the C locale). */
  private static boolean nameable(String folder) {
    try {
      Path.of(folder);
      return true;
    } catch (InvalidPathException e) {
      return false;
    }
  }

  private static boolean isFolder(String folder) {
    try {
      return Files.isDirectory(Path.of(folder).toAbsolutePath());
    } catch (InvalidPathException e) {
      return false;
    }
  }

  /**
   * Whether {@code folder} is, or could be made as, a folder this process can write. Its permissions are confirmed by
   * making (and deleting) a file in it or its nearest existing ancestor, since they pass a root process in /proc
   * and /sys; a failure other than a denial or a missing folder (a full disk) leaves it writable, for the free space
   * to be named.
   */
  private static boolean writable(String folder) {
    Path p = existing(folder);
    if (p == null || !Files.isDirectory(p) || !Files.isWritable(p)) {
      return false;
    }
    Path probe;
    try {
      probe = Files.createTempFile(p, ".maxsim4j-probe-", "");
    } catch (AccessDeniedException | NoSuchFileException e) {
      return false;
    } catch (IOException | SecurityException | UnsupportedOperationException e) {
      return true;
    }
    try {
      Files.deleteIfExists(probe);
    } catch (IOException | SecurityException e) {
      // the folder took the file, which is what was asked; a file left behind is the only cost
    }
    return true;
  }

  /** The bytes free to this process where {@code folder} is or would be made; unknown counts as plenty. */
  private static long free(String folder) {
    Path p = existing(folder);
    try {
      return p == null ? Long.MAX_VALUE : Files.getFileStore(p).getUsableSpace();
    } catch (IOException | SecurityException e) {
      return Long.MAX_VALUE;
    }
  }

  /** {@code folder}, or its nearest ancestor that exists; null where there is none or it cannot be named. */
  private static Path existing(String folder) {
    try {
      Path p = Path.of(folder).toAbsolutePath();
      while (p != null && !Files.exists(p)) {
        p = p.getParent();
      }
      return p;
    } catch (InvalidPathException e) {
      return null;
    }
  }

  private static Throwable root(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root;
  }
}
