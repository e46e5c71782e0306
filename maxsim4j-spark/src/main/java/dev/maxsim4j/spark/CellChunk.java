package dev.maxsim4j.spark;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.ref.SoftReference;
import java.util.Arrays;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.unsafe.Platform;

/**
 * A {@link DocumentChunk} of {@link TokenCodec} binary cells, each copied once, from Spark's row straight into
 * the batch's buffer: reading a cell as a {@code byte[]} and packing it later would copy (and allocate) it twice.
 * The buffer is sized for a full chunk at the first document, kept from one chunk to the next, and the batch
 * views its filled part, so a partition allocates it once and never grows it; it holds at most
 * {@link #BUFFER_BYTES} (unless one document alone takes more), which bounds what a task holds besides its
 * rows, whatever the size of its partition. {@link #release} leaves it to the next partition ranked on the same
 * thread, softly held, since allocating and zeroing a fresh one would cost each task about as much as ranking a
 * small partition.
 */
final class CellChunk implements DocumentChunk {
  /** The most token bytes a chunk holds, unless one document alone takes more. */
  static final long BUFFER_BYTES = 32L << 20;

  /** The buffer the last chunk released on this thread, if the GC has not taken it. */
  private static final ThreadLocal<SoftReference<Object>> SPARE = new ThreadLocal<>();

  private final TokenShape shape = new TokenShape("document");
  private final int maxRows;
  private final long maxElements;
  private Object data; // short[], float[] or byte[], by the type of the cells
  private int dataBytes;
  private float[] scales = new float[0];
  private int[] offsets = new int[17];
  private int rows;
  private int tokens;
  private boolean[] mask;

  CellChunk(int maxRows, long maxElements, int queryDim) {
    this.maxRows = maxRows;
    this.maxElements = maxElements;
    shape.expectDim(queryDim, "the queries");
  }

  @Override
  public boolean add(Object id, InternalRow row, Object maskCell) {
    String what = "tokens of document " + IdText.quoted(id);
    if (row.isNullAt(1)) {
      throw new IllegalArgumentException(what + " is null; expected its tokens (is the id missing from its table?)");
    }
    MemorySegment cell = cellOf(row, 1);
    TokenCodec.Header h = TokenCodec.header(cell, what);
    int length = h.length();
    long payload = h.type().isQuantized() ? length * h.type().bytesPerToken(h.dim())
        : (long) length * h.dim() * h.type().byteSize();
    if (rows > 0 && (rows >= maxRows || dataBytes + payload > BUFFER_BYTES
        || (long) (tokens + length) * h.dim() > maxElements)) {
      return false;
    }
    if (length > 0) {
      shape.accept(h.type(), h.dim(), what);
      copy(cell, h, Math.toIntExact(payload));
    }
    int before = tokens;
    tokens = Math.addExact(tokens, length);
    if (maskCell != null) {
      if (mask == null) {
        mask = new boolean[Math.max(16, tokens)];
        Arrays.fill(mask, 0, before, true);
      }
      mask = TokenRows.grow(mask, tokens);
      TokenRows.copyMask(maskCell, length, what, mask, before);
    } else if (mask != null) {
      mask = TokenRows.grow(mask, tokens);
      Arrays.fill(mask, before, tokens, true);
    }
    if (rows + 2 > offsets.length) {
      offsets = Arrays.copyOf(offsets, offsets.length * 2);
    }
    offsets[++rows] = tokens;
    return true;
  }

  /**
   * The type the tokens cell of {@code row} states ({@link TokenCodec#statedType}): the chunk of a partition's
   * documents it joins, one per type.
   */
  static DType statedType(InternalRow row) {
    if (row.isNullAt(1)) {
      return DType.FLOAT32; // adding it names the null
    }
    MemorySegment cell = cellOf(row, 1);
    if (cell.byteSize() < TokenCodec.HEADER_BYTES) {
      return DType.FLOAT32;
    }
    return TokenCodec.statedType(cell.get(ValueLayout.JAVA_BYTE, 0), cell.get(ValueLayout.JAVA_BYTE, 1));
  }

  /** The d the tokens cell of {@code row} states ({@link TokenCodec#statedDim}). */
  static int statedDim(InternalRow row) {
    return row.isNullAt(1) ? 0 : TokenCodec.statedDim(cellOf(row, 1));
  }

  /** The cell in {@code row} where it lies in the row's memory; a copy only for rows not laid out by Spark. */
  private static MemorySegment cellOf(InternalRow row, int ordinal) {
    if (row instanceof UnsafeRow u) {
      long offsetAndSize = u.getLong(ordinal);
      long at = u.getBaseOffset() + (int) (offsetAndSize >> 32);
      int size = (int) offsetAndSize;
      if (u.getBaseObject() instanceof byte[] b) {
        return MemorySegment.ofArray(b).asSlice(at - Platform.BYTE_ARRAY_OFFSET, size);
      }
      if (u.getBaseObject() instanceof long[] l) {
        return MemorySegment.ofArray(l).asSlice(at - Platform.LONG_ARRAY_OFFSET, size);
      }
    }
    return MemorySegment.ofArray(row.getBinary(ordinal));
  }

