package dev.maxsim4j.bench.retrieval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.bench.BenchRun;
import dev.maxsim4j.bench.retrieval.KnownItems.Item;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.UsageException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile options of {@code retrieval}: FDE sets the encoder refuses are found when the option is read, not after
 * the exact search has run; lists with an empty entry, extra sets that --synthetic would ignore, and corpora whose
 * token offsets overflow are refused before any corpus is made.
 */
class HostileRetrievalOptionsTest {
  @TempDir Path dir;

  private BenchRun synthetic(String... more) {
    String[] base = {"retrieval", "--queries", "3", "--threads", "1", "--index-dir", dir.toString()};
    String[] argv = Arrays.copyOf(base, base.length + more.length);
    System.arraycopy(more, 0, argv, base.length, more.length);
    return assertTimeoutPreemptively(Duration.ofSeconds(60), () -> BenchRun.of(argv));
  }

  @Test
  void fdeSetsTheEncoderRefusesAreFoundBeforeAnySizeRuns() {
    BenchRun run = synthetic("--synthetic", "10", "--fde", "11:1:1");
    assertTrue(run.refusedWith("--fde 11:1:1: simHashBits = 11"), run.err());
    assertTrue(run.out().isEmpty(), "nothing run before the refusal: " + run.out());
    UsageException lucene = assertThrows(UsageException.class, () -> FdeParams.parseList("--lucene", "2:2:4,11:1:1",
        384));
    assertTrue(lucene.getMessage().startsWith("--lucene 11:1:1: simHashBits = 11"), lucene.getMessage());
  }

  @Test
  void listsWithAnEmptyEntryAreRefused() {
    for (String[] option : new String[][] {{"--synthetic", "10,"}, {"--synthetic", "10,,20"},
        {"--candidates", "5,"}, {"--fde", "3:8:8,"}, {"--fde", "3:8:8:"}}) {
      BenchRun run = option[0].equals("--synthetic") ? synthetic(option[0], option[1], "--exact-only")
          : synthetic("--synthetic", "10", "--exact-only", option[0], option[1]);
      assertTrue(run.refusedWith(option[0]) && run.refusedWith(option[1]), String.join(" ", option) + ": " + run.err());
      assertTrue(run.out().isEmpty(), run.out());
    }
  }

  @Test
  void setsThatSyntheticWouldIgnoreAreRefused() {
    BenchRun fde = synthetic("--synthetic", "10", "--fde", "3:8:8,2:2:4");
    assertTrue(fde.refusedWith("--fde '3:8:8,2:2:4'"), fde.err());
    BenchRun candidates = synthetic("--synthetic", "10", "--candidates", "5,50");
    assertTrue(candidates.refusedWith("--candidates '5,50'"), candidates.err());
  }

  /** FDE encodings of a size the heap cannot hold are refused before any size runs, naming --fde and the sizes. */
  @Test
  void encodingsTheHeapCannotHoldAreRefusedBeforeAnySizeRuns() {
    long documents = Runtime.getRuntime().maxMemory() / (4L * 1024 * 64) + 1; // 10:1:64 encodes 1024 x 64 floats
    BenchRun run = synthetic("--synthetic", "10," + documents, "--fde", "10:1:64");
    assertTrue(run.refusedWith("--fde 10:1:64 for --synthetic " + documents), run.err());
    assertTrue(run.out().isEmpty(), "nothing run before the refusal: " + run.out());
  }

  /**
   * A hostile tester's finding: the corpus, off the heap, was allocated whatever its size (1.6 GB under -Xmx1g;
   * 550 GB failed naming no option); one larger than the machine's memory beside the heap is refused.
   */
  @Test
  void aCorpusLargerThanTheMachineIsRefusedBeforeAnySizeRuns() {
    BenchRun run = synthetic("--synthetic", "10,100000000", "--exact-only");
    assertTrue(run.refusedWith("retrieval: --synthetic 100000000 documents take 381.5 GiB of native memory; this"
        + " machine has "), run.err());
    assertTrue(run.out().isEmpty(), "nothing run before the refusal: " + run.out());
  }

  /** A run of exact MaxSim alone does not report the FDE set and candidate count it never used. */
  @Test
  void anExactOnlyRunReportsNoFdeSet() {
    BenchRun run = synthetic("--synthetic", "10", "--exact-only", "--fde", "2:2:4", "--candidates", "7");
    assertTrue(run.status() == 0 && run.out().contains("exact MaxSim alone") && !run.out().contains("2:2:4"),
        run.err() + run.out());
  }

  @Test
  void corporaWhoseTokenOffsetsOverflowAreRefusedBeforeTheyAreMade() {
    BenchRun run = synthetic("--synthetic", "10,200000000", "--exact-only");
    assertTrue(run.refusedWith("--synthetic"), run.err());
    assertTrue(run.err().contains("200000000"), run.err());
    assertTrue(run.out().isEmpty(), run.out());
  }

