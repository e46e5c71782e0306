package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The text index survives hostile file names and damaged index files; the next run can always read it. */
class TextIndexRobustnessTest {
  @TempDir Path dir;

  private Path folder(String... namesAndTexts) throws IOException {
    Path folder = Files.createDirectories(dir.resolve("notes"));
    for (int i = 0; i < namesAndTexts.length; i += 2) {
      Files.writeString(folder.resolve(namesAndTexts[i]), namesAndTexts[i + 1]);
    }
    return folder;
  }

  private static CliRun index(Path folder) {
    return CliRun.of("index", "--dir", folder.toString());
  }

  @Test
  void namesWithControlCharactersKeepTheIndexReadable() throws IOException {
    Path folder = folder("new\nline.txt", "otters hold hands while they sleep", "tab\there.md", "bees dance",
        "cr\rand\u0001ctl\\.txt", "the moon pulls the tides", "plain.txt", "bread rises with yeast");
    CliRun first = index(folder);
    assertEquals(0, first.status(), first.err());
    assertTrue(first.out().contains("indexed 4 files (4 encoded, 0 reused, 0 skipped)"), first.out());
    CliRun again = index(folder);
    assertEquals(0, again.status(), again.err());
    assertTrue(again.out().contains("(0 encoded, 4 reused, 0 skipped)"), again.out());
    assertFalse(again.err().contains("warning"), again.err());
    CliRun search = CliRun.of("search", "--dir", folder.toString(), "--query", "sleeping otters", "--k", "4");
    assertEquals(0, search.status(), search.err());
    assertTrue(search.out().contains("new\\nline.txt:1"), search.out());
    assertTrue(search.out().contains("cr\\rand\\u0001ctl\\\\.txt:1"), search.out());
    assertEquals(2 + 4, search.out().lines().count(), "every result on its own line: " + search.out());
  }

  /**
   * A name of bytes that are not UTF-8 is kept by those bytes, as Python's backslashreplace writes them
   * ("x\\xffy.txt"), whatever the locale: indexed, searched and named in encode's row-to-file map. It was skipped
   * (and in encode's map named with U+FFFD, silently, before that), so that a Latin-1 locale, which reads every byte,
   * indexed it and a UTF-8 run dropped it again.
   */
  @Test
  void namesThatAreNotUtf8AreKeptByTheirBytes() throws IOException, InterruptedException {
    Path folder = folder("a.txt", "otters hold hands");
    // Java cannot spell a name of invalid UTF-8 bytes, so the shell makes one
    Process p = new ProcessBuilder("sh", "-c", "printf 'bees dance' > \"$(printf 'x\\377')y.txt\"")
        .directory(folder.toFile()).start();
    assertEquals(0, p.waitFor());
    CliRun index = index(folder);
    assertEquals(0, index.status(), index.err());
    assertTrue(index.out().contains("indexed 2 files (2 encoded, 0 reused, 0 skipped)"), index.out());
    CliRun again = index(folder);
    assertTrue(again.out().contains("(0 encoded, 2 reused, 0 skipped)"), again.out());
    CliRun search = CliRun.of("search", "--dir", folder.toString(), "--query", "bees", "--exact");
    assertTrue(search.out().contains("x\\\\xffy.txt:1  bees dance"), search.out());
    Path out = folder.resolve("rows.safetensors");
    CliRun encode = CliRun.of("encode", "--in", folder.toString(), "--out", out.toString());
    assertEquals(0, encode.status(), encode.err());
    String header = new String(Files.readAllBytes(out), java.nio.charset.StandardCharsets.UTF_8);
    assertTrue(header.contains("\"maxsim4j.files\":\"[\\\"a.txt\\\",\\\"x\\\\\\\\xffy.txt\\\"]\""),
        header.substring(0, Math.min(400, header.length())));
  }

  /** A file line up to its first passage's line number: file, bytes, time, identity (inode:time), line. */
  private static final String PASSAGE = "(file\t[0-9]+\t[0-9]+\t[0-9:]*\t[0-9]+)";

