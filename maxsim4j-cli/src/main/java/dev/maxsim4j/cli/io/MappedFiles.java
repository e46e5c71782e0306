package dev.maxsim4j.cli.io;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
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
   * A mapped file as it was when mapped: its size, modification time and identity (the file system's key; null
   * where it has none, and then taken as the same file).
   */
  public record Snapshot(long size, FileTime modified, Object key) {}

  /**
   * The file's bytes, mapped read-only into the run's arena ({@link RunMemory}: unmapped when the command ends),
   * which every scoring thread may read; a small file is read onto the heap instead.
   */
  static MemorySegment map(Path file) throws IOException {
    // read before the file is opened: attributes read after could be another file's, renamed onto the name since
    BasicFileAttributes before = attributes(file);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = ch.size();
      if (size >= MAP_FROM) {
        MemorySegment mapped = mapOrSayWhy(file, ch, size);
        if (MAPPED.isBound() && before != null && before.size() == size) {
          Path name = file.toAbsolutePath();
          Snapshot first = MAPPED.get().get(name);
          // a file mapped again (a shard checked, then read) is held to what it was first, and must be that file
          if (first != null && !Objects.equals(first.key(), before.fileKey())) {
            throw new IllegalArgumentException(refusal(name + " (replaced during the run)"));
          }
          MAPPED.get().putIfAbsent(name, new Snapshot(size, before.lastModifiedTime(), before.fileKey()));
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

  /**
   * The mapping of {@code file}'s {@code size} bytes; where the process has no room for it (the JDK's "Map failed", an
   * OutOfMemoryError inside), a FileSystemException naming the file, its size and the limits that bound mappings.
   */
  private static MemorySegment mapOrSayWhy(Path file, FileChannel ch, long size) throws IOException {
    try {
      return ch.map(FileChannel.MapMode.READ_ONLY, 0, size, RunMemory.arena());
    } catch (IOException e) {
      if (!(e.getCause() instanceof OutOfMemoryError)) {
        throw e;
      }
      FileSystemException why = new FileSystemException(file.toString(), null, "cannot map its " + size
          + " bytes: out of address space or mappings (ulimit -v, or vm.max_map_count): raise the limit, or split"
          + " the file into shards");
      why.initCause(e);
      throw why;
    }
  }

  /**
   * Records {@code file}, which another library maps (a Lucene index's files), as this run's own mappings are: a read
   * of it that faults then names it, and results read after it was modified in place are refused.
   */
  public static void record(Path file) throws IOException {
    BasicFileAttributes now = MAPPED.isBound() ? attributes(file) : null;
    if (now != null) {
      MAPPED.get().putIfAbsent(file.toAbsolutePath(), new Snapshot(now.size(), now.lastModifiedTime(), now.fileKey()));
    }
  }

  /** The file's attributes, or null where it is gone (a file removed between its listing and its reading). */
  private static BasicFileAttributes attributes(Path file) throws IOException {
    try {
      return Files.readAttributes(file, BasicFileAttributes.class);
    } catch (java.nio.file.NoSuchFileException e) {
      return null;
    }
  }

  /** Runs {@code work}, recording in {@code mapped} the files it maps on this thread and what they were. */
  public static <T> T recordedIn(Map<Path, Snapshot> mapped, RunMemory.Work<T> work) throws IOException {
    return ScopedValue.where(MAPPED, mapped).call(work::run);
  }

  /**
   * The files of {@code mapped} (filled by {@link #recordedIn}) whose size is no longer what it was when they were
   * mapped, gone ones included ("FILE (N bytes when read, now M)"), joined; empty if none: where a read faulted,
   * the likely cause.
   */
  public static String changed(Map<Path, Snapshot> mapped) {
    return describe(mapped, false);
  }

  /**
   * The files of {@code mapped} that are still the file mapped (the same file system key) but were modified since:
   * another size ("FILE (N bytes when read, now M)") or modification time ("FILE (modified during the run)"),
   * joined; empty if none. A file removed or replaced by a rename is left out: the mapping still holds it as it was
   * read (the text index removes its old tokens file itself).
   */
  public static String modifiedInPlace(Map<Path, Snapshot> mapped) {
    return describe(mapped, true);
  }

  private static String describe(Map<Path, Snapshot> mapped, boolean inPlace) {
    StringBuilder out = new StringBuilder();
    mapped.forEach((file, then) -> {
      BasicFileAttributes now;
      try {
        now = Files.readAttributes(file, BasicFileAttributes.class);
      } catch (IOException e) {
        now = null;
      }
      String why = null;
      if (!inPlace) {
        if (now == null || now.size() != then.size()) {
          why = Counts.of(then.size(), "byte") + " when read, " + (now == null ? "now gone" : "now " + now.size());
        }
      } else if (now != null && Objects.equals(now.fileKey(), then.key())) {
        if (now.size() != then.size()) {
          why = Counts.of(then.size(), "byte") + " when read, now " + now.size();
        } else if (!now.lastModifiedTime().equals(then.modified())) {
          why = "modified during the run";
        }
      }
      if (why != null) {
        out.append(out.isEmpty() ? "" : ", ").append(file).append(" (").append(why).append(")");
      }
    });
    return out.toString();
  }

  /**
   * Refuses the results of this thread's run where a file it mapped was modified since ({@link #modifiedInPlace}):
   * a file cut short within its last page, or cut and grown back, reads as zeros where its bytes were, which no read
   * faults on. Called before an output replaces its target, and once the run is over.
   */
  public static void requireUnchanged() {
    if (MAPPED.isBound()) {
      requireUnchanged(MAPPED.get());
    }
  }

  /** As above for {@code mapped}. */
  public static void requireUnchanged(Map<Path, Snapshot> mapped) {
    String changed = modifiedInPlace(mapped);
    if (!changed.isEmpty()) {
      throw new IllegalArgumentException(refusal(changed) + " (the previous output, if any, is kept)");
    }
  }

  /** How every refusal of a changed input begins. */
  public static final String CHANGED = "an input changed while it was read: ";

  /** The refusal of a run whose inputs {@code changed} (as {@link #changed} words them). */
  public static String refusal(String changed) {
    return CHANGED + changed + "; inputs must stay as they are until the run ends";
  }
}
