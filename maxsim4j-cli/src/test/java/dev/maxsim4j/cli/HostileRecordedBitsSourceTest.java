package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.Npy;
import dev.maxsim4j.cli.io.SafeTensors;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A d mismatch names where the packed bits' d came from: the file's record, not a --docs-bits never given. */
class HostileRecordedBitsSourceTest {
  @TempDir Path dir;

  @Test
  void aRecordedDimensionIsNamedAsTheRecord() throws IOException {
    Path docs = dir.resolve("d.safetensors");
    SafeTensors.write(docs, Map.of("embeddings", NdArray.ofSegment("e", NdArray.ElementType.U8, new long[] {1, 1, 1},
        MemorySegment.ofArray(new byte[] {-1}))), Map.of("maxsim4j.dim.embeddings", "7"));
    Path q = dir.resolve("q.npy");
    Npy.writeFloats(q, new float[5], 1, 1, 5);
    CliRun r = CliRun.of("score", "--queries", q.toString(), "--docs", docs.toString(), "--out",
        dir.resolve("s.npy").toString());
    CliRun.assertOneLineError(r, 1, "d = 7 (maxsim4j.dim.embeddings in its __metadata__)");
    assertFalse(r.err().contains("--docs-bits"), r.err());
  }
}
