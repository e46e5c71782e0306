package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.cli.io.MiniJson;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.SafeTensors;
import dev.maxsim4j.cli.io.SafeTensorsFile;
import dev.maxsim4j.cli.text.SampleTexts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.nio.file.attribute.FileTime;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The real-text commands (encode, index, search, rerank, demo) on the bundled paragraphs. */
class TextCommandsTest {
  @TempDir Path dir;

  private static CliRun run(String... args) {
    return CliRun.of(args);
  }

  /** The bundled paragraphs as one file each, named after their title. */
  private Path corpus() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("corpus"));
    for (SampleTexts.Paragraph p : SampleTexts.paragraphs()) {
      Files.writeString(folder.resolve(p.title().toLowerCase(Locale.ROOT).replace(' ', '-') + ".txt"), p.text());
    }
    return folder;
  }

  @Test
  void indexIsReusedAndSearchFindsTheFile() throws IOException {
    Path folder = corpus();
    CliRun first = run("index", "--dir", folder.toString());
    assertEquals(0, first.status(), first.err());
    assertTrue(first.out().contains("10 files (10 encoded, 0 reused, 0 skipped)"), first.out());
    CliRun again = run("index", "--dir", folder.toString());
    assertTrue(again.out().contains("(0 encoded, 10 reused, 0 skipped)"), again.out());
    Path bees = folder.resolve("bees.txt");
    Files.writeString(bees, Files.readString(bees) + " Drones do not forage.");
    Files.setLastModifiedTime(bees, FileTime.fromMillis(Files.getLastModifiedTime(bees).toMillis() + 2000));
    Files.writeString(folder.resolve("new.md"), "Sea otters hold hands while they sleep.");
    CliRun changed = run("index", "--dir", folder.toString());
    assertTrue(changed.out().contains("11 files (2 encoded, 9 reused, 0 skipped)"), changed.out());

    CliRun search = run("search", "--dir", folder.toString(), "--query", "how do honey bees share where food is",
        "--k", "3");
    assertEquals(0, search.status(), search.err());
    String firstHit = search.out().lines().filter(l -> l.strip().startsWith("1 ")).findFirst().orElseThrow();
    assertTrue(firstHit.contains("bees.txt"), search.out());
    CliRun otters = run("search", "--dir", folder.toString(), "--query", "otters sleeping", "--k", "1");
    assertTrue(otters.out().contains("new.md"), otters.out());
  }

  @Test
  void indexEncodesOnTheBackendItIsGivenAndRefusesAnUnknownOne() throws IOException {
    Path folder = corpus();
    CliRun scalar = run("index", "--dir", folder.toString(), "--backend", "cpu", "--verbose");
    assertEquals(0, scalar.status(), scalar.err());
    assertTrue(scalar.out().contains("10 files (10 encoded, 0 reused, 0 skipped)"), scalar.out());
    CliRun search = run("search", "--dir", folder.toString(), "--query", "how do honey bees share where food is",
        "--k", "1");
    assertTrue(search.out().contains("bees.txt"), search.out());
    CliRun unknown = run("index", "--dir", folder.toString(), "--backend", "tpu");
    assertEquals(2, unknown.status(), "a mistake in the command line");
    assertEquals(1, unknown.err().strip().lines().count(), unknown.err());
    assertTrue(unknown.err().contains("tpu"), unknown.err());
  }

  @Test
  void rerankOrdersCandidates() throws IOException {
    Path candidates = dir.resolve("candidates.txt");
    Files.writeString(candidates, "the moon pulls on the oceans\n\nbread leavened with a sour starter\nchess openings\n");
    CliRun r = run("rerank", "--query", "what makes sourdough rise", "--candidates", candidates.toString());
    assertEquals(0, r.status(), r.err());
    String firstHit = r.out().lines().filter(l -> l.strip().startsWith("1 ")).findFirst().orElseThrow();
    assertTrue(firstHit.contains("sour starter") && firstHit.contains("  3  "), r.out());
  }

  @Test
  void encodeWritesWhatScoreReads() throws IOException {
    Path texts = dir.resolve("texts.txt");
    Files.writeString(texts, "a short text\nand a somewhat longer second text with more words\n");
    Path out = dir.resolve("e.safetensors");
    CliRun r = run("encode", "--in", texts.toString(), "--out", out.toString());
    assertEquals(0, r.status(), r.err());
    NdArray emb = SafeTensors.read(out, "embeddings");
    NdArray offsets = SafeTensors.read(out, "offsets");
    assertEquals(NdArray.ElementType.BF16, emb.type(), "bf16 by default");
    assertEquals(2, emb.rank(), "packed [T, d]: no padding");
    assertEquals(384, emb.dim(1));
    long[] o = offsets.integers();
    assertEquals(3, o.length);
    assertEquals(emb.shape()[0], o[2]);
    assertTrue(o[1] < o[2] - o[1], "the longer text has more tokens");
    CliRun score = run("score", "--queries", out.toString(), "--docs", out.toString(), "--top-k", "1",
        "--out-run", dir.resolve("run.tsv").toString());
    assertEquals(0, score.status(), score.err());
    assertEquals(List.of("0\t0\t1", "1\t1\t1"), Files.readAllLines(dir.resolve("run.tsv")).stream()
        .map(l -> l.substring(0, l.lastIndexOf('\t'))).toList(), "each text finds itself");
    // a text named like an output is still never written over
    Path named = Files.copy(texts, dir.resolve("texts.safetensors"));
    CliRun again = run("encode", "--in", named.toString(), "--out", named.toString());
    assertEquals(1, again.status());
    assertTrue(again.err().contains("is also the input"), again.err());
    assertEquals(Files.readString(texts), Files.readString(named));
  }

  /**
   * A folder's rows say which file each came from, in the header's metadata (a JSON array of paths under the
   * folder): a user read the rows' order off the docs, and a file name the walk orders otherwise than expected
   * would have matched the wrong text.
   */
  @Test
  void encodeOfAFolderNamesEachRowsFile() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("notes"));
    Files.createDirectories(folder.resolve("sub"));
    Files.writeString(folder.resolve("b.txt"), "bees dance to show where flowers are");
    Files.writeString(folder.resolve("sub").resolve("a.md"), "otters hold hands while they sleep");
    Files.writeString(folder.resolve("q\"uote\\.txt"), "a name a JSON string must escape");
    Files.write(folder.resolve("nul.txt"), new byte[] {'a', 0, 'b'}); // a row of no token, still named
    Path out = dir.resolve("notes.safetensors");
    CliRun r = run("encode", "--in", folder.toString(), "--out", out.toString());
    assertEquals(0, r.status(), r.err());
    assertTrue(r.out().contains("each row's file in __metadata__ maxsim4j.files"), r.out());
    Object files = MiniJson.parse(SafeTensorsFile.open(out).metadata().get("maxsim4j.files"));
    assertEquals(List.of("b.txt", "nul.txt", "q\"uote\\.txt", "sub/a.md"), files);
    assertEquals(5, SafeTensors.read(out, "offsets").integers().length);
    Path texts = Files.writeString(dir.resolve("lines.txt"), "one\ntwo\n");
    assertEquals(0, run("encode", "--in", texts.toString(), "--out", out.toString()).status());
    assertEquals(null, SafeTensorsFile.open(out).metadata().get("maxsim4j.files"),
        "a text file's rows are its lines");
  }

  @Test
  void encodeRefusesToOverwriteATextOfItsFolderOrToWriteANameScoreCannotRead() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("texts"));
    Path text = Files.writeString(folder.resolve("a.txt"), "a text to keep");
    Files.write(folder.resolve("binary.txt"), new byte[] {0, 1, 2});
    // a text of the folder as the output is refused by its name, a mistake in the command line, before any file is
    // read or warned about
    CliRun inside = run("encode", "--in", folder.toString(), "--out", text.toString());
    assertEquals(2, inside.status(), inside.err());
    assertEquals(1, inside.err().lines().count(), "refused before any file is read or warned about: " + inside.err());
    assertTrue(inside.err().contains("--out " + text + " does not end in .safetensors"), inside.err());
    assertEquals("a text to keep", Files.readString(text));
    CliRun npy = run("encode", "--in", text.toString(), "--out", dir.resolve("e.npy").toString());
    assertEquals(2, npy.status(), npy.err());
    assertTrue(npy.err().contains("does not end in .safetensors"), npy.err());
    assertFalse(Files.exists(dir.resolve("e.npy")));
  }

  @Test
  void demoSearchesTheBundledParagraphs() {
    CliRun demo = run("demo");
    assertEquals(0, demo.status(), demo.err());
    assertTrue(demo.err().contains("encoding 10 paragraphs ... 10/10"), demo.err());
    assertTrue(demo.out().contains("question: how do plants make sugar from light\n  1. Photosynthesis"), demo.out());
  }

  @Test
  void badTextInputIsOneLine() throws IOException {
    Path empty = Files.createDirectories(dir.resolve("empty"));
    CliRun search = run("search", "--dir", empty.toString(), "--query", "anything");
    assertEquals(1, search.status());
    assertTrue(search.err().contains("--dir " + empty + " holds no .txt or .md file"), search.err());
    CliRun missing = run("index", "--dir", dir.resolve("nope").toString());
    assertEquals(1, missing.status());
    assertTrue(missing.err().contains("--dir " + dir.resolve("nope") + ": no such folder"), missing.err());
    CliRun dtype = run("encode", "--in", empty.toString(), "--out", "x", "--dtype", "f64");
    assertEquals(2, dtype.status());
    assertTrue(dtype.err().contains("expected f32 or bf16"), dtype.err());
    Path blank = Files.writeString(dir.resolve("blank.txt"), "\n \n");
    CliRun rerank = run("rerank", "--query", "q", "--candidates", blank.toString());
    assertEquals(1, rerank.status());
    assertTrue(rerank.err().contains("holds no candidate"), rerank.err());
  }
}
