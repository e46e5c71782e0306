package dev.maxsim4j.cli;

import static dev.maxsim4j.cli.CliRun.assertOneLineError;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.Npy;
import dev.maxsim4j.cli.io.SafeTensors;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A user's finding: packed documents whose offsets have another name than "offsets" had no option to name them, and
 * were scored as one row of all their tokens without a word. --doc-offsets-tensor names them, and a tensor that
 * reads as offsets beside embeddings scored as one row gets a note.
 */
class NamedOffsetsTensorTest {
  @TempDir Path dir;

  private String p(String name) {
    return dir.resolve(name).toString();
  }

  /** Six 2-d tokens in rows of 1, 2 and 3; the tensors named as a user's own exporter might. */
  @BeforeEach
  void files() throws IOException {
    float[] tokens = {1, 0, 0, 1, 2, 0, -1, 0, 0, 3, 1, 1};
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("doc_emb", NdArray.ofFloats("doc_emb", new long[] {6, 2}, tokens));
    t.put("doc_lens", NdArray.ofSegment("doc_lens", NdArray.ElementType.I64, new long[] {4},
        MemorySegment.ofArray(new long[] {0, 1, 3, 6})));
    SafeTensors.write(dir.resolve("d.safetensors"), t);
    Npy.writeFloats(dir.resolve("q.npy"), new float[] {1, 0, 0, 1}, 1, 2, 2);
  }

  @Test
  void aNamedOffsetsTensorSplitsTheRows() throws IOException {
    CliRun r = CliRun.of("score", "--queries", p("q.npy"), "--docs", p("d.safetensors"), "--docs-tensor", "doc_emb",
        "--doc-offsets-tensor", "doc_lens", "--out", p("s.npy"));
    assertEquals(0, r.status(), r.err());
    assertFalse(r.err().contains("warning"), r.err());
    // row 0 [1,0]: 1 + 0; row 1 [0,1],[2,0]: 2 + 1; row 2 [-1,0],[0,3],[1,1]: 1 + 3
    assertArrayEquals(new float[] {1, 3, 4}, Npy.read(dir.resolve("s.npy")).floats());
  }

  @Test
  void embeddingsScoredAsOneRowBesideWhatReadsAsOffsetsGetANote() throws IOException {
    CliRun r = CliRun.of("score", "--queries", p("q.npy"), "--docs", p("d.safetensors"), "--docs-tensor", "doc_emb",
        "--out", p("s.npy"));
    assertEquals(0, r.status(), r.err());
    assertArrayEquals(new float[] {5}, Npy.read(dir.resolve("s.npy")).floats()); // 2 + 3 over all six tokens
    assertTrue(r.err().contains("the [6, d] tensor 'doc_emb' is scored as one row of 6 tokens; the tensor 'doc_lens'"
        + " beside it reads as offsets of 3 rows (give --doc-offsets-tensor doc_lens"), r.err());
    assertEquals(1, r.err().lines().count(), r.err());
  }

  @Test
  void theOffsetsOfOneRowOrOfOtherTokensGetNoNote() throws IOException {
    for (long[] other : new long[][] {{0, 6}, {0, 2, 5}, {0, 4, 2, 6}, {1, 3, 6}}) {
      Map<String, NdArray> t = new LinkedHashMap<>();
      t.put("doc_emb", NdArray.ofFloats("doc_emb", new long[] {6, 2}, new float[12]));
      t.put("ids", NdArray.ofSegment("ids", NdArray.ElementType.I64, new long[] {other.length},
          MemorySegment.ofArray(other)));
      SafeTensors.write(dir.resolve("o.safetensors"), t);
      CliRun r = CliRun.of("score", "--queries", p("q.npy"), "--docs", p("o.safetensors"), "--docs-tensor",
          "doc_emb", "--out", p("s.npy"));
      assertEquals(0, r.status(), r.err());
      assertTrue(r.err().isEmpty(), java.util.Arrays.toString(other) + ": " + r.err());
    }
  }

  @Test
  void theOptionIsCheckedLikeTheOtherTensorOptions() {
    assertOneLineError(CliRun.of("score", "--queries", p("q.npy"), "--docs", p("d.safetensors"), "--docs-tensor",
        "doc_emb", "--doc-offsets-tensor", "lens", "--out", p("s.npy")), 1, "--doc-offsets-tensor lens: ");
    assertOneLineError(CliRun.of("score", "--queries", p("q.npy"), "--docs", p("d.safetensors"), "--docs-tensor",
        "doc_emb", "--query-offsets-tensor", "doc_lens", "--out", p("s.npy")), 2,
        "--query-offsets-tensor needs --query-offsets FILE");
  }
}
