package dev.maxsim4j.cli.io;

import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Why a path cannot be reached, as the system says it: {@link java.nio.file.Files#exists} answers false alike for a
 * missing file and for a name the file system cannot hold, and "no such file" would then send the user looking for
 * a file that was never the problem.
 */
public final class Absent {
  private Absent() {}

  /**
   * The reason {@code path} is not there in a few words: "no such file", or the system's own where it is another
   * (e.g. "file name too long", "not a directory" for a file where a folder of the path belongs). "no such file"
   * too if it is there after all: it came meanwhile, and the caller's next step sees it.
   */
  public static String why(Path path) {
    try {
      path.getFileSystem().provider().checkAccess(path);
      return "no such file";
    } catch (NoSuchFileException e) {
      return "no such file";
    } catch (java.nio.file.AccessDeniedException e) {
      return "permission denied"; // a folder of the path this user may not search: the JDK gives no reason
    } catch (FileSystemException e) {
      String reason = e.getReason();
      return reason == null || reason.isEmpty() ? "no such file"
          : reason.substring(0, 1).toLowerCase(Locale.ROOT) + reason.substring(1);
    } catch (IOException | SecurityException e) {
      return "no such file";
    }
  }
}
