package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.SafeTensors;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A scales tensor found beside the embeddings, in an unreadable dtype, is refused under the option that named the
 * file (--docs), not --doc-scales, which the command line never gave.
 */
class HostileCompanionOptionTest {
  @TempDir Path dir;

  @Test
  void scalesBesideTheEmbeddingsAreNamedByTheDocsOption() throws IOException {
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", NdArray.ofSegment("e", NdArray.ElementType.I8, new long[] {1, 2, 4},
        MemorySegment.ofArray(new byte[8])));
    // F64 is written by hand below: SafeTensors.write has no such type, so an I64 of the same width stands in
    t.put("scales", NdArray.ofSegment("s", NdArray.ElementType.I64, new long[] {1, 2},
        MemorySegment.ofArray(new long[2])));
    Path docs = dir.resolve("d.safetensors");
    SafeTensors.write(docs, t);
    byte[] b = java.nio.file.Files.readAllBytes(docs);
    String s = new String(b, java.nio.charset.StandardCharsets.ISO_8859_1).replace("\"I64\"", "\"F64\"");
    java.nio.file.Files.write(docs, s.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
    Path q = dir.resolve("q.npy");
    dev.maxsim4j.cli.io.Npy.writeFloats(q, new float[4], 1, 1, 4);
    CliRun r = CliRun.of("score", "--queries", q.toString(), "--docs", docs.toString(), "--out",
        dir.resolve("s.npy").toString());
    CliRun.assertOneLineError(r, 1, "--docs " + docs + ":scales has dtype \"F64\"; expected F32 scales");
    assertFalse(r.err().contains("--doc-scales"), r.err());
  }
}