  @Test
  void damagedManifestOrTokensAreRebuiltWithAWarning() throws IOException {
    Path folder = folder("a.txt", "otters hold hands", "b.txt", "bees dance");
    assertEquals(0, index(folder).status());
    Path manifest = folder.resolve(".maxsim4j/manifest.tsv");
    String good = Files.readString(manifest);
    List<String> damages = List.of(
        good.replaceFirst("file\t[0-9]+", "file\tlots"),           // not a number
        good.replaceFirst("file\t[0-9]+", "file\t99999999999999999999"), // past a long
        good.replaceFirst(PASSAGE + ":[0-9]+", "$1:-4"),              // negative token count
        good.replaceFirst(PASSAGE + ":[0-9]+", "$1:1"),               // counts disagree with the tokens
        good.replaceFirst("(file\t[0-9]+\t[0-9]+\t)[0-9:]*", "$1x"),    // an identity that is no inode and time
        good.substring(0, good.length() / 2),                        // cut short
        good.replace("a.txt", "../../etc/passwd"),                   // a path outside the folder
        good.replace("a.txt", "bad\\q"),                             // an escape never written
        good.replace("index v5", "index v4"),                        // the version before (other identities)
        good.replace("tokens-", "tokens-../"),                       // a tokens file elsewhere
        "");
    for (String damage : damages) {
      assertFalse(damage.equals(good), "each damage changes the manifest: " + damage);
      Files.writeString(manifest, damage);
      CliRun r = index(folder);
      assertEquals(0, r.status(), damage + "\n" + r.err());
      assertTrue(r.err().contains("rebuilding it"), r.err());
      assertTrue(r.out().contains("(2 encoded, 0 reused, 0 skipped)"), r.out());
      CliRun next = index(folder);
      assertTrue(next.out().contains("(0 encoded, 2 reused, 0 skipped)") && next.err().isEmpty(), next.err());
    }
    Files.write(manifest, new byte[] {(byte) 0xff, 0, 1, 2, '\n'});
    String notText = index(folder).err();
    assertTrue(notText.contains("cannot be used (it is not UTF-8 text); rebuilding it"), notText);

    byte[] bytes = Files.readAllBytes(tokensFile(folder));
    Random random = new Random(3);
    for (int trial = 0; trial < 6; trial++) {
      byte[] hurt = trial % 2 == 0 ? java.util.Arrays.copyOf(bytes, random.nextInt(bytes.length))
          : flip(bytes, random);
      Files.write(tokensFile(folder), hurt);
      CliRun r = CliRun.of("search", "--dir", folder.toString(), "--query", "otters");
      assertEquals(0, r.status(), r.err());
      assertFalse(r.err().contains("Exception"), r.err());
    }
    assertEquals(0, index(folder).status());
    Path data = tokensFile(folder);
    byte[] valid = Files.readAllBytes(data);
    valid[valid.length - 3] ^= 0x10; // one bit of one token value: the header still parses
    Files.write(data, valid);
    CliRun flipped = CliRun.of("search", "--dir", folder.toString(), "--query", "otters");
    assertTrue(flipped.err().contains("do not match their checksum); rebuilding it"), flipped.err());
    Files.delete(tokensFile(folder));
    CliRun missing = index(folder);
    assertTrue(missing.err().contains("is missing); rebuilding it"), missing.err());
    // one that is there but no file (a folder, a pipe) is not called missing
    Path replaced = tokensFile(folder);
    Files.delete(replaced);
    Files.createDirectory(replaced);
    CliRun folderInPlace = index(folder);
    assertTrue(folderInPlace.err().contains("is not a regular file); rebuilding it"), folderInPlace.err());
  }

