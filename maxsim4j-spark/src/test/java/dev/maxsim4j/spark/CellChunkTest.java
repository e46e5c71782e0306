package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import java.util.Random;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.Test;

class CellChunkTest {
  private static final DataType[] ROW = {DataTypes.StringType, DataTypes.BinaryType,
      DataTypes.createArrayType(DataTypes.BooleanType)};

  /** The row Spark's scans hand out: an UnsafeRow over a byte array, reused from one row to the next. */
  private static final UnsafeProjection UNSAFE = UnsafeProjection.create(ROW);

  private static InternalRow generic(String id, byte[] cell, boolean[] mask) {
    Object flags = null;
    if (mask != null) {
      Object[] boxed = new Object[mask.length];
      for (int i = 0; i < mask.length; i++) {
        boxed[i] = mask[i];
      }
      flags = new GenericArrayData(boxed);
    }
    return new GenericInternalRow(new Object[] {UTF8String.fromString(id), cell, flags});
  }

  private static InternalRow unsafe(String id, byte[] cell, boolean[] mask) {
    return UNSAFE.apply(generic(id, cell, mask));
  }

  private static float[][] tokens(Random r, int length, int dim) {
    float[][] t = new float[length][dim];
    for (float[] token : t) {
      for (int k = 0; k < dim; k++) {
        token[k] = (float) r.nextGaussian();
      }
    }
    return t;
  }

  @Test
  void everyTypePacksAsTheRowsWouldFromSparksRowsAndFromOthers() {
    for (DType type : DType.values()) {
      for (boolean fromUnsafeRows : new boolean[] {true, false}) {
        Random r = new Random(type.ordinal());
        TokenRows want = new TokenRows("document");
        CellChunk got = new CellChunk(100, 1L << 26, 16);
        for (int i = 0; i < 9; i++) {
          int length = i % 4 == 0 ? 0 : 1 + r.nextInt(6);
          byte[] cell = TokenCodec.encode(tokens(r, length, 16), type);
          boolean[] mask = null;
          // a document without a mask, before the first mask (0 to 2) or after it (6), has every token valid
          if (i >= 3 && i != 6) {
            mask = new boolean[length];
            for (int t = 0; t < length; t++) {
              mask[t] = t == 0 || r.nextBoolean();
            }
          }
          InternalRow row = fromUnsafeRows ? unsafe("d" + i, cell, mask) : generic("d" + i, cell, mask);
          Object maskCell = row.isNullAt(2) ? null : row.getArray(2);
          want.add("d" + i, cell, maskCell);
          assertTrue(got.add("d" + i, row, maskCell));
        }
        assertSame(want.pack(16).toBatch(), got.batch(16), type + (fromUnsafeRows ? " from UnsafeRows" : ""));
      }
    }
  }

  private static void assertSame(TokenBatch want, TokenBatch got, String what) {
    assertEquals(want.dtype(), got.dtype(), what);
    assertArrayEquals(want.offsets(), got.offsets(), what);
    for (int row = 0; row < want.size(); row++) {
      for (int t = 0; t < want.length(row); t++) {
        assertEquals(want.isValid(row, t), got.isValid(row, t), what + " row " + row + " token " + t);
        for (int k = 0; k < want.dim(); k++) {
          assertEquals(want.get(row, t, k), got.get(row, t, k), what + " row " + row + " token " + t);
        }
      }
    }
  }