  @Test
  void luceneExactIsReadBeforeTheCorpusIsLoaded() {
    // read inside the Lucene step, a bad --lucene-exact ended the run after the exact search and the FDE sweep
    String[] argv = {"retrieval", "--lucene-exact", "x"};
    Args a = new Args("maxsim4j bench", "retrieval", argv, 1, Set.of("--lucene-exact"), Set.of());
    TokenCache empty = new TokenCache(dir.resolve("no-cache"), "none");
    List<Item> items = List.of(new Item("p", "1", "0123456789ab", "A p", "The p package."));
    UsageException e = assertThrows(UsageException.class,
        () -> KnownItemEvaluation.run(a, items, empty, new PrintStream(OutputStream.nullOutputStream())));
    assertTrue(e.getMessage().contains("--lucene-exact = 'x'"), e.getMessage());
  }

  @Test
  void optionsTheChosenModeDoesNotReadAreRefusedNotIgnored() {
    String out = dir.resolve("list.txt").toString();
    String[][] cases = {{"--synthetic", "10", "--docs", "5"}, {"--synthetic", "10", "--encode", "5"},
        {"--synthetic", "10", "--prepare", out}, {"--exact-only"}, {"--packages", out},
        {"--prepare", out, "--docs", "5"}, {"--encode", "5", "--fde", "3:8:8"}, {"--encode", "5", "--json", out},
        {"--encode", "5", "--synthetic", "10"}, {"--prepare", out, "--encode", "5"}};
    for (String[] options : cases) {
      String[] argv = new String[options.length + 1];
      argv[0] = "retrieval";
      System.arraycopy(options, 0, argv, 1, options.length);
      BenchRun run = BenchRun.of(argv);
      assertTrue(run.status() == 2 && run.err().lines().count() == 1 && run.err().contains("retrieval: "),
          String.join(" ", options) + ": " + run.err());
      assertTrue(run.out().isEmpty(), run.out());
    }
  }

  @Test
  void fdeEncodingsOfAllDocumentsThatNoArrayHoldsAreRefusedBeforeTheCorpusIsLoaded() {
    // 40000 documents x 65536 FDE dimensions: past one array, found as "integer overflow" after the exact search
    List<Item> items = new ArrayList<>();
    for (int i = 0; i < 40_000; i++) {
      items.add(new Item("p" + i, "1", "0123456789ab", "A p", "The p package."));
    }
    for (String option : new String[] {"--fde", "--lucene"}) {
      String[] argv = option.equals("--fde") ? new String[] {"retrieval", "--docs", "40000", "--fde", "8:16:16"}
          : new String[] {"retrieval", "--docs", "40000", "--fde", "4:8:8", "--lucene", "8:16:16"};
      Args a = new Args("maxsim4j bench", "retrieval", argv, 1, Set.of("--docs", "--fde", "--lucene"), Set.of());
      TokenCache empty = new TokenCache(dir.resolve("no-cache"), "none");
      UsageException e = assertThrows(UsageException.class,
          () -> KnownItemEvaluation.run(a, items, empty, new PrintStream(OutputStream.nullOutputStream())));
      assertTrue(e.getMessage().startsWith(option + " 8:16:16: 40000 documents x 65536"), e.getMessage());
    }
    if (Runtime.getRuntime().maxMemory() < 7L << 30) {
      // 30000 x 65536 floats fit one array, but not a heap under 7.3 GiB
      String[] argv = {"retrieval", "--docs", "30000", "--fde", "8:16:16"};
      Args a = new Args("maxsim4j bench", "retrieval", argv, 1, Set.of("--docs", "--fde"), Set.of());
      TokenCache empty = new TokenCache(dir.resolve("no-cache"), "none");
      UsageException e = assertThrows(UsageException.class,
          () -> KnownItemEvaluation.run(a, items, empty, new PrintStream(OutputStream.nullOutputStream())));
      assertTrue(e.getMessage().contains("the heap is"), e.getMessage());
    }
  }

  @Test
  void folderOptionsThatNameAFileAreRefusedByNameBeforeAnyWork() throws Exception {
    Path file = Files.writeString(dir.resolve("a-file"), "x");
    String[][] cases = {{"--synthetic", "10", "--queries", "3", "--index-dir", file.toString()},
        {"--encode", "5", "--cache", file.toString()}, {"--encode", "5", "--cache", "/dev/null"}};
    for (String[] options : cases) {
      String[] argv = new String[options.length + 1];
      argv[0] = "retrieval";
      System.arraycopy(options, 0, argv, 1, options.length);
      BenchRun run = BenchRun.of(argv);
      String option = options[options.length - 2];
      assertTrue(run.refusedWith("retrieval: " + option + " " + options[options.length - 1] + " is not a folder"),
          String.join(" ", options) + ": " + run.err());
      assertTrue(run.out().isEmpty(), run.out());
    }
  }

