package dev.maxsim4j.cli;

import static dev.maxsim4j.cli.CliRun.assertOneLineError;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.Npy;
import dev.maxsim4j.cli.io.SafeTensors;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Queries and documents that do not fit together (another token dimension, another row count for --pairwise or
 * candidates): the error names both files and what each holds, in the command line's words, not the Java API's.
 */
class MismatchedInputsTest {
  @TempDir Path dir;

  private String p(String name) {
    return dir.resolve(name).toString();
  }

  private static void assertNames(CliRun r, String... fragments) {
    assertOneLineError(r, 1, "expected");
    for (String f : fragments) {
      assertTrue(r.err().contains(f), f + " in " + r.err());
    }
    assertFalse(r.err().contains("TokenBatch"), "the CLI's words, not the Java API's: " + r.err());
  }

  @Test
  void anotherTokenDimensionNamesBothFiles() throws IOException {
    Npy.writeFloats(dir.resolve("q.npy"), new float[24], 2, 3, 4);
    Npy.writeFloats(dir.resolve("d16.npy"), new float[5 * 16], 5, 1, 16);
    Npy.writeFloats(dir.resolve("none16.npy"), new float[0], 0, 3, 16);
    assertNames(CliRun.of("score", "--queries", p("q.npy"), "--docs", p("d16.npy"), "--out", p("s.npy")),
        "d mismatch", "--queries " + p("q.npy"), "d = 4", "--docs " + p("d16.npy"), "d = 16");
    assertNames(CliRun.of("score", "--queries", p("q.npy"), "--docs", p("none16.npy"), "--out", p("s.npy")),
        "--docs " + p("none16.npy"), "d = 16");
    assertNames(CliRun.of("score", "--queries", p("none16.npy"), "--docs", p("q.npy"), "--top-k", "1", "--out-run",
        p("r.tsv")), "--queries " + p("none16.npy"), "d = 16", "d = 4");
    // packed bits: the dimension is the one --docs-bits gives
    SafeTensors.write(dir.resolve("bits.safetensors"), Map.of("embeddings", NdArray.ofSegment("b",
        NdArray.ElementType.U8, new long[] {5, 3, 1}, MemorySegment.ofArray(new byte[15]))));
    assertNames(CliRun.of("score", "--queries", p("q.npy"), "--docs", p("bits.safetensors"), "--docs-bits", "6",
        "--out", p("s.npy")), "d = 6 (--docs-bits)", "d = 4");
    Files.createDirectories(dir.resolve("shards"));
    SafeTensors.write(dir.resolve("shards/a.safetensors"), Map.of("embeddings",
        NdArray.ofFloats("a", new long[] {5, 1, 16}, new float[80])));
    assertNames(CliRun.of("score", "--queries", p("q.npy"), "--docs", p("shards"), "--top-k", "2", "--out-run",
        p("r.tsv")), "--queries " + p("q.npy"), "d = 4", p("shards/a.safetensors"), "d = 16");
  }

  @Test
  void anotherRowCountForPairwiseOrCandidatesNamesBothFiles() throws IOException {
    Npy.writeFloats(dir.resolve("q.npy"), new float[24], 2, 3, 4);
    Npy.writeFloats(dir.resolve("d.npy"), new float[60], 5, 3, 4);
    Npy.writeFloats(dir.resolve("cand.npy"), new float[3 * 2 * 3 * 4], 3, 2, 3, 4);
    assertNames(CliRun.of("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--pairwise", "--out",
        p("s.npy")), "--queries " + p("q.npy"), "2 ", "--docs " + p("d.npy"), "5 ");
    assertNames(CliRun.of("score", "--queries", p("q.npy"), "--docs", p("cand.npy"), "--out", p("s.npy")),
        "--queries " + p("q.npy"), "2 ", "--docs " + p("cand.npy"), "3 ");
  }
}
