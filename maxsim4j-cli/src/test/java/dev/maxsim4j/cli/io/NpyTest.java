package dev.maxsim4j.cli.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The .npy reader accepts what it can score and refuses everything else by name, in one line. */
class NpyTest {
  @TempDir Path dir;

  /** A version-1 .npy file with the given header dict and data bytes. */
  static byte[] npy(String dict, byte[] data) {
    String header = dict + " ".repeat((64 - (10 + dict.length() + 1) % 64) % 64) + "\n";
    ByteBuffer b = ByteBuffer.allocate(10 + header.length() + data.length).order(ByteOrder.LITTLE_ENDIAN);
    b.put(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0}).putShort((short) header.length());
    b.put(header.getBytes(StandardCharsets.ISO_8859_1)).put(data);
    return b.array();
  }

  private String refusal(byte[] file) throws IOException {
    Path p = Files.write(dir.resolve("x.npy"), file);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Npy.read(p));
    assertEquals(1, e.getMessage().lines().count(), e.getMessage());
    assertTrue(e.getMessage().startsWith(p.toString()), e.getMessage());
    return e.getMessage();
  }

  private static String dict(String descr, String shape) {
    return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  }

  @Test
  void textAfterTheHeaderDictIsRefused() throws IOException {
    String m = refusal(npy(dict("<f4", "(2,)") + " (3,)", new byte[8]));
    assertTrue(m.contains("'(3,)' after the dict; expected only spaces and a newline"), m);
    assertEquals(2, Npy.read(Files.write(dir.resolve("ok.npy"), npy(dict("<f4", "(2,)"), new byte[8]))).elements());
  }

  @Test
  void unsupportedDtypesAreRefusedByName() throws IOException {
    String m = refusal(npy(dict("<u2", "(2, 2)"), new byte[8]));
    assertTrue(m.contains("'<u2 (uint16)'"), m);
    m = refusal(npy(dict("u2", "(2, 2)"), new byte[8]));
    assertTrue(m.contains("'u2 (uint16)'"), m);
    m = refusal(npy(dict("|V1", "(4,)"), new byte[4]));
    assertTrue(m.contains("'|V1 (raw bytes (void))'") && !m.contains("boolean"), m);
    m = refusal(npy(dict("<i2", "(4,)"), new byte[8]));
    assertTrue(m.contains("'<i2 (int16)'"), m);
    m = refusal(npy(dict(">f4", "(1,)"), new byte[4]));
    assertTrue(m.contains("big-endian float32"), m);
    m = refusal(npy(dict("<f8", "(1,)"), new byte[8]));
    assertTrue(m.contains("float64"), m);
    m = refusal(npy(dict("|O", "(1,)"), new byte[8]));
    assertTrue(m.contains("object"), m);
    m = refusal(npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", new byte[4]));
    assertTrue(m.contains("structured"), m);
    m = refusal(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", new byte[16]));
    assertTrue(m.contains("Fortran order"), m);
  }

  @Test
  void badShapesAndHeaderLengthsAreOneLine() throws IOException {
    assertTrue(refusal(npy(dict("<f4", "(4611686018427387904, 4)"), new byte[0])).contains("2^63"));
    assertTrue(refusal(npy(dict("<f4", "(0, 3000000000)"), new byte[0])).contains("dimension 1 is over 2^31-1"));
    // an empty axis anywhere makes an empty array: refused for its large axis, not for a product overflowing first
    String empty = refusal(npy(dict("<f4", "(4294967296, 4294967296, 0)"), new byte[0]));
    assertTrue(empty.contains("dimension 0 is over 2^31-1") && !empty.contains("2^63"), empty);
    assertTrue(refusal(npy(dict("<f4", "(2147483647, 2147483647, 2147483647)"), new byte[0])).contains("2^63"));
    assertTrue(refusal(npy(dict("<f4", "(-1, 4)"), new byte[0])).contains("negative"));
    assertTrue(refusal(npy(dict("<f4", "(2, x)"), new byte[0])).contains("shape entry 'x'"));
    assertTrue(refusal(npy(dict("<f4", "(2, 3)"), new byte[20])).contains("truncated"));
    assertTrue(refusal(npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
        new byte[4])).contains("twice"));
    // a header of thousands of axes is refused in a line of its own length, not of the header's
    String axes = refusal(npy(dict("<f4", "(" + "1, ".repeat(20_000) + ")"), new byte[4]));
    assertTrue(axes.contains("more than 64 dimensions") && axes.length() < 500, axes);
    // (60) is the number 60 to Python, not a shape: NumPy refuses it
    assertTrue(refusal(npy(dict("<f4", "(60)"), new byte[240])).contains("without the comma of a 1-tuple"));
    assertEquals(60, Npy.read(Files.write(dir.resolve("one.npy"), npy(dict("<f4", "(60,)"), new byte[240])))
        .elements());
    // a header cut short by its length field, and a character Python does not take as a space, are named as such
    byte[] cut = npy(dict("<f4", "(1,)"), new byte[4]);
    ByteBuffer.wrap(cut).order(ByteOrder.LITTLE_ENDIAN).putShort(8, (short) 10);
    String early = refusal(cut);
    assertTrue(early.contains("the header's end (its length field may be too small)"), early);
    String nbsp = refusal(npy("{'descr':\u00a0'<f4', 'fortran_order': False, 'shape': (1,), }", new byte[4]));
    assertTrue(nbsp.contains("U+00A0 where the dtype string belongs"), nbsp);
    byte[] huge = npy(dict("<f4", "(1,)"), new byte[4]);
    huge[6] = 2;
    assertTrue(refusal(huge).contains("header length"));
    ByteBuffer.wrap(huge).order(ByteOrder.LITTLE_ENDIAN).put(6, (byte) 1).putShort(8, (short) 0xffff);
    assertTrue(refusal(huge).contains("exceeds the file"));
  }

  @Test
  void readsEveryAcceptedType() throws IOException {
    Path f = dir.resolve("f.npy");
    Npy.writeFloats(f, new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
    NdArray a = Npy.read(f);
    assertArrayEquals(new long[] {2, 3}, a.shape());
    assertArrayEquals(new float[] {1, 2, 3, 4, 5, 6}, a.floats());
    Path i = dir.resolve("i.npy");
    Npy.write(i, NdArray.ofSegment("i", NdArray.ElementType.I64, new long[] {3},
        java.lang.foreign.MemorySegment.ofArray(new long[] {0, 5, 9})));
    assertArrayEquals(new long[] {0, 5, 9}, Npy.read(i).integers());
    byte[] u8 = npy(dict("|u1", "(3,)"), new byte[] {0, 7, 1});
    Path m = Files.write(dir.resolve("m.npy"), u8);
    assertArrayEquals(new boolean[] {false, true, true}, Npy.read(m).flags());
    Path s8 = Files.write(dir.resolve("s8.npy"), npy(dict("|i1", "(3,)"), new byte[] {-128, 0, 127}));
    assertEquals(NdArray.ElementType.I8, Npy.read(s8).type());
    assertArrayEquals(new byte[] {-128, 0, 127}, Npy.read(s8).bytes());
    Npy.write(s8, Npy.read(s8));
    assertArrayEquals(new byte[] {-128, 0, 127}, Npy.read(s8).bytes());
    // no byte-order character: NumPy reads the native order, as np.load does
    Path bare = Files.write(dir.resolve("bare.npy"), npy(dict("i1", "(3,)"), new byte[] {-128, 0, 127}));
    assertArrayEquals(new byte[] {-128, 0, 127}, Npy.read(bare).bytes());
    Files.write(bare, npy(dict("f4", "(1,)"), new byte[] {0, 0, (byte) 0x80, 0x3f}));
    assertArrayEquals(new float[] {1}, Npy.read(bare).floats());
  }

  /** A matrix written a block of columns at a time reads back as written whole; a block past it is refused. */
  @Test
  void columnsWrittenBlockByBlockReadAsTheWholeMatrix() throws IOException {
    Path whole = dir.resolve("whole.npy");
    Path blocks = dir.resolve("blocks.npy");
    float[][] rows = {{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}};
    Npy.writeFloatRows(whole, rows, 5);
    Npy.createFloats(blocks, 2, 5);
    Npy.writeFloatColumns(blocks, new float[][] {{4, 5}, {9, 10}}, 3);
    Npy.writeFloatColumns(blocks, new float[][] {{1, 2, 3}, {6, 7, 8}}, 0);
    assertArrayEquals(Files.readAllBytes(whole), Files.readAllBytes(blocks));
    assertArrayEquals(new float[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Npy.read(blocks).floats());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Npy.writeFloatColumns(blocks, new float[][] {{1, 2, 3}}, 3));
    assertTrue(e.getMessage().contains("row 0's 3 values at column 3 pass its 5 columns"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Npy.writeFloatColumns(blocks, new float[3][1], 0));
    assertThrows(IllegalArgumentException.class, () -> Npy.writeFloatRows(whole, new float[][] {{1}, {1, 2}}, 2));
    assertArrayEquals(new float[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Npy.read(blocks).floats());
  }

  /**
   * The shape is written as NumPy writes its tuple, "(3,)" for one axis and "(2, 3)" for more: "(2, 3,)", which it
   * was, reads in parsers that count axes by a trailing comma (cnpy and its many copies) as one axis. Found by a
   * tester of Python interop.
   */
  @Test
  void theShapeIsWrittenAsNumPyWritesIt() throws IOException {
    for (long[] shape : new long[][] {{3}, {2, 3}, {2, 3, 4}}) {
      Path p = dir.resolve("s" + shape.length + ".npy");
      Npy.createFloats(p, shape);
      byte[] b = Files.readAllBytes(p);
      String header = new String(b, 10, (b[8] & 0xff) | (b[9] & 0xff) << 8, StandardCharsets.ISO_8859_1);
      String tuple = shape.length == 1 ? "(3,)" : shape.length == 2 ? "(2, 3)" : "(2, 3, 4)";
      assertTrue(header.startsWith("{'descr': '<f4', 'fortran_order': False, 'shape': " + tuple + ", }"), header);
    }
  }
}
