package dev.maxsim4j.cli;

import static dev.maxsim4j.cli.CliRun.assertOneLineError;
import static dev.maxsim4j.cli.QuantizedFiles.gaussians;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.Npy;
import dev.maxsim4j.cli.io.SafeTensors;
import dev.maxsim4j.cli.io.SafeTensorsFile;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Packed bits hold d only rounded up to whole bytes, so a --docs-bits of 99 read tokens of 100 bits as 99 of them
 * and scored the rest as padding, silently. quantize records d in the file's __metadata__; score takes it where the
 * flag is left out and refuses a flag that contradicts it, naming both.
 */
class RecordedBitsTest {
  @TempDir Path dir;
  private final SplittableRandom rnd = new SplittableRandom(3);

  private String p(String name) {
    return dir.resolve(name).toString();
  }

  private void quantize(int n, int l, int d) throws IOException {
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", NdArray.ofFloats("e", new long[] {n, l, d}, gaussians(rnd, n * l * d)));
    SafeTensors.write(dir.resolve("e.safetensors"), t);
    CliRun r = CliRun.of("quantize", "--in", p("e.safetensors"), "--to", "binary", "--out", p("c.safetensors"));
    assertEquals(0, r.status(), r.err());
    Npy.writeFloats(dir.resolve("q.npy"), gaussians(rnd, 2 * 3 * d), 2, 3, d);
  }

  @Test
  void theRecordedDimensionStandsInForTheFlagAndAgreesWithIt() throws IOException {
    quantize(4, 5, 100);
    assertEquals(Map.of("maxsim4j.dim.embeddings", "100"),
        SafeTensorsFile.open(dir.resolve("c.safetensors")).metadata());
    CliRun given = CliRun.of("score", "--queries", p("q.npy"), "--docs", p("c.safetensors"), "--docs-bits", "100",
        "--out", p("given.npy"));
    assertEquals(0, given.status(), given.err());
    CliRun recorded = CliRun.of("score", "--queries", p("q.npy"), "--docs", p("c.safetensors"), "--out",
        p("recorded.npy"));
    assertEquals(0, recorded.status(), recorded.err());
    assertArrayEquals(Npy.read(dir.resolve("given.npy")).floats(), Npy.read(dir.resolve("recorded.npy")).floats());
    // 99 bits pack into the same 13 bytes: only the record tells them apart
    assertOneLineError(CliRun.of("score", "--queries", p("q.npy"), "--docs", p("c.safetensors"), "--docs-bits", "99",
        "--out", p("wrong.npy")), 2, "--docs-bits 99, but " + p("c.safetensors"));
    assertOneLineError(CliRun.of("score", "--queries", p("q.npy"), "--docs", p("c.safetensors"), "--docs-bits", "99",
        "--out", p("wrong.npy")), 2, "records its tokens as 100 bits (maxsim4j.dim.embeddings in its __metadata__");
  }

  @Test
  void aRecordTheShapeContradictsIsRefusedByName() throws IOException {
    for (String forged : new String[] {"abc", "0", "200", "-5", "99999999999", "012", "+100", " 100", "1e2"}) {
      Map<String, NdArray> t = new LinkedHashMap<>();
      t.put("embeddings", NdArray.ofSegment("e", NdArray.ElementType.U8, new long[] {2, 3, 13},
          MemorySegment.ofArray(new byte[2 * 3 * 13])));
      SafeTensors.write(dir.resolve("f.safetensors"), t, Map.of("maxsim4j.dim.embeddings", forged));
      Npy.writeFloats(dir.resolve("q.npy"), gaussians(rnd, 3 * 100), 1, 3, 100);
      CliRun r = CliRun.of("score", "--queries", p("q.npy"), "--docs", p("f.safetensors"), "--out", p("s.npy"));
      assertOneLineError(r, 1, "records its token dimension as '" + forged + "'");
      // a number the shape cannot hold is told so; a text that is no number is told how to write one
      assertOneLineError(r, 1, forged.matches("0|[1-9][0-9]*") ? "which its shape [2, 3, 13] does not hold; expected"
          + " a d of 97 to 104 bits" : "expected a whole number in decimal digits (no sign, space or leading zero)");
    }
  }

  @Test
  void aRecordOverTokensOfNoBytesAsksForABytePerToken() throws IOException {
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", NdArray.ofSegment("e", NdArray.ElementType.U8, new long[] {2, 3, 0},
        MemorySegment.ofArray(new byte[0])));
    SafeTensors.write(dir.resolve("f.safetensors"), t, Map.of("maxsim4j.dim.embeddings", "9"));
    Npy.writeFloats(dir.resolve("q.npy"), gaussians(rnd, 3 * 9), 1, 3, 9);
    assertOneLineError(CliRun.of("score", "--queries", p("q.npy"), "--docs", p("f.safetensors"), "--out",
        p("s.npy")), 1, "which its shape [2, 3, 0] does not hold; expected a last axis of at least 1 byte");
  }
}
