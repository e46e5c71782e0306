package dev.maxsim4j.cli.io;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.Map;
import java.util.Objects;

/** Read-only memory maps of whole files, so inputs of any size are views rather than heap copies. */
public final class MappedFiles {
  /** Below this a plain read is cheaper than a mapping and its unmapping. */
  private static final long MAP_FROM = 1 << 20;
  /**
   * The files the run on this thread mapped, and what they were then: to name the one that changed when a read
   * faults, and to refuse results read from one that changed (runs in other threads keep their own).
   */
  private static final ScopedValue<Map<Path, Snapshot>> MAPPED = ScopedValue.newInstance();

  private MappedFiles() {}

  /**
   * A mapped file as it was when mapped: its size, modification time and identity (the file system's key, null
   * where it has none).
   */
  public record Snapshot(long size, FileTime modified, Object key) {}

  /**
   * The file's bytes, mapped read-only into the run's arena ({@link RunMemory}: unmapped when the command ends),
   * which every scoring thread may read; a small file is read onto the heap instead.
   */
  static MemorySegment map(Path file) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = ch.size();
      if (size >= MAP_FROM) {
        MemorySegment mapped = ch.map(FileChannel.MapMode.READ_ONLY, 0, size, RunMemory.arena());
        if (MAPPED.isBound()) {
          BasicFileAttributes now = Files.readAttributes(file, BasicFileAttributes.class);
          MAPPED.get().put(file.toAbsolutePath(), new Snapshot(size, now.lastModifiedTime(), now.fileKey()));
        }
        return mapped;
      }
      ByteBuffer b = ByteBuffer.allocate((int) size);
      while (b.hasRemaining() && ch.read(b) >= 0) {
        // read until full; a file that shrinks meanwhile is caught by the size checks of its format
      }
      return MemorySegment.ofArray(b.array()).asSlice(0, b.position());
    }
  }

  /** Runs {@code work}, recording in {@code mapped} the files it maps on this thread and what they were. */
  public static <T> T recordedIn(Map<Path, Snapshot> mapped, RunMemory.Work<T> work) throws IOException {
    return ScopedValue.where(MAPPED, mapped).call(work::run);
  }

  /**
   * The files of {@code mapped} (filled by {@link #recordedIn}) whose size is no longer what it was when they were
   * mapped ("FILE (N bytes when read, now M)") or, where the same file still has its size, whose contents were
   * written since ("FILE (written to during the run)"), joined; empty if none did. A file whose name now holds
   * another file (replaced by a rename, or removed) is left out unless its size differs: the mapping still holds the
   * file as it was read.
   */
  public static String changed(Map<Path, Snapshot> mapped) {
    StringBuilder out = new StringBuilder();
    mapped.forEach((file, then) -> {
      BasicFileAttributes now;
      try {
        now = Files.readAttributes(file, BasicFileAttributes.class);
      } catch (IOException e) {
        now = null;
      }
      String why = null;
      if (now == null || now.size() != then.size()) {
        why = Counts.of(then.size(), "byte") + " when read, " + (now == null ? "now gone" : "now " + now.size());
      } else if (Objects.equals(now.fileKey(), then.key()) && !now.lastModifiedTime().equals(then.modified())) {
        why = "written to during the run";
      }
      if (why != null) {
        out.append(out.isEmpty() ? "" : ", ").append(file).append(" (").append(why).append(")");
      }
    });
    return out.toString();
  }

  /**
   * Refuses the results of this thread's run where a file it mapped changed since ({@link #changed}): a file cut
   * short within its last page, or cut and grown back, reads as zeros where its bytes were, which no read faults on.
   * Called before an output replaces its target, and once the run is over.
   */
  public static void requireUnchanged() {
    if (MAPPED.isBound()) {
      requireUnchanged(MAPPED.get());
    }
  }

  /** As above for {@code mapped}. */
  public static void requireUnchanged(Map<Path, Snapshot> mapped) {
    String changed = changed(mapped);
    if (!changed.isEmpty()) {
      throw new IllegalArgumentException(CHANGED + changed + "; inputs must stay as they are until the run ends");
    }
  }

  /** How every refusal of a changed input begins. */
  public static final String CHANGED = "an input changed while it was read: ";
}
