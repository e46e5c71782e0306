package dev.maxsim4j.cli.io;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Read-only memory maps of whole files, so inputs of any size are views rather than heap copies. */
public final class MappedFiles {
  /** Below this a plain read is cheaper than a mapping and its unmapping. */
  private static final long MAP_FROM = 1 << 20;
  /** The files this run mapped, and their sizes then: to name the one that changed when a read faults. */
  private static final Map<Path, Long> MAPPED = new ConcurrentHashMap<>();

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
        MAPPED.put(file.toAbsolutePath(), size);
        return mapped;
      }
      ByteBuffer b = ByteBuffer.allocate((int) size);
      while (b.hasRemaining() && ch.read(b) >= 0) {
        // read until full; a file that shrinks meanwhile is caught by the size checks of its format
      }
      return MemorySegment.ofArray(b.array()).asSlice(0, b.position());
    }
  }

  /** Forgets the files mapped so far: a new run (in the same JVM) starts with none. */
  public static void forget() {
    MAPPED.clear();
  }

  /**
   * The mapped files whose size is no longer what it was when they were mapped ("FILE (N bytes when read, now
   * M)"), joined; empty if none did.
   */
  public static String changed() {
    StringBuilder out = new StringBuilder();
    MAPPED.forEach((file, size) -> {
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
