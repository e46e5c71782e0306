package dev.maxsim4j.bench.quality;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.bench.BenchRun;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The quality command: its metrics, its reading of apt's lists, and a small run end to end. */
class QualityCommandTest {
  @TempDir Path dir;

  @Test
  void agreementCountsErrorsOverlapAndRecall() {
    float[][] reference = {{10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0.5f, 0.25f}};
    float[][] scores = {{10, 9, 8, 7, 6, 5, 4, 3, 2, 0.1f, 0.5f, 0.5f}}; // document 9 falls out of the top 10
    Agreement a = Agreement.of(reference, scores, new int[] {9});
    assertEquals(0.9, a.top10Overlap(), 1e-12);
    assertEquals(1.0, a.maxRelativeError(), 1e-6); // document 11: 0.5 for 0.25
    assertEquals((0.9 + 1.0) / 12, a.meanRelativeError(), 1e-6);
    assertEquals(0.0, a.recallAt10());
    assertTrue(Double.isNaN(Agreement.of(reference, reference, null).recallAt10()));
    assertArrayEquals(new int[] {0, 1, 2}, Agreement.top(new float[] {3, 2, 1}));
  }

  @Test
  void readsPackagesSummariesAndLongDescriptions() throws IOException {
    String list = """
        Package: one
        Description-md5: 0
        Description-en: The first package
         Its long description
         runs over lines.
         .
         A second paragraph.

        Package: two
        Description-en: The second
         Text.
        """;
    Map<String, DebianDescriptions.Description> all =
        DebianDescriptions.parse(new ByteArrayInputStream(list.getBytes(StandardCharsets.UTF_8)));
    assertEquals(2, all.size());
    assertEquals("The first package", all.get("one").summary());
    assertEquals("Its long description runs over lines. A second paragraph.", all.get("one").text());
    assertEquals("Text.", all.get("two").text());
  }

  @Test
  void aSmallRunReportsEveryTypeOnBothDataSets() throws IOException {
    List<String> names = QualityCommand.packageList();
    assertEquals(3000, names.size());
    StringBuilder list = new StringBuilder();
    for (int i = 0; i < 12; i++) {
      list.append("Package: ").append(names.get(i)).append("\nDescription-en: tool number ").append(i)
          .append(" for files\n A program that converts files of kind ").append(i).append(" into other kinds.\n\n");
    }
    Path translations = dir.resolve("Translation-en");
    Files.writeString(translations, list);
    Path json = dir.resolve("q.json");
    BenchRun r = BenchRun.of("quality", "--translations", translations.toString(), "--docs", "12", "--queries", "3",
        "--random-docs", "30", "--threads", "1", "--json", json.toString());
    assertEquals(0, r.status(), r.err());
    for (String type : new String[] {"int8", "fp8", "binary", "binary-sym"}) {
      assertTrue(r.out().contains("  " + type + " "), type + " in " + r.out());
    }
    String written = Files.readString(json);
    assertEquals(8, written.lines().filter(l -> l.contains("\"type\"")).count(), written);
    assertTrue(written.contains("\"type\": \"int8\", \"mean_relative_error\": 0.00"), written);
  }

  @Test
  void badArgumentsAreOneLine() throws IOException {
    assertTrue(BenchRun.of("quality", "--docs", "10", "--queries", "11").refusedWith("--queries 11 is more than --docs 10"));
    assertTrue(BenchRun.of("quality", "--docs", "3001").refusedWith("--docs = 3001; expected 1 <= --docs <= 3000"));
    Path other = dir.resolve("other");
    Files.writeString(other, "Package: x\nDescription-en: y\n z\n");
    BenchRun missing = BenchRun.of("quality", "--translations", other.toString(), "--docs", "5", "--queries", "1",
        "--random-docs", "5");
    assertTrue(missing.failedCleanly() && missing.err().contains("lacks 5 of the 5 listed packages"), missing.err());
  }

  /**
   * A hostile tester's finding: a missing --translations was "is not a file", exit 2; it is named as the user
   * commands name a missing input ("no such file"), as bad input (exit 1), and so is a folder or a device.
   */
  @Test
  void aTranslationsListThatIsNoFileIsNamedForWhatItIs() throws IOException {
    String expected = "; expected an apt Translation-en list";
    Path none = dir.resolve("none");
    Path longName = dir.resolve("t".repeat(300));
    Path dangling = Files.createSymbolicLink(dir.resolve("link"), dir.resolve("gone"));
    String[][] cases = {{none.toString(), "--translations " + none + ": no such file" + expected},
        {longName.toString(), "--translations " + longName + ": file name too long" + expected},
        {dir.toString(), "--translations " + dir + " is a folder" + expected},
        {dangling.toString(), "--translations " + dangling + " is a link to no readable file" + expected},
        {"/dev/null", "--translations /dev/null is not a regular file (a pipe, device or socket)" + expected}};
    for (String[] c : cases) {
      BenchRun run = BenchRun.of("quality", "--translations", c[0], "--docs", "5", "--queries", "1");
      assertTrue(run.failedCleanly() && run.err().equals("maxsim4j bench: error: quality: " + c[1] + "\n"), run.err());
      assertTrue(run.out().isEmpty(), run.out());
    }
  }

  /** A list that is no lz4 stream is bad input (exit 1), as a list lacking packages is, not a bad command line. */
  @Test
  void aCorruptLz4ListIsBadInput() throws IOException {
    Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/lz4")), "no lz4 program");
    Path bad = Files.writeString(dir.resolve("bad_Translation-en.lz4"), "not lz4 at all\n");
    BenchRun run = BenchRun.of("quality", "--translations", bad.toString(), "--docs", "3", "--queries", "1");
    assertTrue(run.failedCleanly() && run.err().contains("lz4 -dc failed"), run.status() + " " + run.err());
  }

  /** A hostile tester's finding: a list whose relative name starts with "-" reached lz4 as options, "corrupt". */
  @Test
  void anLz4ListWhoseNameStartsWithADashIsRead() throws Exception {
    Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/lz4")), "no lz4 program");
    Path plain = Files.writeString(dir.resolve("Translation-en"), "Package: tool\nDescription-en: a tool\n more\n");
    // relative, so that the name as given starts with "-": made in the working folder and removed after
    Path dashed = Path.of("-quality-test-" + ProcessHandle.current().pid() + "_Translation-en.lz4");
    try {
      Process lz4 = new ProcessBuilder("lz4", "-q", "-f", plain.toString(), dir.resolve("t.lz4").toString()).start();
      assertEquals(0, lz4.waitFor());
      Files.move(dir.resolve("t.lz4"), dashed);
      assertEquals("a tool", DebianDescriptions.read(dashed).get("tool").summary());
    } finally {
      Files.deleteIfExists(dashed);
    }
  }

  /** A hostile tester's finding: --random-docs past the heap ran out of memory, naming neither it nor the command. */
  @Test
  void randomDocumentsTheHeapCannotHoldAreRefusedBeforeAnyWork() {
    long heap = Runtime.getRuntime().maxMemory();
    Assumptions.assumeTrue(heap < 65535L * 3 * 144 * 128 * 4, "a heap that holds the most random documents");
    BenchRun run = BenchRun.of("quality", "--random-docs", "65535", "--docs", "3", "--queries", "1");
    assertTrue(run.refusedWith("quality: --random-docs 65535 documents take about 13.5 GiB of heap while they are"
        + " made, more than this JVM's "), run.err());
    assertTrue(run.out().isEmpty(), run.out());
  }
}
