package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.Npy;
import dev.maxsim4j.cli.io.SafeTensors;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Damaged packed and padded inputs through the whole score command: a result or one line, never a crash. */
class ScoreFuzzTest {
  private static final int CASES = 3_000;
  @TempDir Path dir;

  @Test
  void damagedInputsEndAsOneLineErrors() throws IOException {
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", new NdArray("e", NdArray.ElementType.BF16, new long[] {9, 4}, null, new short[36], null));
    t.put("offsets", NdArray.ofSegment("o", NdArray.ElementType.I64, new long[] {4},
        MemorySegment.ofArray(new long[] {0, 2, 2, 9})));
    t.put("mask", new NdArray("m", NdArray.ElementType.BOOL, new long[] {9}, null, null, new boolean[9]));
    SafeTensors.write(dir.resolve("packed.safetensors"), t);
    Npy.writeFloats(dir.resolve("q.npy"), new float[2 * 3 * 4], 2, 3, 4);
    byte[] packed = Files.readAllBytes(dir.resolve("packed.safetensors"));
    byte[] padded = Files.readAllBytes(dir.resolve("q.npy"));
    SplittableRandom rnd = new SplittableRandom(11);
    int ok = 0;
    for (int i = 0; i < CASES; i++) {
      boolean npy = rnd.nextBoolean();
      byte[] b = (npy ? padded : packed).clone();
      // flip bits in the header and the first data bytes, where offsets and shapes live
      for (int f = rnd.nextInt(1, 3); f > 0; f--) {
        b[rnd.nextInt(Math.min(b.length, 260))] ^= (byte) (1 << rnd.nextInt(8));
      }
      Path docs = Files.write(dir.resolve(npy ? "d.npy" : "d.safetensors"), b);
      String[] args = {"score", "--queries", dir.resolve("q.npy").toString(), "--docs", docs.toString(),
          "--top-k", "2", "--out-run", dir.resolve("run.tsv").toString()};
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      int status;
      try {
        status = Main.run(args, new PrintStream(new ByteArrayOutputStream()), new PrintStream(err, true,
            StandardCharsets.UTF_8));
      } catch (RuntimeException | Error e) {
        throw new AssertionError("case " + i + ": " + e, e);
      }
      String line = err.toString(StandardCharsets.UTF_8);
      if (status == 0) {
        ok++;
      } else if (status != 1 || line.lines().count() != 1 || !line.startsWith("maxsim4j: error: ")) {
        fail("case " + i + ": status " + status + ", stderr " + line);
      }
    }
    assertTrue(ok > 0, "some damaged files stay readable");
  }
}
