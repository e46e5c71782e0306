package dev.maxsim4j.spark;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The compact {@code binary} column: one document's tokens in {@link DType#BFLOAT16} (or any other
 * {@link DType}) with a header that states its type, dimension and token count, so a cell can be checked and
 * read on its own. Little-endian throughout:
 *
 * <pre>
 * byte 0       0x6D ('m'), marks a maxsim4j token cell
 * byte 1       type: 0 FLOAT32, 1 FLOAT16, 2 BFLOAT16, 3 INT8, 4 FLOAT8_E4M3, 5 BINARY
 * bytes 2-5    d, int32 (0 only for a cell with no token)
 * bytes 6-9    L, the token count, int32
 * then         FLOAT32/FLOAT16/BFLOAT16: L x d elements, row-major (4 or 2 bytes each)
 *              INT8/FLOAT8_E4M3/BINARY: L fp32 scales, then L x type.bytesPerToken(d) bytes
 * </pre>
 *
 * <p>A cell is exactly {@link #HEADER_BYTES} plus its payload; any other length is an error. bf16 takes 2 bytes
 * per element against the 4 of {@code array<array<float>>} (plus Spark's per-array headers), int8 and fp8 1,
 * binary 1/8, each quantized token with a 4-byte scale.
 */
public final class TokenCodec {
  /** Bytes before the payload. */
  public static final int HEADER_BYTES = 10;
  /** The longest Java array the JVM reliably allocates. */
  private static final int MAX_ARRAY = Integer.MAX_VALUE - 8;
  static final byte MARK = 0x6D;
  private static final DType[] CODES = {DType.FLOAT32, DType.FLOAT16, DType.BFLOAT16, DType.INT8,
      DType.FLOAT8_E4M3, DType.BINARY};

  /** A cell's header and payload are little-endian on every platform. */
  static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  private TokenCodec() {}

  /**
   * Encodes {@code tokens [L][d]} in {@code type}: half types round to nearest even (a finite value that would
   * round to infinity is refused), quantized types use {@link TokenBatch#quantize}'s per-token scales (a NaN or an
   * infinity, which they cannot store, is refused).
   * {@code L = 0} is allowed (an empty document).
   */
  public static byte[] encode(float[][] tokens, DType type) {
    if (tokens == null) {
      throw new IllegalArgumentException("tokens is null; expected [L][d] floats");
    }
    if (type == null) {
      throw new IllegalArgumentException("type is null; expected a DType such as BFLOAT16");
    }
    if (tokens.length == 0) {
      return header(type, 0, 0, 0).array();
    }
    TokenBatch batch = TokenBatch.ofQuery(tokens);
    int length = tokens.length;
    int dim = batch.dim();
    if (type.isQuantized()) {
      requireFinite(tokens, type);
      TokenBatch q = batch.quantize(type);
      byte[] data = q.toByteArray();
      float[] scales = q.scales();
      ByteBuffer out = header(type, dim, length, 4L * length + data.length);
      for (float s : scales) {
        out.putFloat(s);
      }
      return out.put(data).array();
    }
    float[] values = batch.toFloatArray();
    ByteBuffer out = header(type, dim, length, (long) values.length * type.byteSize());
    if (type == DType.FLOAT32) {
      out.asFloatBuffer().put(values);
    } else {
      out.asShortBuffer().put(narrowInRange(values, type, dim));
    }
    return out.array();
  }

  /** A quantized type stores no NaN or infinity: one is named as the half types name a value out of range. */
  private static void requireFinite(float[][] tokens, DType type) {
    for (int t = 0; t < tokens.length; t++) {
      for (int k = 0; k < tokens[t].length; k++) {
        if (!Float.isFinite(tokens[t][k])) {
          throw new IllegalArgumentException("tokens[" + t + "][" + k + "] = " + tokens[t][k] + "; expected finite"
              + " values to quantize to " + type + " (FLOAT32, BFLOAT16 and FLOAT16 keep NaN and infinities)");
        }
      }
    }
  }

  /**
   * {@code values} rounded to a half type; a finite value beyond its range is refused, since it would be stored
   * as infinity and score as one.
   */
  private static short[] narrowInRange(float[] values, DType type, int dim) {
    short[] bits = type.narrow(values);
    for (int i = 0; i < values.length; i++) {
      if (Float.isFinite(values[i]) && Float.isInfinite(type.widen(bits[i]))) {
        float largest = type.widen((short) (type.narrow(Float.POSITIVE_INFINITY) - 1));
        throw new IllegalArgumentException("tokens[" + i / dim + "][" + i % dim + "] = " + values[i]
            + " rounds to infinity in " + type + ", whose largest finite value is " + largest
            + "; expected values within its range (scale the tokens, or encode FLOAT32)");
      }
    }
    return bits;
  }

  /**
   * Decodes a cell to {@code [L][d]} fp32 values (dequantized for the quantized types); a cell whose rows would pass
   * one Java array, or whose floats the heap has no room for beside the cell, is refused by its sizes.
   */
  public static float[][] decode(byte[] cell) {
    Cell c = read(cell, "cell");
    if (c.length() == 0) {
      return new float[0][]; // no row is made, whatever d the header states
    }
    // a row's array and its reference beside the d floats: a 1-bit or int8 cell decodes to 32 or 4 times its size
    long bytes = c.length() * (4L * c.dim() + 24);
    long heap = Runtime.getRuntime().maxMemory();
    // beside the cell and the copy of it decoding reads, with an eighth of the heap for the JVM around them (a share
    // of the heap's size, not of what is free now, so that a cell is refused alike in every run)
    long room = heap - 2L * cell.length - heap / 8;
    if (c.dim() > MAX_ARRAY || bytes > room) {
      throw new IllegalArgumentException("cell holds " + c.type() + " tokens of L x d = " + c.length() + " x "
          + c.dim() + ", whose float[L][d] takes " + bytes + " bytes" + (c.dim() > MAX_ARRAY ? " in rows past one"
          + " Java array (" + MAX_ARRAY + " elements)" : ", more than this JVM's heap (" + heap + " bytes, -Xmx) has"
          + " room for beside the cell, its copy and an eighth of the heap (" + room + " bytes)")
          + "; expected a smaller cell, or score it as it is (the maxsim function and SparkMaxSim read cells"
          + " without decoding them)");
    }
    float[][] out = new float[c.length()][c.dim()];
    TokenBatch one = c.toBatch();
    for (int t = 0; t < c.length(); t++) {
      for (int k = 0; k < c.dim(); k++) {
        out[t][k] = one.get(0, t, k);
      }
    }
    return out;
  }

  /** The type a cell holds. */
  public static DType type(byte[] cell) {
    return read(cell, "cell").type();
  }

  /**
   * The type a cell states: its header's for a binary cell, FLOAT32 for {@code array<array<float>>}, and FLOAT32
   * too for a cell too short or unmarked to state one (reading it then says what is wrong). Calls group documents
   * by it, since a batch holds one type and a column's rows may differ.
   */
  static DType statedType(Object cell) {
    return cell instanceof byte[] b && b.length >= HEADER_BYTES ? statedType(b[0], b[1]) : DType.FLOAT32;
  }

  /**
   * The d a cell states: its header's for a binary cell, its first token's length for {@code array<array<float>>}
   * (a Row's value or Spark's internal one), and 0 for a cell of no token or one too short or malformed to state
   * it (reading it then says what is wrong). Documents of queries of no token are batched by it.
   */
  static int statedDim(Object cell) {
    if (cell instanceof byte[] b) {
      return statedDim(MemorySegment.ofArray(b));
    }
    if (cell instanceof scala.collection.Seq<?> s) {
      return s.nonEmpty() && s.apply(0) instanceof scala.collection.Seq<?> first ? first.length() : 0;
    }
    if (cell instanceof org.apache.spark.sql.catalyst.util.ArrayData a) {
      return a.numElements() > 0 && !a.isNullAt(0) ? a.getArray(0).numElements() : 0;
    }
    return 0;
  }

  /** The d a binary cell in {@code cell} states, as above. */
  static int statedDim(MemorySegment cell) {
    return cell.byteSize() >= HEADER_BYTES && cell.get(ValueLayout.JAVA_BYTE, 0) == MARK ? cell.get(INT, 2) : 0;
  }

  /** The type a cell whose first two bytes are {@code mark} and {@code code} states, as above. */
  static DType statedType(byte mark, byte code) {
    return mark == MARK && code >= 0 && code < CODES.length ? CODES[code] : DType.FLOAT32;
  }

  /** A checked view of one cell; {@code what} names it in errors (e.g. "tokens of document 'd7'"). */
  static Cell read(byte[] cell, String what) {
    if (cell == null) {
      throw new IllegalArgumentException(what + " is null; expected a maxsim4j token cell");
    }
    Header h = header(MemorySegment.ofArray(cell), what);
    return new Cell(h.type(), h.dim(), h.length(), cell);
  }

  /**
   * The type, d and token count of the cell in {@code cell} (wherever it lies: a row of Spark's, a byte array),
   * checked against its size and, for a quantized type, its scales.
   */
  static Header header(MemorySegment cell, String what) {
    long size = cell.byteSize();
    if (size < HEADER_BYTES || cell.get(ValueLayout.JAVA_BYTE, 0) != MARK) {
      throw new IllegalArgumentException(what + " is " + bytes(size) + " long and does not start with a maxsim4j"
          + " token header; expected a cell written by TokenCodec.encode or maxsim_encode");
    }
    int code = cell.get(ValueLayout.JAVA_BYTE, 1);
    if (code < 0 || code >= CODES.length) {
      throw new IllegalArgumentException(what + " has type code " + code + "; expected 0.." + (CODES.length - 1));
    }
    DType type = CODES[code];
    int dim = cell.get(INT, 2);
    int length = cell.get(INT, 6);
    if (dim < 0 || length < 0 || dim == 0 && length > 0) {
      throw new IllegalArgumentException(what + " has d = " + dim + " and L = " + length
          + "; expected d >= 1 (or d = 0 with L = 0) and L >= 0");
    }
    long expected = HEADER_BYTES + payloadBytes(type, dim, length);
    if (size != expected) {
      throw new IllegalArgumentException(what + " is " + bytes(size) + "; expected " + expected + " for L = "
          + length + " tokens of d = " + dim + " in " + type);
    }
    if (type.isQuantized()) {
      checkScales(cell, length, what);
    }
    return new Header(type, dim, length);
  }

  /** A scale that is not finite would fail the whole batch later without naming the row, or score NaN. */
  private static void checkScales(MemorySegment cell, int length, String what) {
    for (int t = 0; t < length; t++) {
      float scale = cell.get(FLOAT, HEADER_BYTES + 4L * t);
      if (!Float.isFinite(scale)) {
        throw new IllegalArgumentException(what + " has scale " + scale + " at token " + t
            + "; expected a finite scale");
      }
    }
  }

  private static long payloadBytes(DType type, int dim, int length) {
    return type.isQuantized() ? length * (4 + type.bytesPerToken(dim)) : (long) length * dim * type.byteSize();
  }

  private static ByteBuffer header(DType type, int dim, int length, long payload) {
    long size = HEADER_BYTES + payload;
    if (size > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("tokens [" + length + "][" + dim + "] in " + type + " take " + size
          + " bytes; expected a cell below 2^31 bytes");
    }
    ByteBuffer out = ByteBuffer.allocate((int) size).order(ByteOrder.LITTLE_ENDIAN);
    int code = java.util.Arrays.asList(CODES).indexOf(type);
    return out.put(MARK).put((byte) code).putInt(dim).putInt(length);
  }

  /** What a cell's header states, checked. */
  record Header(DType type, int dim, int length) {}

  /** A checked cell: its type, d, token count and bytes. */
  record Cell(DType type, int dim, int length, byte[] bytes) {
    /** Offset of the first scale (quantized) or element (float types). */
    int payloadOffset() {
      return HEADER_BYTES;
    }

    /** The cell as a one-row batch. */
    TokenBatch toBatch() {
      ByteBuffer in = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).position(HEADER_BYTES);
      if (type.isQuantized()) {
        float[] scales = new float[length];
        in.asFloatBuffer().get(scales);
        byte[] data = java.util.Arrays.copyOfRange(bytes, HEADER_BYTES + 4 * length, bytes.length);
        return TokenBatch.ofBytes(type, data, scales, 1, length, dim);
      }
      if (type == DType.FLOAT32) {
        float[] values = new float[length * dim];
        in.asFloatBuffer().get(values);
        return TokenBatch.ofFloats(values, 1, length, dim);
      }
      short[] bits = new short[length * dim];
      in.asShortBuffer().get(bits);
      return TokenBatch.ofHalfs(type, bits, 1, length, dim);
    }
  }

  /** {@code n} bytes, in words ("1 byte", "3 bytes"). */
  private static String bytes(long n) {
    return n + (n == 1 ? " byte" : " bytes");
  }
}