  /**
   * Bytes flipped inside the Lucene index's files, where opening it checks nothing (its headers and footers
   * intact): the checksums are verified before the index is reused, so it is rebuilt with a warning rather than
   * scoring damaged token values.
   */
  @Test
  void aLuceneIndexDamagedInsideItsFilesIsRebuilt() throws IOException {
    Path folder = folder("a.txt", "otters hold hands while they sleep", "b.txt", "the moon pulls the tides");
    assertEquals(0, index(folder).status());
    CliRun clean = CliRun.of("search", "--dir", folder.toString(), "--query", "ocean tides", "--rerank", "lucene");
    assertEquals(0, clean.status(), clean.err());
    Path lucene = folder.resolve(".maxsim4j/lucene");
    try (Stream<Path> files = Files.list(lucene)) {
      for (Path f : files.filter(f -> !f.getFileName().toString().startsWith("segments")
          && !f.getFileName().toString().equals("write.lock")).toList()) {
        byte[] b = Files.readAllBytes(f);
        for (int i = b.length / 3; i < 2 * b.length / 3; i += 3) {
          b[i] ^= 0x40;
        }
        Files.write(f, b);
      }
    }
    CliRun damaged = CliRun.of("search", "--dir", folder.toString(), "--query", "ocean tides", "--rerank", "lucene");
    assertEquals(0, damaged.status(), damaged.err());
    assertTrue(damaged.err().contains("cannot be used") && damaged.err().contains("rebuilding it"), damaged.err());
    assertEquals(clean.out().lines().filter(l -> l.contains(".txt:")).toList(),
        damaged.out().lines().filter(l -> l.contains(".txt:")).toList(), "the same hits as the clean index");
    // more candidates than passages, up to the largest the option takes
    CliRun all = CliRun.of("search", "--dir", folder.toString(), "--query", "otters", "--candidates", "2147483647");
    assertEquals(0, all.status(), all.err());
    // a queries file with a line that is not UTF-8: skipped with a warning, the others answered
    Path queries = dir.resolve("q.txt");
    Files.write(queries, new byte[] {'o', 't', 't', 'e', 'r', 's', '\n', (byte) 0xff, (byte) 0xfe, '\n', 'm', 'o',
        'o', 'n', '\n'});
    CliRun q = CliRun.of("search", "--dir", folder.toString(), "--queries", queries.toString());
    assertEquals(0, q.status(), q.err());
    assertTrue(q.err().contains("skipped line 2 of"), q.err());
    assertTrue(q.out().contains("2 queries"), q.out());
  }

  @Test
  void anIndexThatCannotBeWrittenFailsIndexButNotSearch() throws IOException {
    Path folder = folder("a.txt", "otters hold hands", "b.txt", "bees dance");
    Files.createSymbolicLink(folder.resolve(".maxsim4j"), dir.resolve("nowhere"));
    CliRun index = index(folder);
    assertTrue(index.failedCleanly(), index.err());
    assertTrue(index.err().contains("cannot write the index in " + folder.resolve(".maxsim4j")), index.err());
    assertFalse(index.err().contains("encoding"), "it fails before encoding: " + index.err());
    CliRun search = CliRun.of("search", "--dir", folder.toString(), "--query", "otters", "--k", "1");
    assertEquals(0, search.status(), search.err());
    assertTrue(search.err().contains("cannot save the index in"), search.err());
    assertTrue(search.out().contains("a.txt:1  otters hold hands"), search.out());
  }

  /**
   * Writing the Lucene index fails (its lock file cannot be opened, as a read-only folder or a full disk would fail
   * a write): the index is kept as it was, not taken for damaged and deleted, and is updated once it can be.
   */
  @Test
  void aLuceneIndexThatCannotBeWrittenIsKeptNotRebuilt() throws IOException {
    Path folder = folder("a.txt", "otters hold hands", "b.txt", "bees dance");
    assertEquals(0, index(folder).status());
    Path lucene = folder.resolve(".maxsim4j/lucene");
    Path lock = lucene.resolve("write.lock");
    Files.deleteIfExists(lock);
    Files.createDirectories(lock.resolve("inner"));
    Files.writeString(folder.resolve("b.txt"), "bees dance in the hive");

    CliRun failed = index(folder);
    assertTrue(failed.failedCleanly(), failed.err());
    assertTrue(failed.err().contains("cannot write the Lucene index in " + lucene), failed.err());
    assertFalse(failed.err().contains("rebuilding"), failed.err());
    CliRun search = CliRun.of("search", "--dir", folder.toString(), "--query", "bees", "--k", "1");
    assertEquals(0, search.status(), search.err());
    assertTrue(search.err().contains("cannot save the Lucene index in"), search.err());
    assertFalse(search.err().contains("rebuilding"), search.err());
    assertTrue(search.out().contains("b.txt:1  bees dance in the hive"), search.out());

    Files.delete(lock.resolve("inner"));
    Files.delete(lock);
    CliRun updated = index(folder);
    assertEquals(0, updated.status(), updated.err());
    assertEquals("", updated.err().lines().filter(l -> l.contains("warning")).reduce("", String::concat),
        "the kept index is whole");
    assertTrue(updated.out().contains("(1 added, 1 removed)"), updated.out());
  }