  @Test
  void aChunkEndsAtItsRowsOrItsBufferButTakesAnyDocumentWhenEmpty() {
    byte[] small = TokenCodec.encode(tokens(new Random(1), 2, 8), DType.BFLOAT16);
    CellChunk three = new CellChunk(3, 1L << 26, 8);
    for (int i = 0; i < 3; i++) {
      assertTrue(three.add("d" + i, unsafe("d" + i, small, null), null));
    }
    assertFalse(three.add("d3", unsafe("d3", small, null), null));
    assertEquals(3, three.rows());

    int perBuffer = (int) (CellChunk.BUFFER_BYTES / (32 * 128 * 2));
    byte[] doc = TokenCodec.encode(tokens(new Random(2), 32, 128), DType.BFLOAT16);
    CellChunk chunk = new CellChunk(1 << 20, 1L << 26, 128);
    for (int i = 0; i < perBuffer; i++) {
      assertTrue(chunk.add("d" + i, unsafe("d" + i, doc, null), null));
    }
    assertFalse(chunk.add("next", unsafe("next", doc, null), null));
    assertEquals(perBuffer, chunk.batch(128).size());

    // after clear, the buffer that held bf16 takes fp32, and one document larger than the buffer fits alone
    chunk.clear();
    int length = (int) (CellChunk.BUFFER_BYTES / (4 * 128)) + 1;
    byte[] huge = TokenCodec.encode(tokens(new Random(3), length, 128), DType.FLOAT32);
    assertTrue(chunk.add("huge", unsafe("huge", huge, null), null));
    assertFalse(chunk.add("small", unsafe("small", TokenCodec.encode(tokens(new Random(4), 1, 128),
        DType.FLOAT32), null), null));
    TokenBatch one = chunk.batch(128);
    assertEquals(DType.FLOAT32, one.dtype());
    assertEquals(length, one.length(0));
    assertEquals(TokenCodec.decode(huge)[length - 1][127], one.get(0, length - 1, 127));
  }

  @Test
  void aBadCellFailsNamingItsDocument() {
    CellChunk chunk = new CellChunk(100, 1L << 26, 8);
    byte[] bf16 = TokenCodec.encode(tokens(new Random(5), 2, 8), DType.BFLOAT16);
    assertTrue(chunk.add("d0", unsafe("d0", bf16, null), null));
    // a chunk holds one type: top-k keeps a chunk per type (CellChunk.statedType)
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> chunk.add("d1",
        unsafe("d1", TokenCodec.encode(tokens(new Random(6), 2, 8), DType.FLOAT32), null), null));
    assertEquals("tokens of document 'd1' are FLOAT32; expected BFLOAT16 like the documents before it (a batch"
        + " holds one type: the queries of a top-k or scan job are one batch; convert the column with"
        + " TokenColumns.encode)", e.getMessage());
    assertEquals(DType.FLOAT32, CellChunk.statedType(unsafe("d1", TokenCodec.encode(tokens(new Random(6), 2, 8),
        DType.FLOAT32), null)));
    assertEquals(DType.INT8, CellChunk.statedType(unsafe("d1", TokenCodec.encode(tokens(new Random(6), 2, 8),
        DType.INT8), null)));
    e = assertThrows(IllegalArgumentException.class, () -> new CellChunk(100, 1L << 26, 8).add("d2",
        unsafe("d2", TokenCodec.encode(tokens(new Random(7), 2, 6), DType.BFLOAT16), null), null));
    assertEquals("tokens of document 'd2' have d = 6; expected d = 8 like the queries", e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> chunk.add("d3", unsafe("d3", new byte[] {1, 2, 3}, null), null));
    assertTrue(e.getMessage().startsWith("tokens of document 'd3' is 3 bytes long and does not start with a maxsim4j"),
        e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> chunk.add("d4", unsafe("d4", null, null), null));
    assertTrue(e.getMessage().startsWith("tokens of document 'd4' is null"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> chunk.add("d5", unsafe("d5", bf16, new boolean[1]),
        unsafe("d5", bf16, new boolean[1]).getArray(2)));
    assertEquals("mask of document 'd5' has 1 flags; expected array<boolean> with one flag per token (2)",
        e.getMessage());
    assertEquals(1, chunk.rows());
  }

