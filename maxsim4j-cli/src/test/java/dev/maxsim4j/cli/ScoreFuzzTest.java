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

  /**
   * Damaged int8, fp8 and packed-bit files with scales, offsets and masks: a result, or one line (exit 1 for
   * bad data, exit 2 where the damage makes a flag not fit, e.g. a dtype turned into U8 without --docs-bits).
   */
  @Test
  void damagedQuantizedInputsEndAsOneLineErrors() throws IOException {
    Npy.writeFloats(dir.resolve("q.npy"), new float[2 * 3 * 12], 2, 3, 12);
    SplittableRandom rnd = new SplittableRandom(12);
    String[] dtypes = {"I8", "F8_E4M3", "U8"};
    byte[][] files = new byte[dtypes.length][];
    for (int x = 0; x < dtypes.length; x++) {
      int width = x == 2 ? 2 : 12;
      Map<String, NdArray> t = new LinkedHashMap<>();
      NdArray.ElementType type = x == 0 ? NdArray.ElementType.I8 : x == 1 ? NdArray.ElementType.F8_E4M3
          : NdArray.ElementType.U8;
      t.put("embeddings", NdArray.ofSegment("e", type, new long[] {9, width},
          MemorySegment.ofArray(new byte[9 * width])));
      t.put("scales", NdArray.ofFloats("s", new long[] {9}, new float[] {1, 2, 0, -1, 3, 1, 1, 0.5f, 2}));
      t.put("offsets", NdArray.ofSegment("o", NdArray.ElementType.I64, new long[] {4},
          MemorySegment.ofArray(new long[] {0, 2, 2, 9})));
      t.put("mask", new NdArray("m", NdArray.ElementType.BOOL, new long[] {9}, null, null, new boolean[9]));
      SafeTensors.write(dir.resolve("v.safetensors"), t);
      files[x] = Files.readAllBytes(dir.resolve("v.safetensors"));
    }
    int ok = 0;
    for (int i = 0; i < CASES; i++) {
      int x = rnd.nextInt(dtypes.length);
      byte[] b = files[x].clone();
      for (int f = rnd.nextInt(1, 3); f > 0; f--) {
        b[rnd.nextInt(Math.min(b.length, 400))] ^= (byte) (1 << rnd.nextInt(8));
      }
      Path docs = Files.write(dir.resolve("d.safetensors"), b);
      String[] args = x == 2
          ? new String[] {"score", "--queries", dir.resolve("q.npy").toString(), "--docs", docs.toString(),
              "--docs-bits", "12", "--top-k", "2", "--out-run", dir.resolve("run.tsv").toString()}
          : new String[] {"score", "--queries", dir.resolve("q.npy").toString(), "--docs", docs.toString(),
              "--top-k", "2", "--out-run", dir.resolve("run.tsv").toString()};
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      int status;
      try {
        status = Main.run(args, new PrintStream(new ByteArrayOutputStream()), new PrintStream(err, true,
            StandardCharsets.UTF_8));
      } catch (RuntimeException | Error e) {
        throw new AssertionError("case " + i + " (" + dtypes[x] + "): " + e, e);
      }
      String line = err.toString(StandardCharsets.UTF_8);
      boolean oneLine = line.lines().count() == 1 && !line.startsWith("maxsim4j: error: unexpected ");
      if (status == 0) {
        ok++;
      } else if (!oneLine || !(status == 1 && line.startsWith("maxsim4j: error: ")
          || status == 2 && line.startsWith("maxsim4j: score: "))) {
        fail("case " + i + " (" + dtypes[x] + "): status " + status + ", stderr " + line);
      }
    }
    assertTrue(ok > 0, "some damaged files stay readable");
  }
}
