package dev.maxsim4j.cli.io;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** Read-only memory maps of whole files, so inputs of any size are views rather than heap copies. */
final class MappedFiles {
  /** Below this a plain read is cheaper than a mapping and its unmapping. */
  private static final long MAP_FROM = 1 << 20;

  private MappedFiles() {}

  /**
   * The file's bytes, mapped read-only into an automatic arena (unmapped once unreachable) that every
   * scoring thread may read; a small file is read onto the heap instead.
   */
  static MemorySegment map(Path file) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = ch.size();
      if (size >= MAP_FROM) {
        return ch.map(FileChannel.MapMode.READ_ONLY, 0, size, Arena.ofAuto());
      }
      ByteBuffer b = ByteBuffer.allocate((int) size);
      while (b.hasRemaining() && ch.read(b) >= 0) {
        // read until full; a file that shrinks meanwhile is caught by the size checks of its format
      }
      return MemorySegment.ofArray(b.array()).asSlice(0, b.position());
    }
  }
}
