package dev.maxsim4j.cli.io;

import dev.maxsim4j.DType;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.WritableByteChannel;
import java.util.Arrays;

/**
 * A dense array read from (or to be written to) a file: its element type, shape and little-endian data.
 * Read arrays are views of a memory-mapped file, so a file larger than any Java array can be scored
 * without a copy; {@link #floats()}, {@link #halfs()}, {@link #bytes()}, {@link #flags()} and
 * {@link #integers()} copy onto the heap when an array is wanted.
 */
public final class NdArray {
  /** The element types the readers accept; others are refused by name when the file is read. */
  public enum ElementType {
    F32("float32", 4), F16("float16", 2), BF16("bfloat16", 2), BOOL("bool", 1), U8("uint8", 1),
    I8("int8", 1), F8_E4M3("float8_e4m3fn", 1), I32("int32", 4), I64("int64", 8);

    private final String numpyName;
    private final int width;

    ElementType(String numpyName, int width) {
      this.numpyName = numpyName;
      this.width = width;
    }

    public int width() {
      return width;
    }

    @Override
    public String toString() {
      return numpyName;
    }
  }

  /** Largest heap array the JVM allocates (a few header words below Integer.MAX_VALUE). */
  static final int MAX_ARRAY = Integer.MAX_VALUE - 8;
  /** Element layouts of the file formats: little-endian, and unaligned because safetensors offsets need not be. */
  public static final ValueLayout.OfFloat LE_FLOAT =
      ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  public static final ValueLayout.OfShort LE_SHORT =
      ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  static final ValueLayout.OfLong LE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  private final String source;
  private final ElementType type;
  private final long[] shape;
  private final MemorySegment data;
  private final float[] floats;
  private final short[] halfs;
  private final boolean[] flags;

  /** A heap array: exactly one of {@code floats}, {@code halfs} (fp16/bf16 bits) or {@code flags} is set. */
  public NdArray(String source, ElementType type, long[] shape, float[] floats, short[] halfs, boolean[] flags) {
    this(source, type, shape, null, floats, halfs, flags);
  }

  private NdArray(String source, ElementType type, long[] shape, MemorySegment data, float[] floats, short[] halfs,
      boolean[] flags) {
    this.source = source;
    this.type = type;
    this.shape = shape.clone();
    this.data = data;
    this.floats = floats;
    this.halfs = halfs;
    this.flags = flags;
  }

  public static NdArray ofFloats(String source, long[] shape, float[] data) {
    return new NdArray(source, ElementType.F32, shape, data, null, null);
  }

  /**
   * An array over little-endian {@code data} (e.g. a mapped file), which must hold exactly its bytes. An axis over
   * 2^31-1 is refused here, as the array is read (where the option that named its file is named): no axis of a token
   * batch is longer. Other tensors of the same file are not read, so not refused.
   */
  public static NdArray ofSegment(String source, ElementType type, long[] shape, MemorySegment data) {
    for (int axis = 0; axis < shape.length; axis++) {
      if (shape[axis] > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(source + " has shape " + Arrays.toString(shape) + "; dimension " + axis
            + " is over 2^31-1, the most rows, tokens or values per token maxsim4j reads along one axis");
      }
    }
    NdArray a = new NdArray(source, type, shape, data, null, null, null);
    if (data.byteSize() != a.byteSize()) {
      throw new IllegalArgumentException(source + " holds " + Counts.of(data.byteSize(), "byte") + "; expected "
          + a.byteSize() + " for shape " + a.shapeString() + " of " + type);
    }
    return a;
  }

  /** Elements of {@code shape}; an IllegalArgumentException naming {@code source} if negative or over 2^63. */
  static long elements(String source, long[] shape, ElementType type) {
    for (long s : shape) {
      if (s < 0) {
        throw new IllegalArgumentException(source + " has shape " + Arrays.toString(shape)
            + "; expected non-negative dimensions");
      }
    }
    // an array with an empty axis holds nothing, however large the others: a product taken in order could overflow
    // before it meets the zero
    if (Arrays.stream(shape).anyMatch(s -> s == 0)) {
      return 0;
    }
    long n = 1;
    for (long s : shape) {
      n = multiply(source, shape, n, s);
    }
    multiply(source, shape, n, type == null ? 1 : type.width);
    return n;
  }

  private static long multiply(String source, long[] shape, long a, long b) {
    try {
      return Math.multiplyExact(a, b);
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(source + " has shape " + Arrays.toString(shape)
          + ", whose size in bytes passes 2^63; expected a real array");
    }
  }

  public String source() {
    return source;
  }

  public ElementType type() {
    return type;
  }

  public long[] shape() {
    return shape.clone();
  }

  public int rank() {
    return shape.length;
  }

  /** Dimension {@code axis} as an int; an IllegalArgumentException if it does not fit. */
  public int dim(int axis) {
    long s = shape[axis];
    if (s > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(source + " has shape " + shapeString() + "; dimension " + axis
          + " is over 2^31-1");
    }
    return (int) s;
  }

