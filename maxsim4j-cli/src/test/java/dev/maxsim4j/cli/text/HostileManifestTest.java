package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.cli.CliRun;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A damaged manifest far larger than any index needs (a file of NUL bytes, a line without end): it is refused as it
 * is read, so the index is rebuilt with a warning as any damaged one is; read whole, it ended the run out of memory.
 */
class HostileManifestTest {
  /** Larger than a Java array: a reader that takes in whole lines or files runs out of memory on it. */
  private static final long HUGE = 3L << 30;
  @TempDir Path dir;

  private Path folder() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("notes"));
    Files.writeString(folder.resolve("a.txt"), "otters hold hands while they sleep");
    Files.writeString(folder.resolve("b.txt"), "the moon pulls the tides twice a day");
    return folder;
  }

  /** {@code head}, then NUL bytes to {@code size} (sparse: no disk is spent on them). */
  private static void damage(Path file, String head, long size) throws IOException {
    Files.writeString(file, head);
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.setLength(size);
    }
  }

  @Test
  void aHugeDamagedManifestIsRebuiltNotReadWhole() throws IOException {
    Path folder = folder();
    CliRun built = CliRun.of("index", "--dir", folder.toString());
    assertEquals(0, built.status(), built.err());
    Path manifest = folder.resolve(TextIndex.FOLDER).resolve("manifest.tsv");
    List<String> lines = Files.readAllLines(manifest, StandardCharsets.UTF_8);
    String firstTwo = lines.get(0) + "\n" + lines.get(1) + "\n";
    for (String head : new String[] {"", firstTwo, firstTwo + "file\t1\t2\t1:3\tc.txt"}) {
      damage(manifest, head, HUGE);
      CliRun search = CliRun.of("search", "--dir", folder.toString(), "--query", "otters", "--exact");
      assertEquals(0, search.status(), head + ": " + search.err());
      assertTrue(search.err().contains("cannot be used (") && search.err().contains("rebuilding it"),
          head + ": " + search.err());
      assertTrue(search.out().contains("a.txt:1"), search.out());
      assertTrue(Files.size(manifest) < 1000, "the rebuilt manifest replaced the damaged one");
    }
  }

  /** Lines past what the header's token count allows are refused by their number, before the rest is read. */
  @Test
  void linesLongerThanTheHeaderAllowsAreRefusedByNumber() throws IOException {
    Path manifest = dir.resolve("manifest.tsv");
    String head = Manifest.header(Store.BF16) + "\ntokens\ttokens-0a.safetensors\t3\t0000abcd\t0000abcd\n";
    damage(manifest, head + "file\t1\t2\t1:3\t", 1L << 24);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Manifest.read(manifest));
    assertTrue(e.getMessage().startsWith("line 3 "), e.getMessage());
    damage(manifest, "x".repeat(1 << 20), 1 << 20);
    e = assertThrows(IllegalArgumentException.class, () -> Manifest.read(manifest));
    assertFalse(e.getMessage().contains("x".repeat(100)), e.getMessage());
  }
}
