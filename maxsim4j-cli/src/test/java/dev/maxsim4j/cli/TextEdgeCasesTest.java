package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Empty and odd folders, odd arguments, long files and progress of the text commands. */
class TextEdgeCasesTest {
  @TempDir Path dir;

  @Test
  void emptyFolderIsAnErrorThatCreatesNothing() throws IOException {
    Path empty = Files.createDirectories(dir.resolve("empty"));
    Files.writeString(empty.resolve("notes.pdf"), "not a text file by name");
    for (String command : new String[] {"index", "search"}) {
      CliRun r = command.equals("index") ? CliRun.of("index", "--dir", empty.toString())
          : CliRun.of("search", "--dir", empty.toString(), "--query", "anything");
      assertTrue(r.failedCleanly(), r.err());
      assertTrue(r.err().contains("--dir " + empty + " holds no .txt or .md file"), r.err());
      assertFalse(Files.exists(empty.resolve(".maxsim4j")), "no index folder is created");
    }
    Path blank = Files.createDirectories(dir.resolve("blank"));
    Files.writeString(blank.resolve("a.txt"), " \n\n\t");
    CliRun r = CliRun.of("index", "--dir", blank.toString());
    assertTrue(r.failedCleanly(), r.err());
    assertTrue(r.err().contains("hold no text"), r.err());
    assertFalse(Files.exists(blank.resolve(".maxsim4j")), "no index folder is created");
    // text the encoder reads as no word piece (zero-width spaces, a lone combining accent) indexed nothing, and
    // every search then ranked nothing with status 0
    Path invisible = Files.createDirectories(dir.resolve("invisible"));
    Files.writeString(invisible.resolve("a.txt"), "\u200b\u200b");
    Files.writeString(invisible.resolve("b.txt"), "\u0301");
    CliRun none = CliRun.of("index", "--dir", invisible.toString());
    assertTrue(none.failedCleanly(), none.err());
    assertTrue(none.err().contains("hold no word the encoder reads"), none.err());
    // refused from the tokenizer's counts before the index folder is made (a hostile tester's finding: it was made
    // with its lock file, and left behind)
    assertFalse(Files.exists(invisible.resolve(".maxsim4j")), "no index folder is created");
    // beside a file with text, such a file (emoji alone: outside the vocabulary) is named once, when encoded
    Path mixed = Files.createDirectories(dir.resolve("mixed"));
    Files.writeString(mixed.resolve("a.txt"), "otters hold hands while they sleep");
    Files.writeString(mixed.resolve("b.txt"), "\uD83D\uDE00 \uD83E\uDD80");
    CliRun some = CliRun.of("index", "--dir", mixed.toString());
    assertEquals(0, some.status(), some.err());
    assertTrue(some.err().contains("b.txt under " + mixed + " holds no word the encoder reads"), some.err());
    assertFalse(some.err().contains("a.txt under"), some.err());
    CliRun again = CliRun.of("index", "--dir", mixed.toString());
    assertFalse(again.err().contains("holds no word"), again.err());
  }

  /**
   * A text of more word pieces than a run holds is refused naming --in and the line, before the model runs, and the
   * output already there stays: one native call on such a text would abort the JVM from inside the tokenizer.
   */
  @Test
  void aTextOfMoreTokensThanARunHoldsIsRefusedNamingItsLine() throws IOException {
    long limit = Math.min((Integer.MAX_VALUE - 8) / 384, Runtime.getRuntime().maxMemory() / 8 * 5 / (2L * 4 * 384));
    Path texts = Files.writeString(dir.resolve("texts.txt"), "tides\n" + "!".repeat((int) limit + 10) + "\n");
    Path out = Files.writeString(dir.resolve("out.safetensors"), "kept");
    CliRun r = CliRun.of("encode", "--in", texts.toString(), "--out", out.toString());
    CliRun.assertOneLineError(r, 1, "encode: --in " + texts + " holds more than " + limit + " tokens (word pieces and"
        + " each window's [CLS] and [SEP]), passed at line 2 of " + texts + "; expected at most " + limit);
    assertTrue(r.err().contains("split the texts over several runs, or raise the heap (JAVA_OPTS=-Xmx...)"), r.err());
    assertEquals("kept", Files.readString(out));
  }