  @Test
  void aReleasedBufferServesTheThreadsNextChunkWhichReadsOnlyItsOwnDocuments() throws Exception {
    Random r = new Random(8);
    CellChunk first = new CellChunk(100, 1L << 26, 16);
    for (int i = 0; i < 5; i++) {
      assertTrue(first.add("a" + i, unsafe("a" + i, TokenCodec.encode(tokens(r, 6, 16), DType.BFLOAT16), null),
          null));
    }
    Object buffer = first.buffer();
    first.release();
    assertEquals(0, first.rows());

    // fewer, shorter documents than the buffer held: the stale tail must not show through
    TokenRows want = new TokenRows("document");
    CellChunk next = new CellChunk(100, 1L << 26, 16);
    for (int i = 0; i < 2; i++) {
      byte[] cell = TokenCodec.encode(tokens(r, 3, 16), DType.BFLOAT16);
      want.add("b" + i, cell, null);
      assertTrue(next.add("b" + i, unsafe("b" + i, cell, null), null));
    }
    TokenBatch got = next.batch(16);
    assertSame(want.pack(16).toBatch(), got, "the next chunk");
    assertTrue(buffer == next.buffer(), "the next chunk took the released buffer");
    next.release();

    // a chunk of another array kind, or on another thread, gets a buffer of its own and leaves this one be
    CellChunk floats = new CellChunk(100, 1L << 26, 16);
    assertTrue(floats.add("f", unsafe("f", TokenCodec.encode(tokens(r, 2, 16), DType.FLOAT32), null), null));
    assertTrue(floats.buffer() instanceof float[]);
    Object[] other = new Object[1];
    Thread thread = new Thread(() -> {
      CellChunk elsewhere = new CellChunk(100, 1L << 26, 16);
      elsewhere.add("c", unsafe("c", TokenCodec.encode(tokens(new Random(9), 3, 16), DType.BFLOAT16), null), null);
      other[0] = elsewhere.buffer();
    });
    thread.start();
    thread.join();
    assertTrue(other[0] instanceof short[] && other[0] != buffer);
    CellChunk last = new CellChunk(100, 1L << 26, 16);
    assertTrue(last.add("e", unsafe("e", TokenCodec.encode(tokens(r, 1, 16), DType.BFLOAT16), null), null));
    assertTrue(buffer == last.buffer());
  }

  @Test
  void chunksOfTwoHalfTypesInOnePartitionNeverShareTheReleasedBuffer() {
    Random r = new Random(10);
    CellChunk before = new CellChunk(100, 1L << 26, 16);
    assertTrue(before.add("p", unsafe("p", TokenCodec.encode(tokens(r, 4, 16), DType.BFLOAT16), null), null));
    Object spare = before.buffer();
    before.release();
    // a partition of bf16 and fp16 cells holds a chunk of each at once, both over short[] buffers
    CellChunk bf16 = new CellChunk(100, 1L << 26, 16);
    CellChunk fp16 = new CellChunk(100, 1L << 26, 16);
    TokenRows wantBf16 = new TokenRows("document");
    TokenRows wantFp16 = new TokenRows("document");
    for (int i = 0; i < 3; i++) {
      byte[] b = TokenCodec.encode(tokens(r, 2 + i, 16), DType.BFLOAT16);
      byte[] h = TokenCodec.encode(tokens(r, 3 + i, 16), DType.FLOAT16);
      wantBf16.add("b" + i, b, null);
      wantFp16.add("h" + i, h, null);
      assertTrue(bf16.add("b" + i, unsafe("b" + i, b, null), null));
      assertTrue(fp16.add("h" + i, unsafe("h" + i, h, null), null));
    }
    assertTrue(bf16.buffer() == spare && fp16.buffer() != spare, "one of them took the spare, the other its own");
    assertSame(wantBf16.pack(16).toBatch(), bf16.batch(16), "bf16 beside fp16");
    assertSame(wantFp16.pack(16).toBatch(), fp16.batch(16), "fp16 beside bf16");
  }

  @Test
  void aBufferOneDocumentTookPastTheBoundIsNotKeptAndLeavesTheSpareBe() {
    Random r = new Random(11);
    CellChunk small = new CellChunk(100, 1L << 26, 128);
    assertTrue(small.add("s", unsafe("s", TokenCodec.encode(tokens(r, 2, 128), DType.FLOAT32), null), null));
    Object spare = small.buffer();
    small.release();
    // one document of more than BUFFER_BYTES: too large for the spare, and too large to keep
    int length = (int) (CellChunk.BUFFER_BYTES / (128 * 4)) + 1;
    CellChunk large = new CellChunk(100, 1L << 26, 128);
    assertTrue(large.add("l", unsafe("l", TokenCodec.encode(new float[length][128], DType.FLOAT32), null), null));
    Object big = large.buffer();
    assertTrue(big != spare);
    large.release();
    CellChunk next = new CellChunk(100, 1L << 26, 128);
    assertTrue(next.add("n", unsafe("n", TokenCodec.encode(tokens(r, 1, 128), DType.FLOAT32), null), null));
    assertTrue(next.buffer() == spare, "the small spare, not the large buffer");
  }
}