  /** The first write of a Lucene index fails: there was no index to be damaged, so none is said to be rebuilt. */
  @Test
  void aNewLuceneIndexThatCannotBeWrittenIsReportedAsSuchNotAsDamage() throws IOException {
    Path folder = folder("a.txt", "otters hold hands", "b.txt", "bees dance");
    Path lucene = folder.resolve(".maxsim4j/lucene");
    Files.createDirectories(lucene.resolve("write.lock/inner"));
    CliRun failed = index(folder);
    assertTrue(failed.failedCleanly(), failed.err());
    assertTrue(failed.err().contains("cannot write the Lucene index in " + lucene), failed.err());
    assertFalse(failed.err().contains("rebuilding") || failed.err().contains("cannot be used"), failed.err());
    CliRun search = CliRun.of("search", "--dir", folder.toString(), "--query", "bees", "--k", "1");
    assertEquals(0, search.status(), search.err());
    assertTrue(search.err().contains("cannot save the Lucene index in " + lucene), search.err());
    assertFalse(search.err().contains("rebuilding") || search.err().contains("cannot be used"), search.err());
    assertTrue(search.out().contains("b.txt:1  bees dance"), search.out());
  }

  /**
   * Text of more tokens than one index holds is refused before the model runs, from the tokenizer's count: a file of
   * punctuation (a token a character, where the first count takes one a word) was encoded for an hour, then failed
   * as "integer overflow". Found by a hostile tester.
   */
  @Test
  void moreTokensThanAnIndexHoldsAreRefusedBeforeEncoding() throws IOException {
    Path folder = folder("dots.txt", ".".repeat(6_000_000));
    CliRun index = index(folder);
    CliRun.assertOneLineError(index, 1, " tokens; one index holds at most 5592405; index fewer or smaller files");
  }

  /**
   * index names the folder where the manifest belongs before any encoding (it encoded every file, then failed to save
   * them as "Is a directory"); search warns naming it and goes on. Found by a hostile tester.
   */
  @Test
  void aManifestThatIsAFolderIsOneLineForIndexAndAWarningForSearch() throws IOException {
    Path folder = folder("a.txt", "otters hold hands");
    Files.createDirectories(folder.resolve(".maxsim4j/manifest.tsv/inner"));
    CliRun index = index(folder);
    CliRun.assertOneLineError(index, 1, folder.resolve(".maxsim4j/manifest.tsv") + " is a folder, where the index's"
        + " manifest file belongs; remove it (the index is rebuilt from the files)");
    CliRun search = CliRun.of("search", "--dir", folder.toString(), "--query", "otters", "--k", "1");
    assertEquals(0, search.status(), search.err());
    assertTrue(search.err().contains("cannot save the index in " + folder.resolve(".maxsim4j") + " ("
        + folder.resolve(".maxsim4j/manifest.tsv") + ": "), search.err());
    assertTrue(search.out().contains("a.txt:1  otters hold hands"), search.out());
    try (Stream<Path> s = Files.list(folder.resolve(".maxsim4j"))) {
      // the update lock's file stays, empty: deleting it would let two runs lock two files of one name
      assertEquals(List.of("manifest.tsv"), s.map(p -> p.getFileName().toString())
          .filter(name -> !name.equals("update.lock")).toList(), "nothing left over");
    }
  }

