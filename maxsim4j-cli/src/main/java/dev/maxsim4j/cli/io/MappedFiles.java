package dev.maxsim4j.cli.io;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;

/** Read-only memory maps of whole files, so inputs of any size are views rather than heap copies. */
public final class MappedFiles {
  /** Below this a plain read is cheaper than a mapping and its unmapping. */
  private static final long MAP_FROM = 1 << 20;
  /**
   * The files the run on this thread mapped, and their sizes then: to name the one that changed when a read
   * faults (runs in other threads keep their own).
   */
  private static final ScopedValue<Map<Path, Long>> MAPPED = ScopedValue.newInstance();

  private MappedFiles() {}

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
          MAPPED.get().put(file.toAbsolutePath(), size);
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

  /** Runs {@code work}, recording in {@code mapped} the files it maps on this thread and their sizes. */
  public static <T> T recordedIn(Map<Path, Long> mapped, RunMemory.Work<T> work) throws IOException {
    return ScopedValue.where(MAPPED, mapped).call(work::run);
  }

  /**
   * The files of {@code mapped} (filled by {@link #recordedIn}) whose size is no longer what it was when they were
   * mapped ("FILE (N bytes when read, now M)"), joined; empty if none did.
   */
  public static String changed(Map<Path, Long> mapped) {
    StringBuilder out = new StringBuilder();
    mapped.forEach((file, size) -> {
      long now;
      try {
        now = Files.size(file);
      } catch (IOException e) {
        now = -1;
      }
      if (now != size) {
        out.append(out.isEmpty() ? "" : ", ").append(file).append(" (").append(Counts.of(size, "byte"))
            .append(" when read, ").append(now < 0 ? "now gone" : "now " + now).append(")");
      }
    });
    return out.toString();
  }
}
