package dev.maxsim4j.lucene;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.apache.lucene.util.BytesRef;

/**
 * The tokens of many {@code LateInteractionField} values gathered into one packed {@code [T, dim]} float
 * array, straight from the stored bytes: no {@code float[][]} per document, no array per token.
 *
 * <p>The stored format (Lucene's {@code LateInteractionField.encode}): a little-endian int {@code dim},
 * then {@code tokens * dim} little-endian floats.
 */
final class LateInteractionBytes implements StoredTokens {
  private static final ValueLayout.OfInt INT_LE =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfFloat FLOAT_LE =
      ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  private String field;
  private int dim;
  private float[] data = new float[0];
  private int[] offsets = new int[1];
  private int rows;

  @Override
  public LateInteractionBytes reset(String field, int dim) {
    this.field = field;
    this.dim = dim;
    this.rows = 0;
    return this;
  }

  @Override
  public void add(BytesRef value, int docId) {
    MemorySegment bytes = MemorySegment.ofArray(value.bytes).asSlice(value.offset, value.length);
    int storedDim = value.length < Integer.BYTES ? 0 : bytes.get(INT_LE, 0);
    long floats = (value.length - Integer.BYTES) / Float.BYTES;
    if (value.length < Integer.BYTES || storedDim != dim
        || (value.length - Integer.BYTES) % (Float.BYTES * (long) dim) != 0) {
      // a quantized value's header read as a d gave a d in the hundreds of thousands: it is named as what it is
      String quantized = QuantizedLateInteractionField.quantizedValue(value);
      throw new IllegalArgumentException("field " + field + " of doc " + docId + ": " + (quantized != null
          ? quantized + ", not a LateInteractionField value; rescore it with MaxSimRescorer.createQuantized"
          : value.length < Integer.BYTES ? value.length + " bytes, expected a LateInteractionField value"
          // the query's d with part of a token: the length is what is wrong, not the d
          : storedDim == dim ? value.length + " bytes for token vectors of dim " + dim
              + "; expected 4 + a whole number of tokens x " + Float.BYTES * (long) dim
              + " bytes (a LateInteractionField value cut short or over-long)"
          : "token vectors of dim " + storedDim + " (" + value.length + " bytes), expected dim " + dim
              + " like the query vectors"));
    }
    int start = offsets[rows];
    if (start + floats > data.length) {
      data = Arrays.copyOf(data, Capacity.grown(data.length, start + floats,
          "field " + field + " of doc " + docId + ": the gathered floats"));
    }
    MemorySegment.copy(bytes, FLOAT_LE, Integer.BYTES, data, start, (int) floats);
    if (rows + 2L > offsets.length) {
      offsets = Arrays.copyOf(offsets, Capacity.grown(offsets.length, rows + 2L,
          "field " + field + " of doc " + docId + ": the gathered rows' offsets"));
    }
    offsets[++rows] = (int) (start + floats);
  }

  @Override
  public boolean fits(BytesRef value, int maxEntries) {
    long floats = Math.max(0, value.length - Integer.BYTES) / Float.BYTES;
    return offsets[rows] + floats <= maxEntries && rows + 2L <= maxEntries;
  }

  @Override
  public int rows() {
    return rows;
  }

  @Override
  public long usedBytes() {
    return (long) offsets[rows] * Float.BYTES + (rows + 1L) * Integer.BYTES;
  }

  @Override
  public long capacityBytes() {
    return (long) data.length * Float.BYTES + (long) offsets.length * Integer.BYTES;
  }

  /** The rows gathered so far as one packed fp32 batch (a view of the buffer, not a copy). */
  @Override
  public TokenBatch batch() {
    int[] tokens = new int[rows + 1];
    for (int r = 0; r <= rows; r++) {
      tokens[r] = offsets[r] / dim;
    }
    MemorySegment used = MemorySegment.ofArray(data).asSlice(0, (long) offsets[rows] * Float.BYTES);
    return TokenBatch.packedFromMemorySegment(used, DType.FLOAT32, tokens, dim);
  }
}
