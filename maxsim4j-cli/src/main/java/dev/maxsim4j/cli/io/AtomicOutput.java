package dev.maxsim4j.cli.io;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Collection;
import java.util.concurrent.ThreadLocalRandom;

/**
 * An output file written in full to a temporary file beside it and then moved into place in one step,
 * so that a failed or interrupted run never leaves a half-written file or destroys the previous one.
 * Created before the work starts, it also proves the target folder exists and is writable.
 */
public final class AtomicOutput implements AutoCloseable {
  private final Path target;
  private final Path temp;
  private boolean committed;

  private AtomicOutput(Path target, Path temp) {
    this.target = target;
    this.temp = temp;
  }

  /**
   * Checks {@code target} (given as {@code option}) and reserves its temporary file: refuses a folder, a
   * missing or unwritable folder to write into, and any of {@code inputs} (compared as files, not names).
   */
  public static AtomicOutput create(String option, Path target, Collection<Path> inputs) throws IOException {
    if (Files.isDirectory(target)) {
      throw new IllegalArgumentException(option + " " + target + " is a directory; expected a file to write");
    }
    if (Files.exists(target)) {
      for (Path input : inputs) {
        if (Files.exists(input) && Files.isSameFile(target, input)) {
          throw new IllegalArgumentException(option + " " + target + " is also the input " + input
              + "; write the output to another file");
        }
      }
    }
    Path folder = target.toAbsolutePath().getParent();
    if (folder == null || !Files.isDirectory(folder)) {
      throw new IllegalArgumentException(option + " " + target + ": the folder " + folder + " does not exist");
    }
    Path temp = folder.resolve("." + target.getFileName() + "." + Long.toHexString(ThreadLocalRandom.current()
        .nextLong()) + ".tmp");
    try {
      Files.createFile(temp);
    } catch (AccessDeniedException e) {
      throw new IllegalArgumentException(option + " " + target + ": the folder " + folder + " is not writable");
    }
    return new AtomicOutput(target, temp);
  }

  /** Where to write the content. */
  public Path temp() {
    return temp;
  }

  /** Moves the complete temporary file onto the target. */
  public void commit() throws IOException {
    try {
      Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
    }
    committed = true;
  }

  /** Removes the temporary file unless it was committed. */
  @Override
  public void close() throws IOException {
    if (!committed) {
      Files.deleteIfExists(temp);
    }
  }
}
