package dev.maxsim4j.cli.text;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Keeps one maxsim4j run at a time updating a folder's index ({@code FOLDER/.maxsim4j/}: the tokens file, the
 * manifest and the Lucene index, which must stay in line): held from before the index is read (for a folder without
 * one, from before it is first written) until the Lucene index is in line with it; a second run waits, saying so.
 * The lock is the operating system's on {@code .maxsim4j/update.lock} (released when the process ends, killed or
 * not; the file stays, empty), and a lock per folder within this JVM (the operating system's is the whole
 * process's).
 */
public final class UpdateLock implements AutoCloseable {
  static final String FILE = "update.lock";
  /** The folders runs of this JVM hold or wait for, each dropped when its last user closes. */
  private static final Map<Path, Shared> IN_PROCESS = new ConcurrentHashMap<>();

  /**
   * A folder's in-process lock, the one channel this JVM opens on its lock file, and how many runs hold the lock or
   * wait for it. One channel: the operating system's lock belongs to the process, and closing any channel on the file
   * releases it (FileChannel's javadoc), so a run that gave up waiting would otherwise drop the holder's lock.
   */
  private static final class Shared {
    final ReentrantLock lock = new ReentrantLock();
    FileChannel channel; // opened by a holder of the lock, closed with the last user
    int users; // changed only inside the map's compute, which runs one at a time per folder
  }

  private final PrintStream err;
  private Path key;
  private Shared shared;
  private FileLock lock;
  private long since;

  /** A lock not yet held ({@code err}: where a run that waits says so). */
  public UpdateLock(PrintStream err) {
    this.err = err;
  }

  /**
   * Takes the lock of the index folder {@code dir}, waiting for another run that holds it; returns whether it is
   * held. Not held when the lock file cannot be made (a read-only folder, where this run cannot write either).
   * Something other than a regular file where the lock file belongs, or one that cannot be opened in a folder that
   * can be written, is refused: runs would update the index at once.
   */
  boolean hold(Path dir) throws IOException {
    if (shared != null) {
      return lock != null;
    }
    Path file = dir.resolve(FILE);
    try {
      Files.createDirectories(dir);
      key = dir.toRealPath();
    } catch (IOException e) {
      return false;
    }
    shared = IN_PROCESS.compute(key, (k, s) -> {
      Shared entry = s == null ? new Shared() : s;
      entry.users++;
      return entry;
    });
    try {
      if (!shared.lock.tryLock()) {
        waiting(dir);
        shared.lock.lockInterruptibly();
      }
      if (shared.channel == null) {
        if (Files.exists(file, LinkOption.NOFOLLOW_LINKS) && !Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
          // not opened: a pipe opened to write waits for a reader, forever; a link may point anywhere. Not replaced
          // either: another process may be replacing it too, and the two would then hold locks on two files
          throw new IllegalArgumentException(TextFiles.shown(file) + " is " + kind(file) + "; expected the empty"
              + " regular file that keeps maxsim4j runs from updating this index at once: remove it");
        }
        try {
          shared.channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
              LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
          if (Files.exists(file, LinkOption.NOFOLLOW_LINKS) && Files.isWritable(dir)) {
            // runs that update the folder's index without the lock could not take turns, nor delete what another
            // left, so each update would leave a tokens file behind
            throw new IllegalArgumentException(TextFiles.shown(file) + " cannot be opened to write ("
                + TextFiles.reason(e) + "); expected the empty regular file that keeps maxsim4j runs from updating"
                + " this index at once: make it writable, or remove it");
          }
          close();
          return false;
        }
      }
      lock = shared.channel.tryLock();
      if (lock == null) {
        waiting(dir);
        lock = shared.channel.lock();
      }
      since = System.currentTimeMillis();
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      close();
      throw new IOException("interrupted while waiting for another maxsim4j run updating " + TextFiles.shown(dir));
    } catch (IOException | RuntimeException | Error e) {
      close();
      throw e;
    }
  }

  private static String kind(Path file) {
    return Files.isSymbolicLink(file) ? "a symbolic link" : Files.isDirectory(file, LinkOption.NOFOLLOW_LINKS)
        ? "a folder" : "not a regular file (a pipe, socket or device)";
  }

  private void waiting(Path dir) {
    err.println("maxsim4j: another maxsim4j run is updating the index in " + TextFiles.shown(dir)
        + "; waiting for it to finish");
  }

  /** Folders whose in-process lock a run of this JVM holds or waits for (tests). */
  static int foldersInUse() {
    return IN_PROCESS.size();
  }

  /** Whether this run holds the lock. */
  boolean held() {
    return lock != null;
  }

  /** When the lock was taken, in milliseconds since the epoch (as file modification times). */
  long since() {
    return since;
  }

  @Override
  public void close() throws IOException {
    if (shared == null) {
      return;
    }
    Shared entry = shared;
    shared = null;
    IOException failed = null;
    try {
      if (lock != null) {
        lock.release();
      }
    } catch (IOException e) {
      failed = e;
    } finally {
      lock = null;
      if (entry.lock.isHeldByCurrentThread()) {
        entry.lock.unlock();
      }
      // the last user closes the channel: no run of this JVM holds the lock or waits for it any more
      IOException[] closing = {null};
      IN_PROCESS.computeIfPresent(key, (k, s) -> {
        if (--s.users > 0) {
          return s;
        }
        if (s.channel != null) {
          try {
            s.channel.close();
          } catch (IOException e) {
            closing[0] = e;
          }
        }
        return null;
      });
      if (failed == null) {
        failed = closing[0];
      }
    }
    if (failed != null) {
      throw failed;
    }
  }
}
