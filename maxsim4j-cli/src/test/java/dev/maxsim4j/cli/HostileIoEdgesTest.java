package dev.maxsim4j.cli;

import static dev.maxsim4j.cli.CliRun.assertOneLineError;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.Npy;
import dev.maxsim4j.cli.io.SafeTensors;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Edges of score's inputs found by a hostile test: each refusal names the file or tensor it is about. */
class HostileIoEdgesTest {
  @TempDir Path dir;

  private String p(String name) {
    return dir.resolve(name).toString();
  }

  /**
   * Candidates of K = 0 from a .safetensors file with a mask were refused as "--docs [F, F] has shape": the list of
   * files read (the file twice, for its embeddings and its mask), not the tensor whose shape it is.
   */
  @Test
  void emptyCandidatesNameTheTensorNotTheListOfFilesRead() throws Exception {
    Npy.writeFloats(dir.resolve("q.npy"), new float[2 * 3 * 4], 2, 3, 4);
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", NdArray.ofFloats("e", new long[] {2, 0, 5, 4}, new float[0]));
    t.put("mask", new NdArray("m", NdArray.ElementType.BOOL, new long[] {2, 0, 5}, null, null, new boolean[0]));
    SafeTensors.write(dir.resolve("d.safetensors"), t);
    CliRun r = CliRun.of("score", "--queries", p("q.npy"), "--docs", p("d.safetensors"), "--out", p("s.npy"));
    assertOneLineError(r, 1, "--docs " + p("d.safetensors") + ":embeddings has shape [2, 0, 5, 4]: K = 0 candidates");
    assertFalse(r.err().contains("["  + p("d.safetensors")), r.err());
  }

  /** A long recorded d is quoted cut between whole characters: the half of an emoji printed as '?'. */
  @Test
  void aLongRecordedDimensionIsQuotedBetweenWholeCharacters() throws Exception {
    Npy.writeFloats(dir.resolve("q.npy"), new float[2 * 3 * 8], 2, 3, 8);
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", NdArray.ofSegment("e", NdArray.ElementType.U8, new long[] {2, 3, 1},
        java.lang.foreign.MemorySegment.ofArray(new byte[6])));
    String recorded = "x".repeat(39) + "\uD83D\uDE00".repeat(10);
    SafeTensors.write(dir.resolve("d.safetensors"), t, Map.of("maxsim4j.dim.embeddings", recorded));
    CliRun r = CliRun.of("score", "--queries", p("q.npy"), "--docs", p("d.safetensors"), "--out", p("s.npy"));
    assertOneLineError(r, 1, "records its token dimension as '" + "x".repeat(39) + "...'");
  }
}
