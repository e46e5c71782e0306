package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.Npy;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Inputs too large for one Java array are scored from the mapped file; the real limits are named. */
class LargeInputTest {
  @TempDir Path dir;

  private static Args args(String... argv) {
    String[] all = new String[argv.length + 1];
    System.arraycopy(argv, 0, all, 1, argv.length);
    all[0] = "score";
    return new Args("score", all, 1, java.util.Set.of("--queries", "--docs", "--doc-mask", "--doc-offsets"),
        java.util.Set.of());
  }

  /** A .npy file of {@code shape} float16 whose data is a hole: gigabytes that take no disk space. */
  private Path sparseNpy(String name, long... shape) throws IOException {
    Path f = dir.resolve(name);
    Npy.writeHalfs(f, new short[0], 0);
    String header = Files.readString(f, StandardCharsets.ISO_8859_1).substring(10);
    StringBuilder dims = new StringBuilder();
    for (long s : shape) {
      dims.append(s).append(", ");
    }
    String dict = header.substring(0, header.indexOf("'shape'")) + "'shape': (" + dims.toString().trim() + "), }";
    String padded = dict + " ".repeat(64 - (10 + dict.length() + 1) % 64) + "\n";
    byte[] head = new byte[10 + padded.length()];
    System.arraycopy(Files.readAllBytes(f), 0, head, 0, 8);
    head[8] = (byte) padded.length();
    System.arraycopy(padded.getBytes(StandardCharsets.ISO_8859_1), 0, head, 10, padded.length());
    Files.write(f, head);
    long elements = 1;
    for (long s : shape) {
      elements *= s;
    }
    try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
      raf.setLength(head.length + 2 * elements);
    }
    return f;
  }

  @Test
  void paddedInputsPastTwoToThe31ElementsAreMappedNotCopied() throws IOException {
    Path big = sparseNpy("big.npy", 20_000, 1_000, 128);
    NdArray a = Npy.read(big);
    assertTrue(a.elements() > Integer.MAX_VALUE);
    Inputs.Loaded docs = Inputs.load(args("--docs", big.toString()), Inputs.DOCS);
    assertEquals(20_000, docs.batch().size());
    assertEquals(0f, docs.batch().get(19_999, 999, 127));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, a::halfs);
    assertTrue(e.getMessage().contains("a Java array holds at most"), e.getMessage());
  }

  @Test
  void tokenCountsPastTheLimitNameIt() throws IOException {
    Path big = sparseNpy("slots.npy", 3_000_000, 1_000, 1);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Inputs.load(args("--docs", big.toString()), Inputs.DOCS));
    assertTrue(e.getMessage().contains("at most 2^31-1"), e.getMessage());
  }

  @Test
  void misalignedSafetensorsDataIsReadInPlace() throws IOException {
    // a header of odd length puts the float32 data at an odd address: the mapped view must read it anyway
    String json = "{\"embeddings\":{\"dtype\":\"F32\",\"shape\":[2,3,4],\"data_offsets\":[0,96]}} ";
    java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(8 + json.length() + 96)
        .order(java.nio.ByteOrder.LITTLE_ENDIAN);
    b.putLong(json.length()).put(json.getBytes(StandardCharsets.US_ASCII));
    for (int i = 0; i < 24; i++) {
      b.putFloat(i * 0.25f);
    }
    assertTrue((8 + json.length()) % 4 != 0);
    Path f = Files.write(dir.resolve("odd.safetensors"), b.array());
    TokenBatch mapped = Inputs.load(args("--docs", f.toString()), Inputs.DOCS).batch();
    for (int i = 0; i < 2; i++) {
      for (int t = 0; t < 3; t++) {
        for (int k = 0; k < 4; k++) {
          assertEquals((i * 12 + t * 4 + k) * 0.25f, mapped.get(i, t, k));
        }
      }
    }
  }

  @Test
  void mappedInputsScoreLikeHeapInputs() throws IOException {
    SplittableRandom rnd = new SplittableRandom(3);
    float[] d = new float[40 * 60 * 128];
    for (int i = 0; i < d.length; i++) {
      d[i] = (float) rnd.nextGaussian();
    }
    Npy.writeFloats(dir.resolve("d.npy"), d, 40, 60, 128);
    Npy.writeFloats(dir.resolve("p.npy"), d, 40 * 60, 128);
    long[] offsets = new long[41];
    for (int i = 1; i <= 40; i++) {
      offsets[i] = offsets[i - 1] + 1 + rnd.nextInt(119) % 60;
    }
    offsets[40] = 2400;
    Npy.write(dir.resolve("o.npy"), NdArray.ofSegment("o", NdArray.ElementType.I64, new long[] {41},
        MemorySegment.ofArray(offsets)));
    TokenBatch q = TokenBatch.ofFloats(java.util.Arrays.copyOf(d, 3 * 7 * 128), 3, 7, 128);
    int[] starts = java.util.Arrays.stream(offsets).mapToInt(o -> (int) o).toArray();
    TokenBatch[] onHeap = {TokenBatch.ofFloats(d, 40, 60, 128), TokenBatch.packedFloats(d, starts, 128)};
    try (MaxSim m = MaxSim.create()) {
      int layout = 0;
      for (String[] argv : new String[][] {{"--docs", dir.resolve("d.npy").toString()},
          {"--docs", dir.resolve("p.npy").toString(), "--doc-offsets", dir.resolve("o.npy").toString()}}) {
        TokenBatch heap = onHeap[layout++];
        TokenBatch mapped = Inputs.load(args(argv), Inputs.DOCS).batch();
        float[][] expected = m.scores(q, heap);
        float[][] got = m.scores(q, mapped);
        for (int i = 0; i < 3; i++) {
          assertArrayEquals(expected[i], got[i], 0f);
        }
      }
    }
  }
}