  @Test
  void aDamagedTokensFileLargeEnoughToBeMappedIsRebuilt() throws IOException {
    String[] words = {"otters", "river", "stone", "moss", "heron", "reed", "willow", "trout", "mud", "bank"};
    Random random = new Random(5);
    String[] files = new String[2 * 14];
    for (int f = 0; f < 14; f++) {
      StringBuilder text = new StringBuilder();
      for (int line = 0; line < 6; line++) {
        for (int w = 0; w < 24; w++) {
          text.append(words[random.nextInt(words.length)]).append(' ');
        }
        text.append('\n');
      }
      files[2 * f] = "f" + f + ".txt";
      files[2 * f + 1] = text.toString();
    }
    Path folder = folder(files);
    Files.writeString(folder.resolve("z.txt"), "bees dance in the summer sun");
    assertEquals(0, index(folder).status());
    byte[] bytes = Files.readAllBytes(tokensFile(folder));
    assertTrue(bytes.length >= 1 << 20, "a tokens file of " + bytes.length + " bytes is read, not mapped");
    for (int trial = 0; trial < 4; trial++) {
      int cut = (1 << 20) + random.nextInt(bytes.length - (1 << 20)); // still mapped, short of its header's size
      byte[] hurt = trial % 2 == 0 ? java.util.Arrays.copyOf(bytes, cut) : bytes.clone();
      if (trial % 2 == 1) {
        hurt[bytes.length - 1 - random.nextInt(bytes.length / 2)] ^= 0x10; // a token value: the header still parses
      }
      Files.write(tokensFile(folder), hurt);
      CliRun r = CliRun.of("search", "--dir", folder.toString(), "--query", "bees dancing", "--k", "1");
      assertEquals(0, r.status(), r.err());
      assertTrue(r.err().contains("rebuilding it"), r.err());
      assertTrue(r.out().contains("z.txt:1  bees dance"), r.out());
      assertEquals(0, index(folder).status());
      bytes = Files.readAllBytes(tokensFile(folder));
    }
  }

  @Test
  void aManifestReplacedByAPipeIsRebuiltNotWaitedOn() throws Exception {
    Path folder = folder("a.txt", "otters hold hands", "b.txt", "bees dance");
    assertEquals(0, index(folder).status());
    Path manifest = folder.resolve(".maxsim4j/manifest.tsv");
    Files.delete(manifest);
    Process p = new ProcessBuilder("mkfifo", manifest.toString()).start();
    assertEquals(0, p.waitFor());
    CliRun search = assertTimeoutPreemptively(Duration.ofSeconds(60),
        () -> CliRun.of("search", "--dir", folder.toString(), "--query", "otters", "--k", "1"));
    assertEquals(0, search.status(), search.err());
    assertTrue(search.err().contains("(its manifest is not a regular file); rebuilding it"), search.err());
    assertTrue(search.out().contains("a.txt:1  otters hold hands"), search.out());
    CliRun again = index(folder);
    assertEquals(0, again.status(), again.err());
    assertTrue(again.out().contains("(0 encoded, 2 reused, 0 skipped)") && again.err().isEmpty(), again.err());
  }

  private static Path tokensFile(Path folder) throws IOException {
    try (Stream<Path> s = Files.list(folder.resolve(".maxsim4j"))) {
      return s.filter(p -> p.getFileName().toString().endsWith(".safetensors")).findFirst().orElseThrow();
    }
  }

  private static byte[] flip(byte[] bytes, Random random) {
    byte[] copy = bytes.clone();
    for (int i = 0; i < 4; i++) {
      copy[random.nextInt(Math.min(copy.length, 200))] ^= (byte) (1 << random.nextInt(8));
    }
    return copy;
  }

