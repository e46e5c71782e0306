package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.cli.Progress;
import dev.maxsim4j.langchain4j.MiniLmTokenEncoder;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
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
    try (MiniLmTokenEncoder encoder = MiniLmTokenEncoder.load();
        MaxSim maxSim = MaxSim.builder().backend("cpu").build()) {
      Files.writeString(file, OLD);
      FileTime tick = Files.getLastModifiedTime(file);
      update(folder, encoder, maxSim, err).close();
      Files.writeString(file, NEW);
      Files.setLastModifiedTime(file, tick); // the edit fell in the same tick
      LuceneIndex lucene = update(folder, encoder, maxSim, err);
      try (lucene) {
        TextIndex index = TextIndex.update(folder, encoder, true, new Warnings(err), err, null, new UpdateLock(err));
        float[] stored = index.rows().gather(new int[] {index.rowOf("f.txt", 0)}).toFloatArray();
        float[] fresh = PackedRows.encode(encoder, List.of(NEW), new Progress(err, "test")).gather(new int[] {0})
            .toFloatArray();
        assertArrayEquals(fresh, stored, "the new text's tokens");
        assertEquals(1, lucene.added(), "the Lucene index replaced the file's passage");
      }
    }
  }

  private static LuceneIndex update(Path folder, MiniLmTokenEncoder encoder, MaxSim maxSim, PrintStream err)
      throws IOException {
    Warnings warnings = new Warnings(err);
    try (UpdateLock lock = new UpdateLock(err)) {
      TextIndex index = TextIndex.update(folder, encoder, true, warnings, err, null, lock);
      return LuceneIndex.sync(folder, index, maxSim, true, warnings, err);
    }
  }
}
