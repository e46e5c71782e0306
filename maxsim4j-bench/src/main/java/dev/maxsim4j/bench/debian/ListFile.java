package dev.maxsim4j.bench.debian;

import dev.maxsim4j.cli.io.Absent;
import java.nio.file.Files;
import java.nio.file.Path;

/** An apt list given as an option, checked before it is read, in the words the user commands use for inputs. */
public final class ListFile {
  private ListFile() {}

  /**
   * Refuses {@code file} (given as {@code option}) unless it is a regular file, saying why as the user commands do
   * ("no such file", "is a directory"), so that a mistyped name is not taken for a file of the wrong kind;
   * {@code expected} says what it should be, e.g. "an apt list".
   */
  public static void require(String option, Path file, String expected) {
    String tail = "; expected " + expected;
    if (Files.isDirectory(file)) {
      throw new IllegalArgumentException(option + " " + file + " is a directory" + tail);
    }
    if (!Files.exists(file)) {
      throw new IllegalArgumentException(option + " " + file + (Files.isSymbolicLink(file)
          ? " is a link to no readable file" : ": " + Absent.why(file)) + tail);
    }
    if (!Files.isRegularFile(file)) {
      // read whole: a pipe would block until a writer came, a device such as /dev/zero never end
      throw new IllegalArgumentException(option + " " + file + " is not a regular file (a pipe, device or socket)"
          + tail);
    }
  }
}