  private static void assertOneLineErrorNaming(CliRun r, String fragment) {
    assertTrue(r.failedCleanly(), r.err());
    assertTrue(r.err().contains(fragment), r.err());
  }

  @Test
  void wrongKindsOfPathAreOneLine() throws IOException {
    Path file = Files.writeString(dir.resolve("a.txt"), "otters");
    CliRun index = CliRun.of("index", "--dir", file.toString());
    assertTrue(index.failedCleanly(), index.err());
    assertTrue(index.err().contains(file + " is a file; expected a folder"), index.err());
    assertOneLineErrorNaming(CliRun.of("search", "--dir", file.toString(), "--query", "q"),
        "--dir " + file + " is a file; expected a folder of .txt/.md files");
    // a missing folder was "no such file: notes", naming neither --dir nor what it takes
    Path missing = dir.resolve("missing");
    for (String command : new String[] {"index", "search"}) {
      CliRun r = command.equals("index") ? CliRun.of("index", "--dir", missing.toString())
          : CliRun.of("search", "--dir", missing.toString(), "--query", "q");
      assertOneLineErrorNaming(r, "--dir " + missing + ": no such folder; expected a folder of .txt/.md files");
    }
    CliRun rerank = CliRun.of("rerank", "--query", "q", "--candidates", dir.toString());
    assertTrue(rerank.failedCleanly(), rerank.err());
    assertTrue(rerank.err().contains(dir + " is a folder; expected a text file"), rerank.err());
    CliRun encode = CliRun.of("encode", "--in", dir.resolve("missing").toString(), "--out",
        dir.resolve("o.safetensors").toString());
    assertTrue(encode.failedCleanly() && encode.err().contains("no such file"), encode.err());
  }