  /**
   * A manifest damaged where its numbers still add up (two file lines swapped, tokens moved between passages, a
   * line number changed) says which tokens are whose wrongly: its checksum refuses it, where it was read as it stood
   * and searches named other files' passages. The rebuilt index keeps the store the damaged one's first line names.
   */
  @Test
  void aManifestDamagedConsistentlyIsRebuiltInItsStore() throws IOException {
    Path folder = folder("a.txt", "otters hold hands\n\n" + "river ".repeat(300) + "\n", "b.txt", "bees dance");
    assertEquals(0, CliRun.of("index", "--dir", folder.toString(), "--store", "binary").status());
    Path manifest = folder.resolve(".maxsim4j/manifest.tsv");
    String good = Files.readString(manifest);
    List<String> lines = List.of(good.split("\n"));
    String swapped = String.join("\n", lines.get(0), lines.get(1), lines.get(3), lines.get(2)) + "\n";
    java.util.regex.Matcher spans = java.util.regex.Pattern.compile("\t1:([0-9]+),([0-9]+):([0-9]+)([,\t])")
        .matcher(good);
    assertTrue(spans.find(), good);
    int first = Integer.parseInt(spans.group(1));
    int second = Integer.parseInt(spans.group(3));
    String moved = good.replace(spans.group(), "\t1:" + (first + 1) + "," + spans.group(2) + ":" + (second - 1)
        + spans.group(4));
    String renumbered = good.replace(spans.group(), "\t1:" + first + "," + (Integer.parseInt(spans.group(2)) + 4)
        + ":" + second + spans.group(4));
    for (String damage : List.of(swapped, moved, renumbered)) {
      Files.writeString(manifest, damage);
      CliRun r = index(folder);
      assertEquals(0, r.status(), r.err());
      assertTrue(r.err().contains("(its list of files does not match its checksum); rebuilding it with binary"
          + " tokens"), r.err());
      assertTrue(r.out().contains("(2 encoded, 0 reused, 0 skipped)") && r.out().contains("binary"), r.out());
      // the file lines again, but for the checksum of a text read in its modification's tick, which a slower run
      // leaves out
      assertEquals(fileLines(good), fileLines(Files.readString(manifest)));
    }
    // damage that the numbers show keeps the store as well
    Files.writeString(manifest, good.replaceFirst(":[0-9]+", ":1"));
    CliRun r = index(folder);
    assertTrue(r.err().contains("rebuilding it with binary tokens"), r.err());
    assertTrue(r.out().contains("binary"), r.out());
    // a store asked for is the one the warning names
    Files.writeString(manifest, good.replaceFirst(":[0-9]+", ":1"));
    CliRun asked = CliRun.of("index", "--dir", folder.toString(), "--store", "int8");
    assertTrue(asked.err().contains("rebuilding it with int8 tokens (--store int8)"), asked.err());
    assertTrue(asked.out().contains("int8"), asked.out());
  }

  /**
   * A manifest without the checksum of its list of files (an earlier maxsim4j's) is rebuilt: nothing tells whether its
   * file lines still say whose tokens are whose. It was read as it stood and sealed with a fresh checksum, so that
   * two of its lines swapped (a file's name and size over another's passages) put one file's name on another's tokens
   * for good. Found by a hostile tester.
   */
  @Test
  void aManifestWithoutItsListsChecksumIsRebuilt() throws IOException {
    Path folder = folder("a.txt", "otters hold hands", "b.txt", "bees dance", "c.txt", "the market fell sharply");
    assertEquals(0, index(folder).status());
    CliRun before = CliRun.of("search", "--dir", folder.toString(), "--query", "sleeping otters", "--exact");
    Path manifest = folder.resolve(".maxsim4j/manifest.tsv");
    String good = Files.readString(manifest);
    List<String> lines = new ArrayList<>(List.of(good.split("\n")));
    lines.set(1, lines.get(1).substring(0, lines.get(1).lastIndexOf('\t')));
    String[] a = lines.get(2).split("\t", -1);
    String[] c = lines.get(4).split("\t", -1);
    // what names a file swapped (size, time, path, text checksum), its passages left where their tokens lie
    for (int field = 1; field < Math.min(a.length, c.length); field++) {
      if (field != 3) {
        String t = a[field];
        a[field] = c[field];
        c[field] = t;
      }
    }
    lines.set(2, String.join("\t", a));
    lines.set(4, String.join("\t", c));
    Files.writeString(manifest, String.join("\n", lines) + "\n");
    for (int run = 0; run < 2; run++) {
      CliRun r = CliRun.of("search", "--dir", folder.toString(), "--query", "sleeping otters", "--exact");
      assertEquals(0, r.status(), r.err());
      assertEquals(ranked(before), ranked(r), r.err());
      assertEquals(run == 0, r.err().contains("(its manifest has no checksum of its list of files (an index written"
          + " by an earlier maxsim4j)); rebuilding it with bf16 tokens, as it stored them"), r.err());
    }
    assertEquals(fileLines(good), fileLines(Files.readString(manifest)));
  }

