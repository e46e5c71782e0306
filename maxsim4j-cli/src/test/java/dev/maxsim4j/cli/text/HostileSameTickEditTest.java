package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.cli.Progress;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file rewritten with as many bytes within the tick of its file system's clock that the index read it in keeps its
 * size and modification time (1-2 s on FAT, HFS+ and some network file systems; a few ms on Linux's coarse clock):
 * the index must not keep the old text's tokens for good.
 */
class HostileSameTickEditTest {
  private static final String OLD = "the moon pulls the tides twice a day";
  private static final String NEW = "bread rises as yeast makes gas again";

  @TempDir Path dir;

  @Test
  void aSameSizeEditInTheReadsTickIsEncodedAgainInTheTokensAndTheLuceneIndex() throws IOException {
    assertEquals(OLD.length(), NEW.length());
    Path folder = Files.createDirectories(dir.resolve("notes"));
    Path file = folder.resolve("f.txt");
    Files.writeString(folder.resolve("g.txt"), "otters hold hands while they sleep");
    PrintStream err = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    try (TextModel encoder = TextModel.load();
        MaxSim maxSim = MaxSim.builder().backend("cpu").build()) {
      FileTime tick = null;
      // the edit falls in the tick of the read only where the read did: a run slowed past SAME_TICK_MILLIS after the
      // write read the file outside it, and the file is written and read again
      for (int tries = 0; tries < 10 && (tick == null || !readInItsTick(folder, "f.txt", err)); tries++) {
        Files.writeString(file, OLD);
        tick = Files.getLastModifiedTime(file);
        update(folder, encoder, maxSim, err).close();
      }
      assertTrue(readInItsTick(folder, "f.txt", err), "no read of f.txt in its tick in 10 tries");
      Files.writeString(file, NEW);
      Files.setLastModifiedTime(file, tick); // the edit fell in the same tick
      LuceneIndex lucene = update(folder, encoder, maxSim, err);
      try (lucene) {
        TextIndex index = TextIndex.update(folder, () -> encoder, true, new Warnings(err), err, null,
            new UpdateLock(err));
        float[] stored = index.rows().gather(new int[] {index.rowOf("f.txt", 0)}).toFloatArray();
        float[] fresh = PackedRows.encode(encoder, List.of(NEW), new int[] {encoder.tokenCount(NEW)},
            new Progress(err, "test"), Store.BF16)
            .gather(new int[] {0}).toFloatArray();
        assertArrayEquals(fresh, stored, "the new text's tokens");
        assertEquals(1, lucene.added(), "the Lucene index replaced the file's passage");
      }
    }
  }

  /**
   * An unchanged index is searched from its mapped tokens file, as docs/cli-at-scale.md says: every search copied
   * the whole file onto the heap (a heap larger than the index for each search). Found by a hostile test.
   */
  @Test
  void anUnchangedIndexIsReadMappedAndScoresAsBuilt() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("mapped"));
    // past 1 MiB of bf16 tokens, the size from which a file is mapped rather than read
    String[] words = {"otters", "hold", "hands", "while", "they", "sleep", "the", "moon", "pulls", "tides"};
    for (int f = 0; f < 6; f++) {
      StringBuilder text = new StringBuilder();
      for (int w = 0; w < 300; w++) {
        text.append(words[(w * 7 + f) % words.length]).append(w % 40 == 39 ? "\n\n" : " ");
      }
      Files.writeString(folder.resolve(f + ".txt"), text);
    }
    PrintStream err = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    try (TextModel encoder = TextModel.load()) {
      float[] built;
      try (UpdateLock lock = new UpdateLock(err)) {
        TextIndex first = TextIndex.update(folder, () -> encoder, true, new Warnings(err), err, null, lock);
        assertTrue(first.rows().tokens().onHeap(), "a new index is built on the heap");
        built = first.documents().toFloatArray();
      }
      try (UpdateLock lock = new UpdateLock(err)) {
        TextIndex again = TextIndex.update(folder, () -> {
          throw new AssertionError("an unchanged index asked for the encoder");
        }, true, new Warnings(err), err, null, lock);
        assertFalse(again.rows().tokens().onHeap(), "an unchanged index is read mapped, not copied");
        assertEquals(0, again.encoded());
        assertArrayEquals(built, again.documents().toFloatArray());
      }
    }
  }

  /**
   * A hostile tester's finding: a file read in its modification's tick kept its checksum for good, so every later run
   * read it again (a folder written and indexed at once: every file, every run). Read past its tick, the same text
   * drops the checksum, and the runs after that do not read it.
   */
  @Test
  void aFileReadInItsTickIsReadOnceMoreOnlyAfterItsTick() throws Exception {
    Path folder = Files.createDirectories(dir.resolve("fresh"));
    PrintStream err = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    try (TextModel encoder = TextModel.load();
        MaxSim maxSim = MaxSim.builder().backend("cpu").build()) {
      Files.writeString(folder.resolve("f.txt"), OLD);
      update(folder, encoder, maxSim, err).close();
      Assumptions.assumeTrue(readInItsTick(folder, "f.txt", err), "this run read f.txt only after its tick");
      Thread.sleep(TextIndex.SAME_TICK_MILLIS + 100);
      try (LuceneIndex lucene = update(folder, encoder, maxSim, err)) {
        assertEquals(0, lucene.added(), "the same text: the Lucene index keeps its passages");
      }
      try (UpdateLock lock = new UpdateLock(err)) {
        TextIndex index = TextIndex.update(folder, () -> {
          throw new AssertionError("an unchanged index asked for the encoder");
        }, true, new Warnings(err), err, null, lock);
        TextIndex.Entry e = index.entries().get(0);
        assertEquals(TextIndex.checksum(OLD) | TextIndex.Entry.SETTLED, e.text(), "settled, the checksum kept");
        assertFalse(e.readAgain(), "its size, time and identity alone identify it now");
        assertEquals(0, index.encoded());
      }
    }
  }

  /**
   * A hostile tester's finding: search showed a passage read again from its file, which another run had rewritten
   * since it was scored: the new text beside the old text's score. The text is shown only where it is still the one
   * indexed.
   */
  @Test
  void aPassageIsShownOnlyFromTheTextItsScoreIsOf() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("shown"));
    Path file = folder.resolve("f.txt");
    Files.writeString(file, OLD);
    PrintStream err = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    try (TextModel encoder = TextModel.load(); UpdateLock lock = new UpdateLock(err)) {
      TextIndex index = TextIndex.update(folder, () -> encoder, true, new Warnings(err), err, null, lock);
      assertEquals(OLD, index.indexedText("f.txt").orElseThrow());
      Files.writeString(file, NEW);
      assertTrue(index.indexedText("f.txt").isEmpty(), "rewritten since it was indexed");
      Files.delete(file);
      assertTrue(index.indexedText("f.txt").isEmpty(), "gone");
      assertTrue(index.indexedText("g.txt").isEmpty(), "never indexed");
    }
  }

  /** Whether the index holds the checksum of {@code file}'s text: it was read within its modification's tick. */
  private static boolean readInItsTick(Path folder, String file, PrintStream err) throws IOException {
    try (UpdateLock lock = new UpdateLock(err)) {
      TextIndex index = TextIndex.update(folder, () -> {
        throw new AssertionError("an unchanged index asked for the encoder");
      }, true, new Warnings(err), err, null, lock);
      return index.entries().stream().anyMatch(e -> e.path().equals(file) && e.text() >= 0);
    }
  }

  private static LuceneIndex update(Path folder, TextModel encoder, MaxSim maxSim, PrintStream err)
      throws IOException {
    Warnings warnings = new Warnings(err);
    try (UpdateLock lock = new UpdateLock(err)) {
      TextIndex index = TextIndex.update(folder, () -> encoder, true, warnings, err, null, lock);
      return LuceneIndex.sync(folder, index, maxSim, true, warnings, err);
    }
  }
}
