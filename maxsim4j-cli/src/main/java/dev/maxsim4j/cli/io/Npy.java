package dev.maxsim4j.cli.io;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * NumPy {@code .npy} files (format versions 1-3) in C order: reads little-endian float32, float16, bool,
 * uint8, int8, int32 and int64 as a view of the memory-mapped file and refuses every other dtype by name;
 * writes the same types.
 */
public final class Npy {
  private static final byte[] MAGIC = {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y'};
  /** NumPy itself writes headers of a few hundred bytes; anything far larger is not a real file. */
  private static final long MAX_HEADER = 1 << 20;

  private Npy() {}

  public static NdArray read(Path file) throws IOException {
    String name = file.toString();
    MemorySegment all = MappedFiles.map(file);
    long size = all.byteSize();
    if (size < MAGIC.length + 4) {
      throw new IllegalArgumentException(name + " is not a .npy file (" + Counts.of(size, "byte") + ", too short)");
    }
    ByteBuffer head = all.asSlice(0, Math.min(size, MAGIC.length + 6)).asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
    for (byte b : MAGIC) {
      if (head.get() != b) {
        throw new IllegalArgumentException(name + " is not a .npy file (bad magic)");
      }
    }
    int major = head.get();
    head.get();
    if (major < 1 || major > 3) {
      throw new IllegalArgumentException(name + " is a .npy file of format version " + major + "; expected 1, 2 or 3");
    }
    long headerStart = major == 1 ? 10 : 12;
    if (size < headerStart) {
      throw new IllegalArgumentException(name + " is not a .npy file (" + size + " bytes, too short)");
    }
    long headerLength = major == 1 ? Short.toUnsignedLong(head.getShort()) : Integer.toUnsignedLong(head.getInt());
    if (headerLength > MAX_HEADER || headerLength > size - headerStart) {
      throw new IllegalArgumentException(name + ": .npy header length " + headerLength + " exceeds the file ("
          + size + " bytes)" + (headerLength > MAX_HEADER ? " or the 1 MiB a header may have" : ""));
    }
    byte[] hb = all.asSlice(headerStart, headerLength).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
    String text = new String(hb, major >= 3 ? StandardCharsets.UTF_8 : StandardCharsets.ISO_8859_1);
    NpyHeader header = NpyHeader.parse(text, name);
    long dataStart = headerStart + headerLength;
    long bytes = NdArray.elements(name, header.shape(), header.type()) * header.type().width();
    if (bytes != size - dataStart) {
      throw new IllegalArgumentException(name + " holds " + (size - dataStart) + " data bytes; expected " + bytes
          + " for shape " + java.util.Arrays.toString(header.shape()) + " of " + header.type()
          + (bytes > size - dataStart ? " (a truncated file?)" : ""));
    }
    return NdArray.ofSegment(name, header.type(), header.shape(), all.asSlice(dataStart, bytes));
  }

  /** Writes float32 data of the given shape. */
  public static void writeFloats(Path file, float[] data, long... shape) throws IOException {
    write(file, NdArray.ofFloats(file.toString(), shape, data));
  }

  /** Writes float16 bits of the given shape. */
  public static void writeHalfs(Path file, short[] data, long... shape) throws IOException {
    write(file, new NdArray(file.toString(), NdArray.ElementType.F16, shape, null, data, null));
  }

  /** Writes a bool array of the given shape. */
  public static void writeBools(Path file, boolean[] data, long... shape) throws IOException {
    write(file, new NdArray(file.toString(), NdArray.ElementType.BOOL, shape, null, null, data));
  }

  /** Writes an array of any readable type (bfloat16, which NumPy lacks, as its raw bits is refused). */
  public static void write(Path file, NdArray a) throws IOException {
    String descr = NpyHeader.descr(a.type());
    StringBuilder dims = new StringBuilder();
    for (long s : a.shape()) {
      dims.append(s).append(", ");
    }
    if (a.rank() > 1) {
      dims.setLength(dims.length() - 1);
    }
    String dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims.toString().trim() + "), }";
    int unpadded = MAGIC.length + 2 + 2 + dict.length() + 1;
    int pad = (64 - unpadded % 64) % 64;
    String header = dict + " ".repeat(pad) + "\n";
    ByteBuffer head = ByteBuffer.allocate(MAGIC.length + 4 + header.length()).order(ByteOrder.LITTLE_ENDIAN);
    head.put(MAGIC).put((byte) 1).put((byte) 0).putShort((short) header.length());
    head.put(header.getBytes(StandardCharsets.ISO_8859_1));
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      ch.write(head.flip());
      a.writeTo(ch);
    }
  }
}
