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
}
