package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.cli.Main;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.SegmentInfos;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** search's Lucene candidates + exact rerank: equal to brute force when every passage is a candidate; kept in line. */
class LuceneSearchTest {
  @TempDir Path dir;

  record Result(int status, String out, String err) {
    /** The ranked lines, without the header that carries timings. */
    List<String> ranking() {
      return out.lines().filter(l -> l.matches("\\s*\\d+  .*")).toList();
    }
  }

  private static Result run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Result(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** The bundled paragraphs, one file each, and a long file of several passages. */
  private Path corpus() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("corpus"));
    StringBuilder all = new StringBuilder();
    for (SampleTexts.Paragraph p : SampleTexts.paragraphs()) {
      Files.writeString(folder.resolve(p.title().toLowerCase(Locale.ROOT).replace(' ', '-') + ".txt"), p.text());
      all.append(p.text()).append("\n\n");
    }
    Files.createDirectories(folder.resolve("sub"));
    Files.writeString(folder.resolve("sub/all.md"), all.toString());
    return folder;
  }

  private static final String[] QUERIES = {"how do honey bees share where food is", "what makes bread rise",
      "the moon and the tides"};

  private static void assertCandidatesEqualExact(Path folder, String... extra) {
    for (String query : QUERIES) {
      List<String> a = new ArrayList<>(List.of("search", "--dir", folder.toString(), "--query", query, "--k", "20",
          "--candidates", "1000"));
      a.addAll(List.of(extra));
      Result candidates = run(a.toArray(String[]::new));
      assertEquals(0, candidates.status(), candidates.err());
      assertTrue(candidates.out().contains("candidates") && candidates.out().contains("rerank")
          && candidates.out().contains("+ Lucene"), candidates.out());
      List<String> b = new ArrayList<>(List.of("search", "--dir", folder.toString(), "--query", query, "--k", "20",
          "--exact"));
      b.addAll(List.of(extra));
      int rerank = b.indexOf("--rerank");
      if (rerank >= 0) {
        b.subList(rerank, rerank + 2).clear();
      }
      Result exact = run(b.toArray(String[]::new));
      assertEquals(0, exact.status(), exact.err());
      assertTrue(exact.out().contains("exact MaxSim over all"), exact.out());
      assertFalse(candidates.ranking().isEmpty(), candidates.out());
      assertEquals(exact.ranking(), candidates.ranking(), query + " " + List.of(extra));
    }
  }

  /**
   * A pipe in place of a Lucene file (its commit, or a segment's file) is named and the index rebuilt: opening it
   * waited forever for a writer. Found by a hostile tester.
   */
  @Test
  void aPipeInTheLuceneFolderIsRebuiltNotWaitedFor() throws Exception {
    Path folder = corpus();
    assertEquals(0, run("index", "--dir", folder.toString()).status());
    Path lucene = folder.resolve(TextIndex.FOLDER).resolve("lucene");
    String commit;
    try (Stream<Path> files = Files.list(lucene)) {
      commit = files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("segments_")).findFirst()
          .orElseThrow();
    }
    Files.delete(lucene.resolve(commit));
    assertEquals(0, new ProcessBuilder("mkfifo", lucene.resolve(commit).toString()).start().waitFor());
    Result r = assertTimeoutPreemptively(Duration.ofMinutes(2),
        () -> run("search", "--dir", folder.toString(), "--query", QUERIES[0], "--k", "1"));
    assertEquals(0, r.status(), r.err());
    assertTrue(r.err().contains("(its file " + commit + " is not a regular file); rebuilding it"), r.err());
    assertFalse(r.ranking().isEmpty(), r.out());
    assertTrue(Files.isRegularFile(lucene.resolve(commit)) || !Files.exists(lucene.resolve(commit)));
  }

  /**
   * Links in the Lucene folder's place or among its files are removed, never followed: a rebuild cleared the folder a
   * linked lucene/ named (deleting another folder's files), and a dangling link as its lock file failed every later
   * search. Found by a hostile tester.
   */
  @Test
  void linksInTheLuceneFolderAreRemovedNotFollowed() throws Exception {
    Path folder = corpus();
    assertEquals(0, run("index", "--dir", folder.toString()).status());
    Path lucene = folder.resolve(TextIndex.FOLDER).resolve("lucene");
    Path victim = Files.createDirectories(dir.resolve("victim"));
    Files.writeString(victim.resolve("my-notes.txt"), "precious");
    Files.writeString(victim.resolve("segments_1"), "garbage");
    try (Stream<Path> files = Files.list(lucene)) {
      for (Path f : files.toList()) {
        Files.delete(f);
      }
    }
    Files.delete(lucene);
    Files.createSymbolicLink(lucene, victim);
    Result linked = run("search", "--dir", folder.toString(), "--query", QUERIES[0], "--k", "1");
    assertEquals(0, linked.status(), linked.err());
    assertTrue(linked.err().contains("lucene is a link; rebuilding it in a folder of its own"), linked.err());
    assertFalse(linked.ranking().isEmpty(), linked.out());
    assertEquals("precious", Files.readString(victim.resolve("my-notes.txt")));
    assertEquals("garbage", Files.readString(victim.resolve("segments_1")));
    assertFalse(Files.isSymbolicLink(lucene));

    Path lock = lucene.resolve(IndexWriter.WRITE_LOCK_NAME);
    Files.deleteIfExists(lock);
    Files.createSymbolicLink(lock, dir.resolve("nowhere"));
    for (int run = 0; run < 2; run++) {
      Result r = run("search", "--dir", folder.toString(), "--query", QUERIES[0], "--k", "1");
      assertEquals(0, r.status(), r.err());
      assertEquals(run == 0, r.err().contains("(its file write.lock is not a regular file); rebuilding it"), r.err());
      assertFalse(r.ranking().isEmpty(), r.out());
    }
    assertFalse(Files.exists(dir.resolve("nowhere")));
  }

  @Test
  void candidatesCoveringEveryPassageRankAsExactSearchForEveryStore() throws IOException {
    Path folder = corpus();
    Result index = run("index", "--dir", folder.toString());
    assertEquals(0, index.status(), index.err());
    assertTrue(index.out().contains("Lucene index: ") && index.out().contains("1024-d encodings"), index.out());
    assertCandidatesEqualExact(folder);
    assertCandidatesEqualExact(folder, "--rerank", "lucene");
    assertCandidatesEqualExact(folder, "--store", "int8");
    assertCandidatesEqualExact(folder, "--store", "int8", "--rerank", "lucene");
    assertCandidatesEqualExact(folder, "--store", "binary");
    assertCandidatesEqualExact(folder, "--store", "binary", "--rerank", "lucene");
    Result top = run("search", "--dir", folder.toString(), "--query", QUERIES[0], "--k", "1");
    assertTrue(top.ranking().getFirst().contains("bees.txt") || top.ranking().getFirst().contains("all.md"),
        top.out());
  }

  /**
   * Candidates are passages: where the nearest ones all lie in a few files (a file of many copies of one passage),
   * the candidates grow until their best passages name k files; past half the passages every passage is scored. One candidate listed one file for
   * --k 3; the reported case was a file of copies filling all 200 and the best file missing.
   */
  @Test
  void candidatesGrowUntilTheyNameKFiles() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("copies"));
    Files.writeString(folder.resolve("copies.txt"), "Honey bees dance to tell the hive where food is.\n\n".repeat(60));
    Files.writeString(folder.resolve("bread.txt"), "Yeast makes bread rise by giving off gas as it feeds.");
    Files.writeString(folder.resolve("moon.txt"), "The moon pulls the sea, and the tides follow it.");
    Files.writeString(folder.resolve("blank.txt"), "\u200B");
    for (String rerank : new String[] {"tokens", "lucene"}) {
      Result few = run("search", "--dir", folder.toString(), "--query", QUERIES[0], "--k", "3", "--candidates", "1",
          "--rerank", rerank);
      assertEquals(0, few.status(), few.err());
      assertEquals(3, few.ranking().size(), few.out());
      Result exact = run("search", "--dir", folder.toString(), "--query", QUERIES[0], "--k", "3", "--exact");
      // the files and their scores (which passage of the copies is shown depends on which ones were candidates)
      assertEquals(filesAndScores(exact), filesAndScores(few), rerank);
      // more than the files with text asked for: every such file, every passage scored once the candidates would
      // pass half of them
      Result all = run("search", "--dir", folder.toString(), "--query", QUERIES[0], "--k", "9", "--candidates", "1",
          "--rerank", rerank);
      assertEquals(3, all.ranking().size(), all.out());
      int passages = luceneDocs(folder);
      assertTrue(all.out().contains("(" + passages + " of " + passages + " passages"), all.out());
    }
  }

  private static List<String> filesAndScores(Result r) {
    return r.ranking().stream().map(l -> l.replaceAll(":\\d+  .*", "")).toList();
  }

  private static int luceneDocs(Path folder) throws IOException {
    try (var d = FSDirectory.open(folder.resolve(TextIndex.FOLDER).resolve(LuceneIndex.FOLDER));
        DirectoryReader r = DirectoryReader.open(d)) {
      return r.numDocs();
    }
  }

  private static int passages(Result index) {
    return Integer.parseInt(index.out().replaceAll("(?s).*skipped\\), (\\d+) passages.*", "$1"));
  }

  @Test
  void updatesReplaceOnlyChangedFilesPassages() throws IOException {
    Path folder = corpus();
    Result first = run("index", "--dir", folder.toString());
    assertEquals(0, first.status(), first.err());
    assertEquals(passages(first), luceneDocs(folder));
    Result same = run("index", "--dir", folder.toString());
    assertTrue(same.out().contains("(0 added, 0 removed)"), same.out());

    Path bees = folder.resolve("bees.txt");
    Files.writeString(bees, Files.readString(bees) + " Drones do not forage.");
    Files.setLastModifiedTime(bees, FileTime.fromMillis(Files.getLastModifiedTime(bees).toMillis() + 2000));
    Files.writeString(folder.resolve("new.md"), "Sea otters hold hands while they sleep.");
    Files.delete(folder.resolve("sub/all.md"));
    Result changed = run("index", "--dir", folder.toString());
    assertEquals(0, changed.status(), changed.err());
    assertTrue(changed.out().contains("(2 added, "), changed.out()); // one passage each for bees.txt and new.md
    assertEquals(passages(changed), luceneDocs(folder));
    Result otters = run("search", "--dir", folder.toString(), "--query", "otters sleeping", "--k", "1");
    assertEquals(0, otters.status(), otters.err());
    assertTrue(otters.ranking().getFirst().contains("new.md"), otters.out());
    Result all = run("search", "--dir", folder.toString(), "--query", "bees", "--k", "50");
    assertFalse(all.out().contains("all.md"), all.out());
    assertEquals(11, all.ranking().size(), all.out());

    // search brings the Lucene index up to date itself
    Files.writeString(folder.resolve("newer.txt"), "Penguins huddle together against the Antarctic winter.");
    Result penguins = run("search", "--dir", folder.toString(), "--query", "penguins in the cold", "--k", "1");
    assertTrue(penguins.ranking().getFirst().contains("newer.txt"), penguins.out());
    assertEquals(passages(changed) + 1, luceneDocs(folder));
  }

  private static List<Path> luceneFiles(Path folder) throws IOException {
    try (Stream<Path> s = Files.list(folder.resolve(TextIndex.FOLDER).resolve(LuceneIndex.FOLDER))) {
      return s.filter(p -> !p.getFileName().toString().equals("write.lock")).sorted().toList();
    }
  }

  @Test
  void aDamagedLuceneIndexIsRebuiltWithAWarning() throws IOException {
    Path folder = corpus();
    assertEquals(0, run("index", "--dir", folder.toString()).status());
    int docs = luceneDocs(folder);
    // a commit point cut short
    for (Path f : luceneFiles(folder)) {
      if (f.getFileName().toString().startsWith("segments_")) {
        Files.write(f, new byte[] {0x3f, (byte) 0xd7, 0x6c, 0x17, 1, 2, 3});
      }
    }
    Result search = run("search", "--dir", folder.toString(), "--query", QUERIES[1], "--k", "20");
    assertEquals(0, search.status(), search.err());
    assertTrue(search.err().contains("maxsim4j: warning: the Lucene index in") && search.err().contains("rebuilding it"),
        search.err());
    assertEquals(docs, luceneDocs(folder));
    assertCandidatesEqualExact(folder);

    // every other file of the index overwritten with garbage
    for (Path f : luceneFiles(folder)) {
      if (!f.getFileName().toString().startsWith("segments_")) {
        Files.write(f, "not a Lucene file".getBytes(StandardCharsets.US_ASCII));
      }
    }
    Result index = run("index", "--dir", folder.toString());
    assertEquals(0, index.status(), index.err());
    assertTrue(index.err().contains("rebuilding it"), index.err());
    assertTrue(index.out().contains("(" + docs + " added, 0 removed)"), index.out());
    assertCandidatesEqualExact(folder);
  }

  /**
   * An index of the version before (its manifest and Lucene commit both name it): the tokens file is rebuilt with
   * this version's encoder, and so is the Lucene index, whose token vectors and encodings came from the old one.
   */
  @Test
  void aLuceneIndexOfAnotherTokensVersionIsRebuiltWithTheTokens() throws IOException {
    Path folder = corpus();
    Result first = run("index", "--dir", folder.toString());
    assertEquals(0, first.status(), first.err());
    int passages = Integer.parseInt(first.out().replaceAll("(?s).*Lucene index: (\\d+) passages.*", "$1"));
    Path index = folder.resolve(TextIndex.FOLDER);
    Path manifest = index.resolve("manifest.tsv");
    Files.writeString(manifest, Files.readString(manifest).replace("index v5", "index v4"));
    try (Directory d = FSDirectory.open(index.resolve(LuceneIndex.FOLDER));
        IndexWriter w = new IndexWriter(d, new IndexWriterConfig().setOpenMode(IndexWriterConfig.OpenMode.APPEND))) {
      Map<String, String> data = new HashMap<>();
      w.getLiveCommitData().forEach(e -> data.put(e.getKey(), e.getValue().replace("index v5", "index v4")));
      w.setLiveCommitData(data.entrySet(), true);
      w.commit();
    }
    Result again = run("index", "--dir", folder.toString());
    assertEquals(0, again.status(), again.err());
    assertTrue(again.err().contains("another version") && again.err().contains("rebuilding it"), again.err());
    assertTrue(again.out().contains("Lucene index: " + passages + " passages (" + passages + " added"), again.out());
    Result third = run("index", "--dir", folder.toString());
    assertTrue(third.out().contains("(0 added, 0 removed)") && third.err().isEmpty(), third.out() + third.err());
  }

  /**
   * An index whose encodings another release drew (the same encoder's parameters and seed, another fingerprint, or
   * none: the releases before it recorded none) is rebuilt: its encodings would find no candidates for this
   * release's queries, silently.
   */
  @Test
  void aLuceneIndexOfOtherEncodingsIsRebuilt() throws IOException {
    Path folder = corpus();
    Result first = run("index", "--dir", folder.toString());
    assertEquals(0, first.status(), first.err());
    int passages = Integer.parseInt(first.out().replaceAll("(?s).*Lucene index: (\\d+) passages.*", "$1"));
    Path index = folder.resolve(TextIndex.FOLDER);
    for (String recorded : new String[] {"0123456789abcdef", null}) {
      try (Directory d = FSDirectory.open(index.resolve(LuceneIndex.FOLDER));
          IndexWriter w = new IndexWriter(d,
              new IndexWriterConfig().setOpenMode(IndexWriterConfig.OpenMode.APPEND))) {
        Map<String, String> data = new HashMap<>();
        w.getLiveCommitData().forEach(e -> data.put(e.getKey(), e.getValue()));
        assertEquals(LuceneIndex.ENCODER.fingerprint(), data.get("encodings"), "the commit records the fingerprint");
        if (recorded == null) {
          data.remove("encodings");
        } else {
          data.put("encodings", recorded);
        }
        w.setLiveCommitData(data.entrySet(), true);
        w.commit();
      }
      Result again = run("index", "--dir", folder.toString());
      assertEquals(0, again.status(), again.err());
      assertTrue(again.out().contains("Lucene index: " + passages + " passages (" + passages + " added"),
          recorded + ": " + again.out());
      assertCandidatesEqualExact(folder);
    }
  }

  @Test
  void aFileOfQueriesRanksEachAsItsOwnSearchAndReportsMeanStageTimes() throws IOException {
    Path folder = corpus();
    Path queries = Files.writeString(dir.resolve("queries.txt"), String.join("\n\n", QUERIES) + "\n");
    for (String mode : new String[] {"--candidates", "--exact"}) {
      List<String> a = new ArrayList<>(List.of("search", "--dir", folder.toString(), "--queries", queries.toString(),
          "--k", "3", mode));
      if (mode.equals("--candidates")) {
        a.add("50");
      }
      Result all = run(a.toArray(String[]::new));
      assertEquals(0, all.status(), all.err());
      assertTrue(all.out().contains("3 queries, mean per query after the first: encode "), all.out());
      assertTrue(all.out().contains(mode.equals("--exact") ? "exact MaxSim " : "rerank "), all.out());
      List<String> each = new ArrayList<>();
      for (String q : QUERIES) {
        a.set(3, "--query");
        a.set(4, q);
        each.addAll(run(a.toArray(String[]::new)).ranking());
      }
      assertEquals(each, all.ranking());
      // the queries are on lines 1, 3 and 5: blank lines are skipped, and each ranking names its line
      assertTrue(all.out().contains("query 3 (line 5): " + QUERIES[2]), all.out());
    }
  }

  @Test
  void badOptionsAreOneLine() throws IOException {
    Path folder = corpus();
    Result both = run("search", "--dir", folder.toString(), "--query", "x", "--exact", "--candidates", "5");
    assertEquals(2, both.status());
    assertTrue(both.err().contains("--candidates has no effect with --exact"), both.err());
    Result zero = run("search", "--dir", folder.toString(), "--query", "x", "--candidates", "0");
    assertEquals(2, zero.status());
    assertEquals(1, zero.err().lines().count(), zero.err());
    Result rerank = run("search", "--dir", folder.toString(), "--query", "x", "--rerank", "gpu");
    assertEquals(2, rerank.status());
    assertTrue(rerank.err().contains("--rerank = gpu; expected tokens or lucene"), rerank.err());
    Result neither = run("search", "--dir", folder.toString());
    assertEquals(2, neither.status());
    assertTrue(neither.err().contains("either --query TEXT or --queries FILE"), neither.err());
    Files.writeString(dir.resolve("blank.txt"), "\n  \n");
    Result blank = run("search", "--dir", folder.toString(), "--queries", dir.resolve("blank.txt").toString());
    assertEquals(1, blank.status());
    assertTrue(blank.err().contains("holds no query"), blank.err());
  }

  @Test
  void anEncoderFailingPartWayLeavesTheLuceneIndexAsItWasAndIsReportedAsItself() throws IOException {
    Path folder = corpus();
    Result first = run("index", "--dir", folder.toString());
    assertEquals(0, first.status(), first.err());
    int docs = luceneDocs(folder);
    long generation = luceneGeneration(folder);
    // the first and the last file change, so their passages are added in two calls of the encoder
    List<Path> files;
    try (Stream<Path> s = Files.walk(folder)) {
      files = s.filter(p -> p.toString().endsWith(".txt") || p.toString().endsWith(".md"))
          .filter(p -> !p.startsWith(folder.resolve(TextIndex.FOLDER))).sorted().toList();
    }
    for (Path f : List.of(files.getFirst(), files.getLast())) {
      Files.writeString(f, Files.readString(f) + " One more sentence.");
      Files.setLastModifiedTime(f, FileTime.fromMillis(Files.getLastModifiedTime(f).toMillis() + 2000));
    }
    ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
    PrintStream err = new PrintStream(errBytes, true, StandardCharsets.UTF_8);
    Warnings warnings = new Warnings(err);
    try (TextModel encoder = TextModel.load();
        MaxSim maxSim = MaxSim.builder().backend("cpu").build();
        UpdateLock lock = new UpdateLock(err)) {
      TextIndex index = TextIndex.update(folder, () -> encoder, true, warnings, err, null, lock);
      int[] calls = {0};
      IllegalStateException failed = assertThrows(IllegalStateException.class, () -> LuceneIndex.sync(folder, index,
          batch -> {
            if (++calls[0] > 1) {
              throw new IllegalStateException("the encoder failed on call " + calls[0]);
            }
            return maxSim.encodeDocuments(LuceneIndex.ENCODER, batch);
          }, true, warnings, err));
      assertEquals("the encoder failed on call 2", failed.getMessage());
      assertFalse(errBytes.toString(StandardCharsets.UTF_8).contains("rebuilding"), errBytes.toString());
      assertEquals(generation, luceneGeneration(folder));
      assertEquals(docs, luceneDocs(folder));
    }
    Result again = run("index", "--dir", folder.toString());
    assertEquals(0, again.status(), again.err());
    assertFalse(again.err().contains("rebuilding"), again.err());
    assertEquals(passages(again), luceneDocs(folder));
    assertCandidatesEqualExact(folder);
  }

  private static long luceneGeneration(Path folder) throws IOException {
    try (var d = FSDirectory.open(folder.resolve(TextIndex.FOLDER).resolve(LuceneIndex.FOLDER))) {
      return SegmentInfos.readLatestCommit(d).getGeneration();
    }
  }

  /** Files of equal score rank in file order on every path, also once an update has renumbered Lucene's documents. */
  @Test
  void tiesRankInFileOrderOnEveryPathAfterAnUpdate() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("twins"));
    String text = "Sea otters hold hands while they sleep so that they do not drift apart.";
    Files.writeString(folder.resolve("a.txt"), text);
    Files.writeString(folder.resolve("b.txt"), text);
    Files.writeString(folder.resolve("c.txt"), "Honey bees dance to show the others where the flowers are.");
    assertEquals(0, run("index", "--dir", folder.toString()).status());
    // the same text, a new version: a.txt's passage is added again, after b.txt's
    Path a = folder.resolve("a.txt");
    Files.setLastModifiedTime(a, FileTime.fromMillis(Files.getLastModifiedTime(a).toMillis() + 2000));
    Result updated = run("index", "--dir", folder.toString());
    assertTrue(updated.out().contains("(1 added, 1 removed)"), updated.out());
    List<List<String>> rankings = new ArrayList<>();
    for (String[] mode : new String[][] {{"--exact"}, {"--rerank", "tokens"}, {"--rerank", "lucene"}}) {
      List<String> args = new ArrayList<>(List.of("search", "--dir", folder.toString(), "--query", "otters sleeping",
          "--k", "3"));
      args.addAll(List.of(mode));
      Result r = run(args.toArray(String[]::new));
      assertEquals(0, r.status(), r.err());
      rankings.add(r.ranking().stream().map(l -> l.replaceAll("^\\s*\\d+\\s+\\S+\\s+(\\S+).*", "$1")).toList());
    }
    assertEquals(List.of("a.txt:1", "b.txt:1", "c.txt:1"), rankings.get(0));
    assertEquals(rankings.get(0), rankings.get(1));
    assertEquals(rankings.get(0), rankings.get(2));
  }
  /**
   * Passages of one encoding (text without spaces, such as a base64 blob, is [CLS] [UNK] [SEP] every 1,200
   * characters) cut Lucene's HNSW graph apart, so that its search reached a few dozen of them and none of the other
   * files: the candidates, and so the results, held no file but the blob's. The candidates the graph leaves short
   * are now found by the exact nearest encodings.
   */
  @Test
  void passagesOfOneEncodingDoNotHideTheOtherFiles() throws IOException {
    Path folder = corpus();
    // a blob of one word repeated: its passages encode alike ("x" repeated was [UNK], now no word piece at all)
    Files.writeString(folder.resolve("blob.md"), "salt ".repeat(Passages.CHARS * 200));
    assertEquals(0, run("index", "--dir", folder.toString()).status());
    for (String[] mode : new String[][] {{"--rerank", "tokens"}, {"--rerank", "lucene"}}) {
      Result exact = run("search", "--dir", folder.toString(), "--query", QUERIES[2], "--k", "3", "--exact");
      Result candidates = run("search", "--dir", folder.toString(), "--query", QUERIES[2], "--k", "3", mode[0],
          mode[1]);
      assertEquals(0, candidates.status(), candidates.err());
      assertTrue(candidates.out().contains("(" + SearchCommand.CANDIDATES + " of "), candidates.out());
      // the candidates are the nearest encodings, and the best file is found as exact search finds it
      assertTrue(exact.ranking().getFirst().contains("tides.txt:1"), exact.out());
      assertEquals(exact.ranking().getFirst(), candidates.ranking().getFirst(), List.of(mode).toString());
    }
  }
}
