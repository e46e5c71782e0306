package dev.maxsim4j.cli.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Truncated and bit-flipped copies of valid files: every read returns an array or throws an
 * IllegalArgumentException with a one-line message, never any other exception.
 */
class ReaderFuzzTest {
  private static final int CASES = 15_000;
  @TempDir Path dir;

  interface Reader {
    void read(Path file) throws IOException;
  }

  @Test
  void npyReaderSurvivesDamage() throws IOException {
    Path f = dir.resolve("valid.npy");
    Npy.writeFloats(f, new float[24], 2, 3, 4);
    fuzz(Files.readAllBytes(f), "x.npy", p -> {
      NdArray a = Npy.read(p);
      a.floats();
      a.halfs();
      a.flags();
      a.integers();
    }, 1);
  }

  @Test
  void safetensorsReaderSurvivesDamage() throws IOException {
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", new NdArray("e", NdArray.ElementType.BF16, new long[] {6, 4}, null, new short[24], null));
    t.put("offsets", NdArray.ofSegment("o", NdArray.ElementType.I64, new long[] {3},
        java.lang.foreign.MemorySegment.ofArray(new long[] {0, 2, 6})));
    t.put("mask", new NdArray("m", NdArray.ElementType.BOOL, new long[] {6}, null, null, new boolean[6]));
    t.put("codes", NdArray.ofSegment("c", NdArray.ElementType.I8, new long[] {2, 3},
        java.lang.foreign.MemorySegment.ofArray(new byte[] {1, -2, 3, -4, 5, -6})));
    t.put("fp8", NdArray.ofSegment("f", NdArray.ElementType.F8_E4M3, new long[] {3},
        java.lang.foreign.MemorySegment.ofArray(new byte[] {0x38, 0x40, (byte) 0xb8})));
    Path f = dir.resolve("valid.safetensors");
    SafeTensors.write(f, t);
    fuzz(Files.readAllBytes(f), "x.safetensors", p -> {
      for (String name : List.of("embeddings", "offsets", "mask", "codes", "fp8")) {
        try {
          NdArray a = SafeTensors.read(p, name);
          a.halfs();
          a.integers();
          a.flags();
          a.bytes();
        } catch (IllegalArgumentException e) {
          assertOneLine(e);
        }
      }
      SafeTensors.names(p);
    }, 2);
  }

  private void fuzz(byte[] valid, String name, Reader reader, long seed) throws IOException {
    SplittableRandom rnd = new SplittableRandom(seed);
    Path p = dir.resolve(name);
    int results = 0;
    for (int i = 0; i < CASES; i++) {
      byte[] bytes = damage(valid, rnd);
      Files.write(p, bytes);
      try {
        reader.read(p);
        results++;
      } catch (IllegalArgumentException e) {
        assertOneLine(e);
      } catch (RuntimeException | StackOverflowError e) {
        fail("case " + i + " (seed " + seed + "): " + e + " on " + java.util.HexFormat.of().formatHex(bytes), e);
      }
    }
    assertEquals(true, results > 0, "some damaged files stay readable");
  }

  private static void assertOneLine(IllegalArgumentException e) {
    if (e.getMessage() == null || e.getMessage().isBlank() || e.getMessage().lines().count() != 1) {
      fail("not a one-line message: " + e, e);
    }
  }

  private static byte[] damage(byte[] valid, SplittableRandom rnd) {
    byte[] b = valid.clone();
    switch (rnd.nextInt(4)) {
      case 0 -> b = java.util.Arrays.copyOf(b, rnd.nextInt(b.length + 1));
      case 1 -> {
        for (int f = rnd.nextInt(1, 4); f > 0; f--) {
          int at = rnd.nextInt(b.length);
          b[at] ^= (byte) (1 << rnd.nextInt(8));
        }
      }
      case 2 -> {
        // a byte of the header replaced by a JSON or dict metacharacter, which moves the parser the most
        byte[] meta = "{}[](),:'\"0123456789-.eE \\u".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        b[rnd.nextInt(Math.min(b.length, 200))] = meta[rnd.nextInt(meta.length)];
      }
      default -> {
        b[rnd.nextInt(b.length)] = (byte) rnd.nextInt(256);
        b = java.util.Arrays.copyOf(b, Math.max(0, b.length - rnd.nextInt(8)));
      }
    }
    return b;
  }
}