  @Test
  void badQueriesAndCountsAreUsageErrors() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("f"));
    Files.writeString(folder.resolve("a.txt"), "otters");
    Path candidates = Files.writeString(dir.resolve("c.txt"), "one\ntwo\n");
    String[][] bad = {
        {"search", "--dir", folder.toString(), "--query", "  "},
        {"search", "--dir", folder.toString(), "--query", ""},
        {"search", "--dir", folder.toString(), "--query", "otters", "--k", "0"},
        {"search", "--dir", folder.toString(), "--query", "otters", "--k", "-3"},
        {"search", "--dir", folder.toString(), "--query", "otters", "--k", "many"},
        {"rerank", "--query", "\t", "--candidates", candidates.toString()},
        {"rerank", "--query", "q", "--candidates", candidates.toString(), "--top", "0"},
    };
    for (String[] args : bad) {
      CliRun r = CliRun.of(args);
      assertEquals(2, r.status(), String.join(" ", args) + ": " + r.err());
      assertEquals(1, r.err().lines().count(), r.err());
    }
    assertFalse(Files.exists(folder.resolve(".maxsim4j")), "a bad command line does no work");
  }

  @Test
  void linksDoNotLoopAndDanglingLinksAreIgnored() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("linked"));
    Files.writeString(folder.resolve("a.txt"), "otters hold hands");
    Files.createSymbolicLink(folder.resolve("loop"), folder);
    Files.createSymbolicLink(folder.resolve("gone.txt"), dir.resolve("nowhere.txt"));
    Files.createSymbolicLink(folder.resolve("alias.txt"), folder.resolve("a.txt"));
    CliRun r = CliRun.of("index", "--dir", folder.toString());
    assertEquals(0, r.status(), r.err());
    assertTrue(r.out().contains("indexed 2 files"), r.out());
  }

  @Test
  void aLongFileIsCutIntoPassagesAndFoundByItsBestOne() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("long"));
    String filler = IntStream.range(0, 60).mapToObj(i -> "the committee met on day " + i + " to discuss the budget")
        .collect(Collectors.joining("\n"));
    Files.writeString(folder.resolve("minutes.txt"), filler + "\nsea otters hold hands while they sleep\n" + filler);
    Files.writeString(folder.resolve("short.md"), "bread rises because yeast makes gas");
    CliRun index = CliRun.of("index", "--dir", folder.toString());
    assertEquals(0, index.status(), index.err());
    String passages = index.out().replaceAll("(?s).* (\\d+) passages.*", "$1").strip();
    assertTrue(Integer.parseInt(passages) >= 7, index.out());
    CliRun search = CliRun.of("search", "--dir", folder.toString(), "--query", "otters sleeping", "--k", "2");
    assertEquals(0, search.status(), search.err());
    String first = search.out().lines().filter(l -> l.strip().startsWith("1 ")).findFirst().orElseThrow();
    int line = Integer.parseInt(first.replaceAll(".*minutes\\.txt:(\\d+) .*", "$1"));
    assertTrue(line > 1 && line <= 61, "the passage near line 61 is reported: " + first);
    assertTrue(search.out().lines().filter(l -> l.contains("minutes.txt")).count() == 1, "one line per file");
  }

  @Test
  void longWorkShowsProgressWithCounts() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("progress"));
    for (int i = 0; i < 3; i++) {
      Files.writeString(folder.resolve(i + ".txt"), "note number " + i);
    }
    Path candidates = Files.writeString(dir.resolve("c.txt"), "one\ntwo\nthree\nfour\n");
    Progress.showAlways(true);
    try {
      CliRun index = CliRun.of("index", "--dir", folder.toString());
      assertTrue(index.err().contains("encoding 3 passages of 3 new or changed files ... 100% (3 of 3)"),
          index.err());
      assertTrue(index.err().contains("adding 3 passages to the Lucene index ... 100% (3 of 3)"), index.err());
      CliRun search = CliRun.of("search", "--dir", folder.toString(), "--query", "note", "--exact");
      assertTrue(search.err().contains("scoring 3 passages ... 100% (3 of 3)"), search.err());
      CliRun rerank = CliRun.of("rerank", "--query", "two", "--candidates", candidates.toString());
      assertTrue(rerank.err().contains("encoding 4 candidates (4 passages) ... 100% (4 of 4)"), rerank.err());
      assertTrue(rerank.err().contains("scoring 4 passages ... 100% (4 of 4)"), rerank.err());
    } finally {
      Progress.showAlways(false);
    }
  }

  /** A file that is new but empty (or edited down to blanks) joins an index as a file without passages. */
  @Test
  void anEmptyFileAddedToAnIndexedFolderIsKeptWithoutPassages() throws IOException {
    Path notes = Files.createDirectories(dir.resolve("notes"));
    Files.writeString(notes.resolve("a.txt"), "otters hold hands while they sleep");
    assertEquals(0, CliRun.of("index", "--dir", notes.toString()).status());
    Files.writeString(notes.resolve("b.txt"), "");
    for (int run = 0; run < 2; run++) {
      CliRun r = CliRun.of("search", "--dir", notes.toString(), "--query", "sleeping otters");
      assertEquals(0, r.status(), r.err());
      assertTrue(r.out().contains("a.txt"), r.out());
    }
    try (var files = Files.list(notes.resolve(".maxsim4j"))) {
      assertFalse(files.anyMatch(f -> f.getFileName().toString().endsWith(".tmp")), "no temporary file is left");
    }
  }

  /**
   * Text the tokenizer keeps no word piece of (zero-width spaces, lone combining marks, control characters) is only
   * [CLS] and [SEP], which match every query alike: such a passage is never listed, such a query is an error.
   */
  @Test
  void textWithoutAWordPieceMatchesNothing() throws IOException {
    Path notes = Files.createDirectories(dir.resolve("notes"));
    Files.writeString(notes.resolve("a.txt"), "otters hold hands while they sleep");
    Files.writeString(notes.resolve("b.txt"), "\u200b\u200b \u0301 \u0001");
    Files.writeString(notes.resolve("c.txt"), "bees dance to show where food is\n\n" + "\u200b ".repeat(400));
    assertEquals(0, CliRun.of("index", "--dir", notes.toString()).status());
    for (String[] mode : new String[][] {{"--exact"}, {"--candidates", "50"}, {"--candidates", "50", "--rerank",
        "lucene"}}) {
      for (String query : new String[] {"sleeping otters", "the moon"}) {
        String[] args = new String[] {"search", "--dir", notes.toString(), "--query", query, "--k", "10"};
        CliRun r = CliRun.of(java.util.stream.Stream.concat(java.util.Arrays.stream(args),
            java.util.Arrays.stream(mode)).toArray(String[]::new));
        assertEquals(0, r.status(), r.err());
        assertTrue(r.out().contains("a.txt:1") && r.out().contains("c.txt:1"), r.out());
        assertFalse(r.out().contains("b.txt"), String.join(" ", mode) + ": " + r.out());
      }
    }
    for (String mode : new String[] {"--exact", "--candidates"}) {
      CliRun empty = mode.equals("--exact")
          ? CliRun.of("search", "--dir", notes.toString(), "--query", "\u200b\u0301", mode)
          : CliRun.of("search", "--dir", notes.toString(), "--query", "\u200b\u0301", mode, "50");
      CliRun.assertOneLineError(empty, 1, "has no word piece");
    }
    Path candidates = Files.writeString(dir.resolve("candidates.txt"), "\u200b\u200b\nbees dance\notters sleep\n");
    CliRun rerank = CliRun.of("rerank", "--query", "sleeping otters", "--candidates", candidates.toString());
    assertEquals(0, rerank.status(), rerank.err());
    java.util.List<String> ranked = rerank.out().lines().filter(l -> l.matches("\\s*\\d+  .*")).toList();
    assertEquals(3, ranked.size(), rerank.out());
    assertTrue(ranked.get(2).matches("\\s*3\\s+-\\d+\\.\\d+\\s+1 .*"), rerank.out());
    CliRun.assertOneLineError(CliRun.of("rerank", "--query", "\u0001", "--candidates", candidates.toString()), 1,
        "has no word piece");
  }

  /**
   * A line of --queries without a word piece ended the run part way, after the index was brought up to date and the
   * lines before it were ranked and printed, with an error naming neither the file nor the line: every query is now
   * checked first.
   */
  @Test
  void aQueriesLineWithoutAWordPieceIsNamedBeforeAnyWork() throws IOException {
    Path notes = Files.createDirectories(dir.resolve("notes"));
    Files.writeString(notes.resolve("a.txt"), "otters hold hands while they sleep");
    Path queries = Files.writeString(dir.resolve("queries.txt"), "sleeping otters\n\n\u200b\u0301\nthe moon\n");
    for (String mode : new String[] {"--exact", "--candidates"}) {
      CliRun r = mode.equals("--exact")
          ? CliRun.of("search", "--dir", notes.toString(), "--queries", queries.toString(), mode)
          : CliRun.of("search", "--dir", notes.toString(), "--queries", queries.toString(), mode, "50");
      CliRun.assertOneLineError(r, 1, "search: --queries " + queries + " line 3: the query \"");
      assertTrue(r.err().contains("has no word piece"), r.err());
      assertEquals("", r.out(), "nothing ranked before the bad line");
      assertFalse(Files.exists(notes.resolve(".maxsim4j")), "no index is built for a run that cannot complete");
    }
  }

  /**
   * A hostile tester's finding: the model's 90 MB were read onto the heap (twice that while read), so index ran out
   * of memory below some 170 MB for a single file. They are read into native memory now.
   */
  @Test
  void aSmallHeapIndexesAndSearchesASmallFolder() throws Exception {
    Path folder = Files.createDirectories(dir.resolve("small"));
    Files.writeString(folder.resolve("a.txt"), "Sea otters hold hands while they sleep.");
    Files.writeString(folder.resolve("b.txt"), "Bread rises because yeast makes gas.");
    for (String command : new String[] {"index\u0001--dir\u0001" + folder,
        "search\u0001--dir\u0001" + folder + "\u0001--query\u0001otters"}) {
      Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx96m",
          "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-cp",
          System.getProperty("java.class.path"), NonUtf8LocaleTest.Child.class.getName(), command)
          .redirectErrorStream(true).start();
      String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(child.waitFor(5, TimeUnit.MINUTES), command + " ended: " + output);
      assertEquals(0, child.exitValue(), output);
      assertTrue(output.contains("\n0 "), command + ": " + output);
    }
  }
}
