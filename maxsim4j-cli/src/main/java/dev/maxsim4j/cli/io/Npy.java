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
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      writeFully(ch, header(a.type(), a.shape()));
      a.writeTo(ch);
    }
  }

  /**
   * Writes float32 rows as one {@code [rows.length, columns]} array, row by row: no flat copy of a result that may
   * take most of the heap.
   */
  public static void writeFloatRows(Path file, float[][] rows, long columns) throws IOException {
    for (int i = 0; i < rows.length; i++) {
      if (rows[i].length != columns) {
        throw new IllegalArgumentException(file + ": row " + i + " holds " + rows[i].length + " values; expected "
            + columns + ", as every row");
      }
    }
    createFloats(file, rows.length, columns);
    writeFloatColumns(file, rows, 0);
  }

  /**
   * Writes the header of a float32 array of {@code shape} and sizes the file for its data, zeros until
   * {@link #writeFloatColumns} fills it.
   */
  public static void createFloats(Path file, long... shape) throws IOException {
    ByteBuffer head = header(NdArray.ElementType.F32, shape);
    long bytes = NdArray.elements(file.toString(), shape, NdArray.ElementType.F32) * Float.BYTES;
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      long dataStart = head.remaining();
      writeFully(ch, head);
      if (bytes > 0) {
        // the last byte written sizes the file; the rest reads as zeros (a sparse file where the system has them)
        ch.write(ByteBuffer.allocate(1), dataStart + bytes - 1);
      }
    }
  }

  /**
   * Writes {@code block[i]} at columns {@code first ..} of row i of the float32 {@code [rows, columns]} array
   * {@link #createFloats} made in {@code file} (its header read back, so a block can only land inside it): a
   * corpus's scores written a shard's columns at a time.
   */
  public static void writeFloatColumns(Path file, float[][] block, long first) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer lead = readFully(ch, file, ByteBuffer.allocate(MAGIC.length + 4).order(ByteOrder.LITTLE_ENDIAN));
      boolean magic = java.util.Arrays.equals(lead.array(), 0, MAGIC.length, MAGIC, 0, MAGIC.length);
      if (!magic || lead.get(MAGIC.length) != 1) {
        throw new IllegalArgumentException(file + " is not a .npy file of format version 1 as createFloats writes");
      }
      int headerLength = Short.toUnsignedInt(lead.getShort(MAGIC.length + 2));
      ByteBuffer text = readFully(ch, file, ByteBuffer.allocate(headerLength));
      NpyHeader header = NpyHeader.parse(new String(text.array(), StandardCharsets.ISO_8859_1), file.toString());
      long[] shape = header.shape();
      if (header.type() != NdArray.ElementType.F32 || shape.length != 2 || block.length > shape[0]) {
        throw new IllegalArgumentException(file + " holds " + header.type() + " " + java.util.Arrays.toString(shape)
            + "; expected a float32 matrix of at least " + block.length + " rows");
      }
      long dataStart = lead.capacity() + headerLength;
      ByteBuffer chunk = ByteBuffer.allocate(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
      for (int i = 0; i < block.length; i++) {
        if (first < 0 || first + block[i].length > shape[1]) {
          throw new IllegalArgumentException(file + ": row " + i + "'s " + block[i].length + " values at column "
              + first + " pass its " + shape[1] + " columns");
        }
        long at = dataStart + (i * shape[1] + first) * Float.BYTES;
        for (int from = 0; from < block[i].length; ) {
          int n = Math.min(chunk.capacity() / Float.BYTES, block[i].length - from);
          chunk.clear();
          chunk.asFloatBuffer().put(block[i], from, n);
          chunk.limit(n * Float.BYTES);
          while (chunk.hasRemaining()) {
            at += ch.write(chunk, at);
          }
          from += n;
        }
      }
    }
  }

  /** The magic, version 1.0 and the dict of a C-order array, padded to a multiple of 64 bytes as NumPy does. */
  private static ByteBuffer header(NdArray.ElementType type, long[] shape) {
    String descr = NpyHeader.descr(type);
    StringBuilder dims = new StringBuilder();
    for (long s : shape) {
      dims.append(s).append(", ");
    }
    // NumPy's tuple: "(3,)" for one axis, "(2, 3)" for more (parsers that count axes by commas read "(2, 3,)" as one)
    if (shape.length > 1) {
      dims.setLength(dims.length() - 2);
    }
    String dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims.toString().trim() + "), }";
    int unpadded = MAGIC.length + 2 + 2 + dict.length() + 1;
    int pad = (64 - unpadded % 64) % 64;
    String header = dict + " ".repeat(pad) + "\n";
    ByteBuffer head = ByteBuffer.allocate(MAGIC.length + 4 + header.length()).order(ByteOrder.LITTLE_ENDIAN);
    head.put(MAGIC).put((byte) 1).put((byte) 0).putShort((short) header.length());
    head.put(header.getBytes(StandardCharsets.ISO_8859_1));
    return head.flip();
  }

  private static ByteBuffer readFully(FileChannel ch, Path file, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      if (ch.read(b) < 0) {
        throw new IllegalArgumentException(file + " ends inside its .npy header");
      }
    }
    return b;
  }

  private static void writeFully(FileChannel ch, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      ch.write(b);
    }
  }
}
