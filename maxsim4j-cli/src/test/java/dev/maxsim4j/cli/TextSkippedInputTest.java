package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.maxsim4j.cli.io.SafeTensors;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Files and lines that are not UTF-8 text are named and skipped; the rest of the work goes on. */
class TextSkippedInputTest {
  private static final byte[] LATIN1 = "caf\u00e9 au lait".getBytes(StandardCharsets.ISO_8859_1);
  private static final byte[] BINARY = {(byte) 0x89, 'P', 'N', 'G', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
  private static final byte[] NUL = "text with a\0nul".getBytes(StandardCharsets.UTF_8);

  @TempDir Path dir;

  private Path mixedFolder() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("mixed"));
    Files.writeString(folder.resolve("otters.txt"), "otters hold hands while they sleep");
    Files.write(folder.resolve("latin1.txt"), LATIN1);
    Files.write(folder.resolve("image.md"), BINARY);
    Files.write(folder.resolve("nul\n.txt"), NUL);
    Files.write(folder.resolve("bom.txt"), ("\uFEFFbees dance to show where flowers are")
        .getBytes(StandardCharsets.UTF_8));
    return folder;
  }

  @Test
  void indexAndSearchSkipNonTextFilesByName() throws IOException {
    Path folder = mixedFolder();
    CliRun index = CliRun.of("index", "--dir", folder.toString());
    assertEquals(0, index.status(), index.err());
    assertTrue(index.out().contains("indexed 2 files (2 encoded, 0 reused, 3 skipped)"), index.out());
    assertTrue(index.err().contains("latin1.txt: not UTF-8 text (an invalid byte sequence at offset 3)"),
        index.err());
    assertTrue(index.err().contains("image.md: binary, not text"), index.err());
    assertTrue(index.err().contains("nul\\n.txt: binary, not text"), index.err());
    assertFalse(index.err().contains("bom.txt"), index.err());
    CliRun search = CliRun.of("search", "--dir", folder.toString(), "--query", "bees and flowers", "--k", "1");
    assertEquals(0, search.status(), search.err());
    assertTrue(search.err().contains("latin1.txt"), "skipped files are named on every run: " + search.err());
    assertTrue(search.out().contains("bom.txt:1  bees dance"), search.out());
  }

  @Test
  void aFolderOfOnlyNonTextFilesIsOneLineAndWritesNothing() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("binary"));
    Files.write(folder.resolve("a.txt"), BINARY);
    CliRun r = CliRun.of("index", "--dir", folder.toString());
    assertTrue(r.failedCleanly(), r.err());
    assertTrue(r.err().contains("no readable .txt or .md files under " + folder), r.err());
    assertFalse(Files.exists(folder.resolve(".maxsim4j")));
  }

  @Test
  void rerankSkipsBadLinesAndKeepsLineNumbers() throws IOException {
    Path candidates = dir.resolve("candidates.txt");
    byte[] good1 = "the moon pulls on the oceans\n".getBytes(StandardCharsets.UTF_8);
    byte[] good2 = "\r\nbread leavened with a sour starter\r\n".getBytes(StandardCharsets.UTF_8);
    Files.write(candidates, concat(good1, LATIN1, "\n".getBytes(StandardCharsets.UTF_8), NUL, good2));
    CliRun r = CliRun.of("rerank", "--query", "what makes sourdough rise", "--candidates", candidates.toString());
    assertEquals(0, r.status(), r.err());
    assertTrue(r.err().contains("skipped line 2 of " + candidates + ": not UTF-8 text"), r.err());
    assertTrue(r.err().contains("skipped line 3 of " + candidates + ": binary, not text"), r.err());
    String firstHit = r.out().lines().filter(l -> l.strip().startsWith("1 ")).findFirst().orElseThrow();
    assertTrue(firstHit.contains("    4  bread leavened"), r.out());
    assertEquals(2 + 1, r.out().lines().count(), r.out());
  }

  /**
   * encode keeps a row for every file (sorted by path) and every non-blank line, so that a row's number names its
   * text: one that cannot be read, or holds no word piece (only the encoder's [CLS] and [SEP], which outranked real
   * documents), is a row of no token, named on stderr.
   */
  @Test
  void encodeKeepsARowOfNoTokenForTextsItCannotEncode() throws IOException {
    Path folder = mixedFolder();
    Files.writeString(folder.resolve("empty.txt"), "");
    Files.writeString(folder.resolve("zwsp.txt"), "\u200b\n");
    Files.createSymbolicLink(folder.resolve("nowhere.md"), folder.resolve("missing"));
    Path out = dir.resolve("e.safetensors");
    CliRun r = CliRun.of("encode", "--in", folder.toString(), "--out", out.toString());
    assertEquals(0, r.status(), r.err());
    for (String name : new String[] {"latin1.txt", "image.md", "empty.txt", "zwsp.txt", "nowhere.md"}) {
      assertTrue(r.err().contains(name) && r.err().contains("written as a row of no token"), r.err());
    }
    assertTrue(r.out().contains("encoded 8 texts (6 of no token)"), r.out());
    // bom, empty, image, latin1, nowhere (a link to nothing), nul, otters, zwsp: by path
    long[] offsets = SafeTensors.read(out, "offsets").integers();
    assertEquals(8 + 1, offsets.length);
    for (int i = 0; i < 8; i++) {
      long length = offsets[i + 1] - offsets[i];
      assertTrue(i == 0 || i == 6 ? length > 2 : length == 0, i + ": " + java.util.Arrays.toString(offsets));
    }
    Path lines = dir.resolve("lines.txt");
    Files.write(lines, concat("one\n".getBytes(StandardCharsets.UTF_8), LATIN1, "\n\u200b\n\ntwo\n".getBytes(
        StandardCharsets.UTF_8)));
    CliRun l = CliRun.of("encode", "--in", lines.toString(), "--out", out.toString());
    assertEquals(0, l.status(), l.err());
    assertTrue(l.err().contains("line 2 of " + lines + ": not UTF-8 text"), l.err());
    assertTrue(l.err().contains("line 3 of " + lines + " holds no word piece"), l.err());
    offsets = SafeTensors.read(out, "offsets").integers(); // the blank line 4 is no text
    assertEquals(4 + 1, offsets.length);
    assertTrue(offsets[1] > 2 && offsets[2] == offsets[1] && offsets[3] == offsets[2] && offsets[4] > offsets[3],
        java.util.Arrays.toString(offsets));
    // a document of no token scores as an empty one, below every real document
    Path query = dir.resolve("q.txt");
    Files.writeString(query, "what do otters do when they sleep\n");
    Path q = dir.resolve("q.safetensors");
    assertEquals(0, CliRun.of("encode", "--in", query.toString(), "--out", q.toString()).status());
    assertEquals(0, CliRun.of("encode", "--in", folder.toString(), "--out", out.toString()).status());
    CliRun s = CliRun.of("score", "--queries", q.toString(), "--docs", out.toString(), "--top-k", "8", "--out-run",
        dir.resolve("run.tsv").toString());
    assertEquals(0, s.status(), s.err());
    List<String> run = Files.readAllLines(dir.resolve("run.tsv"));
    assertTrue(run.get(0).split("\t")[1].equals("6") && run.get(1).split("\t")[1].equals("0"), run.toString());
  }

  /** Files the listing skipped (a pipe, a link to nothing) were named but left out of index's count of skipped. */
  @Test
  void indexCountsEveryFileItNamesAsSkipped() throws Exception {
    Path folder = Files.createDirectories(dir.resolve("listed"));
    Files.createSymbolicLink(folder.resolve("nowhere.md"), folder.resolve("missing"));
    assumeTrue(new ProcessBuilder("mkfifo", folder.resolve("pipe.txt").toString()).start().waitFor() == 0);
    CliRun none = CliRun.of("index", "--dir", folder.toString());
    assertTrue(none.failedCleanly(), none.err());
    assertTrue(none.err().contains("holds no readable .txt or .md file (its subfolders searched too; 2 skipped,"
        + " named in the warnings above)"), none.err());
    Files.writeString(folder.resolve("tides.txt"), "the moon pulls the tides");
    CliRun r = CliRun.of("index", "--dir", folder.toString());
    assertEquals(0, r.status(), r.err());
    assertTrue(r.out().contains("indexed 1 file (1 encoded, 0 reused, 2 skipped)"), r.out());
  }

  @Test
  void aFileThatFailsToReadIsNamedAndSkipped() throws IOException {
    Path mem = Path.of("/proc/self/mem"); // a regular file whose first page never reads: an I/O error even for root
    assumeTrue(Files.isRegularFile(mem), "needs Linux /proc");
    Path folder = mixedFolder();
    Files.createSymbolicLink(folder.resolve("mem.txt"), mem);
    CliRun r = CliRun.of("index", "--dir", folder.toString());
    assertEquals(0, r.status(), r.err());
    assertTrue(r.err().contains("skipped " + folder.resolve("mem.txt") + ": "), r.err());
    assertTrue(r.out().contains("indexed 2 files (2 encoded, 0 reused, 4 skipped)"), r.out());
  }

  /**
   * A text file larger than a run can hold in memory (here a sparse 1.5 GB one, no disk used) was read whole and
   * ended the run out of memory; it is skipped, named with its size and the bound, and the rest is indexed. Given
   * as one file (rerank's candidates), it is a one-line error naming the option.
   */
  @Test
  void aFileLargerThanTheHeapBoundIsSkippedNamingItsSizeAndTheBound() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("big"));
    Files.writeString(folder.resolve("otters.txt"), "otters hold hands while they sleep");
    Path huge = folder.resolve("huge.txt");
    long size = 1_500_000_000L;
    try (RandomAccessFile f = new RandomAccessFile(huge.toFile(), "rw")) {
      f.setLength(size);
    }
    String bound = "at most " + Math.min(Integer.MAX_VALUE - 8L, Runtime.getRuntime().maxMemory() / 32) + " bytes";
    CliRun r = CliRun.of("index", "--dir", folder.toString());
    assertEquals(0, r.status(), r.err());
    assertTrue(r.err().contains("skipped " + huge + ": it holds " + size + " bytes; expected " + bound), r.err());
    assertTrue(r.out().contains("indexed 1 file (1 encoded, 0 reused, 1 skipped)"), r.out());
    CliRun rerank = CliRun.of("rerank", "--query", "otters", "--candidates", huge.toString());
    assertTrue(rerank.failedCleanly(), rerank.err());
    assertTrue(rerank.err().contains("--candidates " + huge + " holds " + size + " bytes; expected " + bound),
        rerank.err());
  }

  @Test
  void unreadableFilesAndFoldersAreNamedAndSkipped() throws IOException {
    assumeFalse("root".equals(System.getProperty("user.name")), "root reads every file");
    Path folder = mixedFolder();
    Path locked = folder.resolve("locked.txt");
    Files.writeString(locked, "secret");
    Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("---------"));
    Path closed = Files.createDirectories(folder.resolve("closed"));
    Files.writeString(closed.resolve("inner.txt"), "inner");
    Files.setPosixFilePermissions(closed, PosixFilePermissions.fromString("---------"));
    try {
      CliRun r = CliRun.of("index", "--dir", folder.toString());
      assertEquals(0, r.status(), r.err());
      assertTrue(r.err().contains("locked.txt: permission denied"), r.err());
      assertTrue(r.err().contains("closed: permission denied"), r.err());
    } finally {
      Files.setPosixFilePermissions(closed, PosixFilePermissions.fromString("rwx------"));
    }
  }

  private static byte[] concat(byte[]... parts) {
    int n = 0;
    for (byte[] p : parts) {
      n += p.length;
    }
    byte[] out = new byte[n];
    int at = 0;
    for (byte[] p : parts) {
      System.arraycopy(p, 0, out, at, p.length);
      at += p.length;
    }
    return out;
  }
}
