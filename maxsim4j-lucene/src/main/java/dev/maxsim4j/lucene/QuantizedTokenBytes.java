package dev.maxsim4j.lucene;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Locale;
import org.apache.lucene.util.BytesRef;

/**
 * The tokens of many {@link QuantizedLateInteractionField} values gathered into one packed quantized batch:
 * the stored token bytes copied side by side, the scales beside them, never expanded to floats. All values
 * gathered together must have one type.
 */
final class QuantizedTokenBytes implements StoredTokens {
  private static final ValueLayout.OfFloat FLOAT_LE =
      ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final long LOW_SEVEN_BITS = 0x7f7f7f7f7f7f7f7fL;
  private static final long ONES = 0x0101010101010101L;
  private static final long HIGH_BITS = 0x8080808080808080L;

  private String field;
  private int dim;
  private DType type;
  private int firstDoc;
  private byte[] data = new byte[0];
  private float[] scales = new float[0];
  private int[] offsets = new int[1];
  private int rows;

  @Override
  public QuantizedTokenBytes reset(String field, int dim) {
    this.field = field;
    this.dim = dim;
    this.type = null;
    this.rows = 0;
    return this;
  }

  @Override
  public void add(BytesRef value, int docId) {
    String what = docId < 0 ? field : "field " + field + " of doc " + docId;
    QuantizedLateInteractionField.Header h = QuantizedLateInteractionField.header(value, what);
    if (h.dim() != dim) {
      throw new IllegalArgumentException(what + ": token vectors of dim " + h.dim() + "; expected dim " + dim
          + " like the query vectors");
    }
    if (type == null) {
      type = h.type();
      firstDoc = docId;
    } else if (h.type() != type) {
      throw new IllegalStateException(what + ": " + h.type() + " tokens gathered with the " + type + " tokens of doc "
          + firstDoc + "; each type has its own buffer");
    }
    int tokenBytes = (int) type.bytesPerToken(dim);
    int start = offsets[rows];
    int bytes = h.tokens() * tokenBytes;
    long end = (long) start * tokenBytes + bytes;
    if (end > data.length) {
      data = Arrays.copyOf(data, Capacity.grown(data.length, end, what + ": the gathered token bytes"));
    }
    if ((long) start + h.tokens() > scales.length) {
      scales = Arrays.copyOf(scales, Capacity.grown(scales.length, (long) start + h.tokens(),
          what + ": the gathered scales"));
    }
    int from = value.offset + QuantizedLateInteractionField.HEADER;
    System.arraycopy(value.bytes, from, data, start * tokenBytes, bytes);
    MemorySegment.copy(MemorySegment.ofArray(value.bytes), FLOAT_LE, from + bytes, scales, start, h.tokens());
    // checked here, where the value is still known: the gathered batch could only name its position in the block
    if (type == DType.FLOAT8_E4M3) { // a NaN code, which encode refuses, would rank its document first
      int nan = firstNanCode(data, start * tokenBytes, bytes);
      if (nan >= 0) {
        throw new IllegalArgumentException(String.format(Locale.ROOT, "%s: token %d, dimension %d holds 0x%02x, an"
            + " e4m3 NaN code; expected finite values", what, nan / tokenBytes, nan % tokenBytes,
            data[start * tokenBytes + nan] & 0xff));
      }
    }
    for (int t = start; t < start + h.tokens(); t++) {
      if (!Float.isFinite(scales[t])) {
        throw new IllegalArgumentException(what + ": token " + (t - start) + " has scale " + scales[t]
            + "; expected a finite scale");
      }
    }
    if (rows + 2L > offsets.length) {
      offsets = Arrays.copyOf(offsets,
          Capacity.grown(offsets.length, rows + 2L, what + ": the gathered rows' offsets"));
    }
    offsets[++rows] = start + h.tokens();
  }

  /** Counted from the value's length, which bounds both its token bytes and its scales (four bytes a token). */
  @Override
  public boolean fits(BytesRef value, int maxEntries) {
    long tokenBytes = type == null ? 1 : type.bytesPerToken(dim);
    return (long) offsets[rows] * tokenBytes + value.length <= maxEntries
        && (long) offsets[rows] + value.length / Float.BYTES <= maxEntries && rows + 2L <= maxEntries;
  }

  @Override
  public int rows() {
    return rows;
  }

  @Override
  public long usedBytes() {
    long tokenBytes = type == null ? 0 : type.bytesPerToken(dim);
    return offsets[rows] * (tokenBytes + Float.BYTES) + (rows + 1L) * Integer.BYTES;
  }

  @Override
  public long capacityBytes() {
    return data.length + (long) scales.length * Float.BYTES + (long) offsets.length * Integer.BYTES;
  }

  @Override
  public TokenBatch batch() {
    int tokens = offsets[rows];
    DType t = type == null ? DType.INT8 : type;
    MemorySegment used = MemorySegment.ofArray(data).asSlice(0, tokens * t.bytesPerToken(dim));
    return TokenBatch.packedFromMemorySegment(used, t, Arrays.copyOf(scales, tokens), Arrays.copyOf(offsets, rows + 1),
        dim);
  }

  /**
   * The offset from {@code from} of the first e4m3 NaN code (0x7f or 0xff) among {@code n} bytes, or -1: eight
   * bytes at a time, each byte's low seven bits plus one reaching its high bit only where they are all set (no carry
   * passes between bytes), since every reranked document's bytes are read.
   */
  static int firstNanCode(byte[] data, int from, int n) {
    MemorySegment bytes = MemorySegment.ofArray(data);
    int i = 0;
    for (; i + 8 <= n; i += 8) {
      if ((((bytes.get(LONG_LE, from + i) & LOW_SEVEN_BITS) + ONES) & HIGH_BITS) != 0) {
        break; // the byte is found below
      }
    }
    for (; i < n; i++) {
      if ((data[from + i] & 0x7f) == 0x7f) {
        return i;
      }
    }
    return -1;
  }
}