  /**
   * A hostile tester's finding: --cache and --index-dir were made before the other options were read, so a run
   * refused for --docs 0 left them behind; they are checked, not made, until the work starts.
   */
  @Test
  void aRefusedRunMakesNoFolder() throws Exception {
    String missing = dir.resolve("none.txt").toString();
    String[][] cases = {{"--docs", "0", "--cache", "c0"}, {"--encode", "0", "--cache", "c2"},
        {"--docs", "5", "--cache", "c1", "--translations", missing, "--index-dir", "i1"},
        {"--encode", "5", "--cache", "c3/deeper", "--translations", missing},
        {"--synthetic", "10", "--candidates", "1,2", "--index-dir", "idx"},
        {"--synthetic", "10", "--fde", "11:1:1", "--index-dir", "idx/deeper"}};
    for (String[] options : cases) {
      String[] argv = new String[options.length + 1];
      argv[0] = "retrieval";
      for (int i = 0; i < options.length; i++) {
        boolean folder = i > 0 && (options[i - 1].equals("--cache") || options[i - 1].equals("--index-dir"));
        argv[i + 1] = folder ? dir.resolve(options[i]).toString() : options[i];
      }
      BenchRun run = BenchRun.of(argv);
      assertTrue(run.status() != 0 && run.err().lines().count() == 1 && !run.err().contains("\tat "),
          String.join(" ", options) + ": " + run.err());
      try (Stream<Path> left = Files.list(dir)) {
        assertEquals(List.of(), left.toList(), String.join(" ", options) + " left a folder behind");
      }
    }
    // what a folder option cannot become is still found before any work, without making any of the path
    Path file = Files.writeString(dir.resolve("a-file"), "x");
    BenchRun underFile = BenchRun.of("retrieval", "--encode", "5", "--cache", file.resolve("sub/deeper").toString());
    assertTrue(underFile.refusedWith("retrieval: --cache " + file.resolve("sub/deeper") + " cannot be made: " + file
        + " is not a folder"), underFile.err());
    BenchRun tooLong = BenchRun.of("retrieval", "--encode", "5", "--cache", dir.resolve("c".repeat(300)).toString());
    assertTrue(tooLong.refusedWith("cannot be made (file name too long)"), tooLong.err());
    Path link = Files.createSymbolicLink(dir.resolve("dangling"), dir.resolve("gone"));
    BenchRun dangling = BenchRun.of("retrieval", "--encode", "5", "--cache", link.toString());
    assertTrue(dangling.refusedWith("is a link to no folder"), dangling.err());
    try (Stream<Path> left = Files.list(dir)) {
      assertEquals(List.of(file, link), left.sorted().toList(), "no folder made");
    }
    // a run that gets to its work makes the folders it needs
    BenchRun made = BenchRun.of("retrieval", "--synthetic", "20", "--queries", "2", "--candidates", "5", "--fde",
        "2:2:4", "--threads", "1", "--index-dir", dir.resolve("new/deeper").toString());
    assertEquals(0, made.status(), made.err());
    assertTrue(Files.isDirectory(dir.resolve("new/deeper")));
  }

  @Test
  void anOutputOntoAnInputListIsRefusedAndTheListKept() throws Exception {
    // --prepare onto the Translation-en it read replaced apt's list with the filtered one
    Path translations = Files.writeString(dir.resolve("Translation-en"), "Package: a\n");
    Path packages = Files.writeString(dir.resolve("Packages"), "Package: a\n");
    String[][] cases = {
        {"retrieval", "--prepare", translations.toString(), "--translations", translations.toString(), "--packages",
            packages.toString()},
        {"retrieval", "--prepare", packages.toString(), "--translations", translations.toString(), "--packages",
            packages.toString()},
        {"retrieval", "--json", translations.toString(), "--translations", translations.toString()},
        {"quality", "--json", translations.toString(), "--translations", translations.toString()}};
    for (String[] argv : cases) {
      BenchRun run = BenchRun.of(argv);
      assertTrue(run.failedCleanly() && run.err().contains("is also the input"), String.join(" ", argv) + ": "
          + run.err());
      assertTrue(Files.readString(translations).equals("Package: a\n")
          && Files.readString(packages).equals("Package: a\n"), "inputs kept");
    }
  }

  @Test
  void listsThatGiveNoPackageWriteNoEmptyPinList() throws Exception {
    Path translations = Files.writeString(dir.resolve("Translation-en"), "Package: a\n");
    Path packages = Files.writeString(dir.resolve("Packages"), "Package: a\n");
    Path pins = dir.resolve("pins.txt");
    BenchRun run = BenchRun.of("retrieval", "--prepare", pins.toString(), "--translations", translations.toString(),
        "--packages", packages.toString());
    assertTrue(run.failedCleanly() && run.err().contains("no usable package"), run.err() + run.out());
    assertTrue(!Files.exists(pins), "no empty list written");
  }
}