  /**
   * A manifest's file lines, without the checksum of a text read in its modification's tick (kept, or settled by a
   * later run past that tick, as a slow run does).
   */
  private static List<String> fileLines(String manifest) {
    return manifest.lines().skip(2).map(l -> l.split("\t", -1).length == 7 ? l.substring(0, l.lastIndexOf('\t')) : l)
        .toList();
  }

  /** A search's ranked lines, without its timings. */
  private static List<String> ranked(CliRun search) {
    return search.out().lines().filter(l -> l.contains(".txt:")).toList();
  }

  /** A text-named link into the index folder is skipped by name: its files would be indexed, and change each time. */
  @Test
  void aLinkIntoTheIndexFolderIsSkipped() throws IOException {
    Path folder = folder("a.txt", "otters hold hands");
    assertEquals(0, index(folder).status());
    Files.createSymbolicLink(folder.resolve("idx.txt"), Path.of(".maxsim4j/manifest.tsv"));
    for (int run = 0; run < 2; run++) {
      CliRun r = index(folder);
      assertEquals(0, r.status(), r.err());
      assertTrue(r.err().contains("idx.txt: a link into the index folder .maxsim4j"), r.err());
      assertTrue(r.out().contains("(0 encoded, 1 reused, 1 skipped)"), r.out());
    }
  }

  @Test
  void theFirstFormatIsRebuilt() throws IOException {
    Path folder = folder("a.txt", "otters hold hands");
    Path old = Files.createDirectories(folder.resolve(".maxsim4j"));
    Files.writeString(old.resolve("manifest.tsv"),
        "# maxsim4j text index v1: all-MiniLM-L6-v2 token states, 384-d, bf16\n7\t17\t0\ta.txt\n",
        StandardCharsets.UTF_8);
    Files.write(old.resolve("tokens.safetensors"), new byte[] {1, 2, 3});
    CliRun r = index(folder);
    assertEquals(0, r.status(), r.err());
    assertTrue(r.err().contains("another version") && r.err().contains("rebuilding it"), r.err());
    assertFalse(Files.exists(old.resolve("tokens.safetensors")), "the old tokens file is removed");
  }

  /** The index's files get the permissions any new file of its folder gets, not those of a private temporary file. */
  @Test
  void indexFilesGetTheUmasksPermissions() throws IOException {
    Path folder = folder("a.txt", "otters hold hands");
    assertEquals(0, index(folder).status());
    Path index = folder.resolve(".maxsim4j");
    Set<PosixFilePermission> expected = Files.getPosixFilePermissions(Files.createFile(dir.resolve("probe")));
    try (Stream<Path> files = Files.list(index)) {
      for (Path f : files.filter(Files::isRegularFile).toList()) {
        assertEquals(expected, Files.getPosixFilePermissions(f), f.toString());
      }
    }
  }

  @Test
  void indexFolderThatIsAFileIsOneLine() throws IOException {
    Path folder = folder("a.txt", "otters");
    Files.writeString(folder.resolve(".maxsim4j"), "mine");
    CliRun r = index(folder);
    assertTrue(r.failedCleanly(), r.err());
    assertTrue(r.err().contains(".maxsim4j is a file"), r.err());
    assertEquals("mine", Files.readString(folder.resolve(".maxsim4j")), "the user's file is kept");
    CliRun s = CliRun.of("search", "--dir", folder.toString(), "--query", "otters");
    assertTrue(s.failedCleanly(), s.err());
  }
}
