package dev.maxsim4j.cli.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A mapped input that changes under a run: cut short within its last page, or cut and grown back, it reads as zeros
 * where its bytes were, and no read faults; the run's outputs must then replace nothing. A tester saw such runs exit
 * 0 with scores of zeros (a document cut short ranked first).
 */
class MappedFilesTest {
  @TempDir Path dir;

  private Path input() throws IOException {
    return Files.write(dir.resolve("in.bin"), new byte[2 << 20]); // past the size read onto the heap instead
  }

  private static Map<Path, MappedFiles.Snapshot> mapped(Path file) throws IOException {
    Map<Path, MappedFiles.Snapshot> mapped = new ConcurrentHashMap<>();
    MappedFiles.recordedIn(mapped, () -> RunMemory.freedAfter(() -> {
      MappedFiles.map(file);
      return null;
    }));
    return mapped;
  }

  @Test
  void aFileCutWithinItsLastPageOrCutAndGrownBackIsNamed() throws IOException {
    Path in = input();
    Map<Path, MappedFiles.Snapshot> mapped = mapped(in);
    assertEquals("", MappedFiles.changed(mapped));
    try (FileChannel ch = FileChannel.open(in, StandardOpenOption.WRITE)) {
      ch.truncate((2 << 20) - 100);
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> MappedFiles.requireUnchanged(mapped));
    assertTrue(e.getMessage().startsWith(MappedFiles.CHANGED + in.toAbsolutePath() + " (2097152 bytes when read,"
        + " now 2097052)"), e.getMessage());
    // grown back to its size, a hole of zeros: the same file, written since
    try (FileChannel ch = FileChannel.open(in, StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.allocate(100), (2 << 20) - 100);
    }
    Files.setLastModifiedTime(in, FileTime.fromMillis(Files.getLastModifiedTime(in).toMillis() + 1000));
    assertTrue(MappedFiles.modifiedInPlace(mapped).contains("(modified during the run)"),
        MappedFiles.modifiedInPlace(mapped));
  }

  /**
   * A file another library maps (a Lucene index's) is recorded as the run's own mappings are: cut short, it is named,
   * where a search that faulted on it was "unexpected InternalError". Outside a run nothing is recorded.
   */
  @Test
  void aFileRecordedForAnotherLibraryIsNamedWhenCut() throws IOException {
    Path in = Files.write(dir.resolve("_0.cfs"), new byte[5000]);
    MappedFiles.record(in);
    Map<Path, MappedFiles.Snapshot> mapped = new ConcurrentHashMap<>();
    MappedFiles.recordedIn(mapped, () -> {
      MappedFiles.record(in);
      MappedFiles.record(dir.resolve("gone.si")); // a file gone meanwhile is no input
      return null;
    });
    assertEquals(List.of(in.toAbsolutePath()), List.copyOf(mapped.keySet()));
    try (FileChannel ch = FileChannel.open(in, StandardOpenOption.WRITE)) {
      ch.truncate(4096);
    }
    assertEquals(in.toAbsolutePath() + " (5000 bytes when read, now 4096)", MappedFiles.changed(mapped));
  }

  @Test
  void aFileMappedAgainIsHeldToWhatItWasFirst() throws IOException {
    Path in = input();
    Map<Path, MappedFiles.Snapshot> mapped = mapped(in);
    try (FileChannel ch = FileChannel.open(in, StandardOpenOption.WRITE)) {
      ch.truncate((2 << 20) - 8); // between a shard's check and its read
    }
    MappedFiles.recordedIn(mapped, () -> RunMemory.freedAfter(() -> {
      MappedFiles.map(in);
      return null;
    }));
    assertTrue(MappedFiles.modifiedInPlace(mapped).contains("2097152 bytes when read"), mapped.toString());
  }

  @Test
  void aFileReplacedBetweenTwoReadsIsRefusedAtTheSecond() throws IOException {
    Path in = input();
    Map<Path, MappedFiles.Snapshot> mapped = mapped(in);
    Files.move(Files.write(dir.resolve("other.bin"), new byte[2 << 20]), in, StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> mapped(in, mapped));
    assertTrue(e.getMessage().contains(in.toAbsolutePath() + " (replaced during the run)"), e.getMessage());
  }

  private static void mapped(Path file, Map<Path, MappedFiles.Snapshot> mapped) throws IOException {
    MappedFiles.recordedIn(mapped, () -> RunMemory.freedAfter(() -> {
      MappedFiles.map(file);
      return null;
    }));
  }

  @Test
  void aFileReplacedByARenameOrRemovedIsReadAsItWas() throws IOException {
    Path in = input();
    Map<Path, MappedFiles.Snapshot> mapped = mapped(in);
    Path other = Files.write(dir.resolve("other.bin"), new byte[3 << 20]);
    Files.move(other, in, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    assertEquals("", MappedFiles.modifiedInPlace(mapped), "the mapping holds the file as it was read");
    MappedFiles.requireUnchanged(mapped);
    Files.delete(in); // as the text index removes its old tokens file
    assertEquals("", MappedFiles.modifiedInPlace(mapped));
    // where a read faulted, a file of another size or gone is still the likely cause
    assertTrue(MappedFiles.changed(mapped).contains("now gone"), MappedFiles.changed(mapped));
  }

  @Test
  void anOutputWrittenFromAChangedInputReplacesNothing() throws IOException {
    Path in = input();
    Path target = Files.writeString(dir.resolve("out.txt"), "old");
    Map<Path, MappedFiles.Snapshot> mapped = new ConcurrentHashMap<>();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> MappedFiles.recordedIn(mapped, () -> RunMemory.freedAfter(() -> {
          MappedFiles.map(in);
          try (AtomicOutput output = AtomicOutput.create("--out", target, List.of(in))) {
            output.write(file -> Files.writeString(file, "new"));
            try (FileChannel ch = FileChannel.open(in, StandardOpenOption.WRITE)) {
              ch.truncate(100);
            }
            output.commit();
          }
          return null;
        })));
    assertTrue(e.getMessage().startsWith(MappedFiles.CHANGED), e.getMessage());
    assertEquals("old", Files.readString(target));
    try (var left = Files.list(dir)) {
      assertEquals(List.of("in.bin", "out.txt"), left.map(p -> p.getFileName().toString()).sorted().toList());
    }
  }
}