  public long elements() {
    return elements(source, shape, type);
  }

  public long byteSize() {
    return elements() * type.width;
  }

  /** Whether the data lies in a MemorySegment (a mapped file), where reading it as a Java array copies it. */
  public boolean inSegment() {
    return data != null;
  }

  public boolean isFloating() {
    return type == ElementType.F32 || type == ElementType.F16 || type == ElementType.BF16;
  }

  /** The embedding dtype; an IllegalArgumentException naming the element type if it is not floating-point. */
  public DType dtype() {
    return switch (type) {
      case F32 -> DType.FLOAT32;
      case F16 -> DType.FLOAT16;
      case BF16 -> DType.BFLOAT16;
      default -> throw new IllegalArgumentException(source + " holds " + type
          + "; expected float32, float16 or bfloat16 embeddings");
    };
  }

  /** The data as little-endian bytes: the mapped file, or a view of the heap array. */
  public MemorySegment segment() {
    if (data != null) {
      return data;
    }
    if (floats != null) {
      return MemorySegment.ofArray(floats);
    }
    if (halfs != null) {
      return MemorySegment.ofArray(halfs);
    }
    byte[] b = new byte[flags.length];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) (flags[i] ? 1 : 0);
    }
    return MemorySegment.ofArray(b);
  }

  /** The data of a float32 array; null for other types. */
  public float[] floats() {
    if (floats != null || type != ElementType.F32 || data == null) {
      return floats;
    }
    float[] f = new float[heapCount()];
    MemorySegment.copy(data, LE_FLOAT, 0, f, 0, f.length);
    return f;
  }

  /** The bit patterns of a float16 or bfloat16 array; null for other types. */
  public short[] halfs() {
    if (halfs != null || (type != ElementType.F16 && type != ElementType.BF16) || data == null) {
      return halfs;
    }
    short[] s = new short[heapCount()];
    MemorySegment.copy(data, LE_SHORT, 0, s, 0, s.length);
    return s;
  }

  /** The raw bytes of an array of one-byte elements (int8, float8, uint8, bool); null for other types. */
  public byte[] bytes() {
    if (type.width != 1) {
      return null;
    }
    if (flags != null) {
      return segment().toArray(ValueLayout.JAVA_BYTE);
    }
    byte[] b = new byte[heapCount()];
    MemorySegment.copy(data, ValueLayout.JAVA_BYTE, 0, b, 0, b.length);
    return b;
  }

  /** Nonzero elements of a bool or uint8 array; null for other types. */
  public boolean[] flags() {
    if (flags != null || (type != ElementType.BOOL && type != ElementType.U8) || data == null) {
      return flags;
    }
    boolean[] b = new boolean[heapCount()];
    for (int i = 0; i < b.length; i++) {
      b[i] = data.get(ValueLayout.JAVA_BYTE, i) != 0;
    }
    return b;
  }

  /** The values of an int32 or int64 array; null for other types. */
  public long[] integers() {
    if ((type != ElementType.I32 && type != ElementType.I64) || data == null) {
      return null;
    }
    long[] v = new long[heapCount()];
    for (int i = 0; i < v.length; i++) {
      v[i] = type == ElementType.I32 ? data.getAtIndex(LE_INT, i) : data.getAtIndex(LE_LONG, i);
    }
    return v;
  }

  /** Element {@code index} of an int32 or int64 array, read where it lies (no copy of the array). */
  public long integerAt(long index) {
    if ((type != ElementType.I32 && type != ElementType.I64) || data == null) {
      throw new IllegalStateException(source + " is not an int32 or int64 array read from a file");
    }
    return type == ElementType.I32 ? data.getAtIndex(LE_INT, index) : data.getAtIndex(LE_LONG, index);
  }

  private int heapCount() {
    long n = elements();
    if (n > MAX_ARRAY) {
      throw new IllegalArgumentException(source + " has " + n + " elements " + shapeString()
          + "; a Java array holds at most " + MAX_ARRAY);
    }
    return (int) n;
  }

  /** Writes the data's bytes, in chunks so that no copy of the whole array is made. */
  public void writeTo(WritableByteChannel ch) throws IOException {
    MemorySegment all = segment();
    byte[] chunk = new byte[1 << 20];
    for (long at = 0; at < all.byteSize(); at += chunk.length) {
      int n = (int) Math.min(chunk.length, all.byteSize() - at);
      MemorySegment.copy(all, at, MemorySegment.ofArray(chunk), 0, n);
      ByteBuffer b = ByteBuffer.wrap(chunk, 0, n);
      while (b.hasRemaining()) {
        ch.write(b);
      }
    }
  }

  public String shapeString() {
    return Arrays.toString(shape);
  }

  @Override
  public String toString() {
    return source + " " + type + " " + shapeString();
  }
}