  private void copy(MemorySegment cell, TokenCodec.Header h, int payload) {
    DType type = h.type();
    reserve(type, dataBytes + payload);
    long from = TokenCodec.HEADER_BYTES;
    int length = h.length();
    if (type.isQuantized()) {
      if (tokens + length > scales.length) {
        scales = Arrays.copyOf(scales, Math.max(tokens + length, 2 * scales.length));
      }
      MemorySegment.copy(cell, TokenCodec.FLOAT, from, scales, tokens, length);
      MemorySegment.copy(cell, ValueLayout.JAVA_BYTE, from + 4L * length, (byte[]) data, dataBytes, payload);
    } else if (type == DType.FLOAT32) {
      MemorySegment.copy(cell, TokenCodec.FLOAT, from, (float[]) data, dataBytes / 4, payload / 4);
    } else {
      MemorySegment.copy(cell, TokenCodec.SHORT, from, (short[]) data, dataBytes / 2, payload / 2);
    }
    dataBytes += payload;
  }

  /** A buffer of {@code type}'s array kind holding at least {@code bytes}, keeping what it holds. */
  private void reserve(DType type, int bytes) {
    int unit = type.isQuantized() ? 1 : type.byteSize();
    boolean sameKind = type.isQuantized() ? data instanceof byte[]
        : type == DType.FLOAT32 ? data instanceof float[] : data instanceof short[];
    int held = sameKind ? (int) segment(data).byteSize() : 0;
    if (bytes <= held) {
      return;
    }
    // sized at once for a chunk of documents like the first, so that a partition neither grows nor copies it
    long grown = Math.max(bytes, Math.min(BUFFER_BYTES, held == 0 ? (long) bytes * maxRows : 2L * held));
    int elements = Math.toIntExact((grown + unit - 1) / unit);
    data = !sameKind ? spareOrNew(type, elements)
        : data instanceof byte[] b ? Arrays.copyOf(b, elements)
        : data instanceof float[] f ? Arrays.copyOf(f, elements) : Arrays.copyOf((short[]) data, elements);
  }

  private static MemorySegment segment(Object data) {
    return data instanceof byte[] b ? MemorySegment.ofArray(b)
        : data instanceof float[] f ? MemorySegment.ofArray(f) : MemorySegment.ofArray((short[]) data);
  }

  /**
   * The buffer a chunk released on this thread where it is of {@code type}'s array kind and holds
   * {@code elements}; else a new one. Only the filled part of a buffer is ever read, so what it held is no matter.
   */
  private static Object spareOrNew(DType type, int elements) {
    SoftReference<Object> held = SPARE.get();
    Object spare = held == null ? null : held.get();
    boolean fits = type.isQuantized() ? spare instanceof byte[] b && b.length >= elements
        : type == DType.FLOAT32 ? spare instanceof float[] f && f.length >= elements
        : spare instanceof short[] h && h.length >= elements;
    if (fits) {
      SPARE.remove();
      return spare;
    }
    return newArray(type, elements);
  }

  private static Object newArray(DType type, int elements) {
    return type.isQuantized() ? new byte[elements] : type == DType.FLOAT32 ? new float[elements]
        : new short[elements];
  }

  /** The array the chunk fills, null before its first token: tests check its reuse, otherwise unseen. */
  Object buffer() {
    return data;
  }

  @Override
  public int rows() {
    return rows;
  }

  @Override
  public int dim() {
    return shape.dim();
  }

  @Override
  public TokenBatch batch(int fallbackDim) {
    int[] off = Arrays.copyOf(offsets, rows + 1);
    if (shape.type() == null) {
      return TokenBatch.packedFloats(new float[0], off, fallbackDim);
    }
    MemorySegment filled = segment(data).asSlice(0, dataBytes);
    TokenBatch batch = shape.type().isQuantized()
        ? TokenBatch.packedFromMemorySegment(filled, shape.type(), Arrays.copyOf(scales, tokens), off, shape.dim())
        : TokenBatch.packedFromMemorySegment(filled, shape.type(), off, shape.dim());
    return mask == null ? batch : batch.withMask(Arrays.copyOf(mask, tokens));
  }

  /**
   * Empties the chunk and leaves its buffer to the next chunk filled on this thread, unless one document made it
   * larger than {@link #BUFFER_BYTES}; a batch made before must no longer be used.
   */
  @Override
  public void release() {
    if (data != null && segment(data).byteSize() <= BUFFER_BYTES) {
      SPARE.set(new SoftReference<>(data));
    }
    data = null;
    clear();
  }

  @Override
  public void clear() {
    rows = 0;
    tokens = 0;
    dataBytes = 0;
    mask = null;
    shape.reset();
  }
}
