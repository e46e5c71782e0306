package dev.maxsim4j.lucene;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Locale;
import org.apache.lucene.document.BinaryDocValuesField;
import org.apache.lucene.util.BytesRef;

/**
 * A document's token vectors stored compressed in a binary doc-values field: int8, fp8 (e4m3) or one bit per
 * dimension, each token with an fp32 scale (value = scale x q, see {@link DType}). A quarter of
 * {@code LateInteractionField}'s bytes for int8 and fp8 at d = 128, a twenty-fifth for bits. Rescore with
 * {@link MaxSimRescorer#createQuantized}, which scores the stored bytes as they are.
 *
 * <p>The value's byte layout (little-endian):
 * <pre>
 *   offset 0    1 byte    layout version, {@value #VERSION}
 *   offset 1    1 byte    type: 1 = INT8, 2 = FLOAT8_E4M3, 3 = BINARY
 *   offset 2    int32     d, dimensions per token (bits for BINARY)
 *   offset 6    int32     T, the number of tokens
 *   offset 10   T x B     the tokens, B = type.bytesPerToken(d) bytes each (BINARY: NumPy packbits order)
 *   then        T x fp32  the tokens' scales
 * </pre>
 */
public final class QuantizedLateInteractionField extends BinaryDocValuesField {
  /** The layout version this class writes and reads. */
  public static final int VERSION = 1;
  /** Bytes before the tokens. */
  static final int HEADER = 10;
  private static final ValueLayout.OfInt INT_LE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfFloat FLOAT_LE =
      ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  /** The tokens of {@code vectors} ({@code [tokens][d]}) quantized to {@code type} as {@link TokenBatch#quantize}. */
  public QuantizedLateInteractionField(String name, float[][] vectors, DType type) {
    super(name, encode(vectors, type));
  }

  /** Tokens already quantized: {@code tokens} is one row of a quantized batch. */
  public QuantizedLateInteractionField(String name, TokenBatch tokens) {
    super(name, encode(tokens));
  }

  /** The stored value of {@code vectors} ({@code [tokens][d]}, at least one token) quantized to {@code type}. */
  public static BytesRef encode(float[][] vectors, DType type) {
    Arguments.nonNull(type, "type");
    vectors = Arguments.copyRows(vectors); // checked and quantized as read once: the caller's could change meanwhile
    if (vectors == null || vectors.length == 0) {
      throw new IllegalArgumentException("vectors is " + (vectors == null ? "null" : "empty")
          + "; expected [tokens][d] with at least one token (encode(type, data, scales, 0, d) stores none)");
    }
    requireQuantized(type);
    // checked here: the batch built from them would name "rows[0][t]" and quantize "stored token t"
    int d = vectors[0] == null ? 0 : vectors[0].length;
    for (int t = 0; t < vectors.length; t++) {
      if (vectors[t] == null || vectors[t].length != d || d == 0) {
        throw new IllegalArgumentException("vectors[" + t + "] " + (vectors[t] == null ? "is null"
            : "has dimension " + vectors[t].length) + "; expected " + (d == 0 ? "d >= 1" : d + " like vectors[0]"));
      }
    }
    Arguments.requireFinite(vectors, "vectors", "quantize to " + type);
    return encode(TokenBatch.of(new float[][][] {vectors}).quantize(type));
  }

  /** The stored value of {@code tokens}, one row of a quantized batch (its valid tokens, in order). */
  public static BytesRef encode(TokenBatch tokens) {
    Arguments.nonNull(tokens, "tokens");
    if (tokens.size() != 1 || !tokens.dtype().isQuantized()) {
      throw new IllegalArgumentException("tokens has " + tokens.size() + " rows of " + tokens.dtype()
          + "; expected one row of INT8, FLOAT8_E4M3 or BINARY");
    }
    int tokenBytes = (int) tokens.dtype().bytesPerToken(tokens.dim());
    byte[] stored = tokens.toByteArray();
    float[] storedScales = tokens.scales();
    int valid = tokens.validTokens(0);
    byte[] data = new byte[Math.multiplyExact(valid, tokenBytes)];
    float[] scales = new float[valid];
    int out = 0;
    // one row: its slot t is stored token t, packed or padded
    for (int t = 0; t < tokens.length(0); t++) {
      if (tokens.isValid(0, t)) {
        if (tokens.dtype() == DType.FLOAT8_E4M3) { // named by the batch's slot, which the caller knows
          for (int k = 0; k < tokenBytes; k++) {
            if ((stored[t * tokenBytes + k] & 0x7f) == 0x7f) {
              throw new IllegalArgumentException("tokens slot " + t + ", dimension " + k + " holds an e4m3 NaN code;"
                  + " expected finite values");
            }
          }
        }
        System.arraycopy(stored, t * tokenBytes, data, out * tokenBytes, tokenBytes);
        scales[out++] = storedScales[t];
      }
    }
    return encode(tokens.dtype(), data, scales, valid, tokens.dim());
  }

  /**
   * The stored value of {@code tokens} tokens of {@code d} dimensions: {@code data} holds
   * {@code tokens x type.bytesPerToken(d)} bytes, {@code scales} one finite scale per token (null: all 1).
   */
  public static BytesRef encode(DType type, byte[] data, float[] scales, int tokens, int d) {
    Arguments.nonNull(type, "type");
    Arguments.nonNull(data, "data");
    requireQuantized(type);
    if (d < 1 || tokens < 0) {
      throw new IllegalArgumentException("tokens = " + tokens + ", d = " + d + "; expected tokens >= 0, d >= 1");
    }
    long tokenBytes = type.bytesPerToken(d);
    long size = HEADER + tokens * (tokenBytes + Float.BYTES);
    if (data.length != tokens * tokenBytes) {
      throw new IllegalArgumentException("data has " + data.length + " bytes; expected tokens x bytesPerToken = "
          + tokens + " x " + tokenBytes);
    }
    if (scales != null && scales.length != tokens) {
      throw new IllegalArgumentException("scales has " + scales.length + " values; expected one per token, " + tokens);
    }
    if (size > Capacity.MAX_ARRAY) {
      throw new IllegalArgumentException(tokens + " tokens of " + tokenBytes + " bytes; expected a value under 2 GB");
    }
    byte[] out = new byte[(int) size];
    MemorySegment value = MemorySegment.ofArray(out);
    out[0] = VERSION;
    out[1] = code(type);
    value.set(INT_LE, 2, d);
    value.set(INT_LE, 6, tokens);
    System.arraycopy(data, 0, out, HEADER, data.length);
    if (type == DType.FLOAT8_E4M3) { // checked in the copy: the caller's array could change meanwhile
      for (int i = 0; i < data.length; i++) {
        // a NaN code would score NaN against every query, ranking its document first
        if ((out[HEADER + i] & 0x7f) == 0x7f) {
          throw new IllegalArgumentException(String.format(Locale.ROOT, "data[%d] = 0x%02x, an e4m3 NaN code (token"
              + " %d, dimension %d); expected finite values", i, out[HEADER + i] & 0xff, i / d, i % d));
        }
      }
    }
    long at = HEADER + data.length;
    for (int t = 0; t < tokens; t++) {
      float s = scales == null ? 1f : scales[t];
      if (!Float.isFinite(s)) {
        throw new IllegalArgumentException("scales[" + t + "] is " + s + "; expected a finite value");
      }
      value.set(FLOAT_LE, at + (long) t * Float.BYTES, s);
    }
    return new BytesRef(out);
  }

  /** The tokens of a stored value as one row of a quantized batch (over a copy of its bytes). */
  public static TokenBatch decode(BytesRef value) {
    Arguments.nonNull(value, "value");
    QuantizedTokenBytes row = new QuantizedTokenBytes().reset("value", header(value, "value").dim());
    row.add(value, -1);
    return row.batch();
  }

  /**
   * A stored value's type, d and token count, checked against its length; {@code what} names it in errors. A value
   * refused that has a LateInteractionField's layout is named as one: read as this layout, its d would be read as the
   * version.
   */
  static Header header(BytesRef value, String what) {
    try {
      return parse(value);
    } catch (IllegalArgumentException e) {
      String floats = floatValue(value);
      throw new IllegalArgumentException(what + ": " + (floats == null ? e.getMessage() : floats
          + ", not a QuantizedLateInteractionField value (" + e.getMessage() + "); rescore it with MaxSimRescorer"
          + ".create"));
    }
  }

  private static Header parse(BytesRef value) {
    if (value.length < HEADER) {
      throw new IllegalArgumentException(value.length + " bytes; expected a "
          + "QuantizedLateInteractionField value (a header of " + HEADER + " bytes)");
    }
    MemorySegment bytes = MemorySegment.ofArray(value.bytes).asSlice(value.offset, value.length);
    int version = value.bytes[value.offset];
    if (version != VERSION) {
      throw new IllegalArgumentException("layout version " + version + "; expected " + VERSION
          + " (a QuantizedLateInteractionField value)");
    }
    DType type = type(value.bytes[value.offset + 1]);
    int d = bytes.get(INT_LE, 2);
    int tokens = bytes.get(INT_LE, 6);
    if (d < 1 || tokens < 0 || value.length != HEADER + tokens * (type.bytesPerToken(d) + Float.BYTES)) {
      throw new IllegalArgumentException(value.length + " bytes for " + tokens + " " + type
          + " tokens of d = " + d + "; expected " + HEADER + " + tokens x (bytesPerToken + 4)");
    }
    return new Header(type, d, tokens);
  }

  /**
   * What a value holds as a QuantizedLateInteractionField value, "a QuantizedLateInteractionField value (T TYPE
   * tokens of d = D)", or null where it is none: the float rescorers name such a value by it.
   */
  static String quantizedValue(BytesRef value) {
    try {
      Header h = parse(value);
      return "a QuantizedLateInteractionField value (" + h.tokens() + " " + h.type() + " tokens of d = " + h.dim()
          + ")";
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** What a value holds as a LateInteractionField value (an int d >= 1, then whole tokens), or null where none. */
  static String floatValue(BytesRef value) {
    if (value.length < Integer.BYTES) {
      return null;
    }
    int d = MemorySegment.ofArray(value.bytes).get(INT_LE, value.offset);
    long floats = value.length - Integer.BYTES;
    if (d < 1 || floats % ((long) Float.BYTES * d) != 0) {
      return null;
    }
    return "a LateInteractionField value (" + floats / ((long) Float.BYTES * d) + " float tokens of d = " + d + ")";
  }

  record Header(DType type, int dim, int tokens) {}

  /**
   * The type a stored value states, read without checking the rest of it (a rescorer groups hits by it per hit);
   * null where its first bytes are no version-{@value #VERSION} header, which {@link #header} then names.
   */
  static DType statedType(BytesRef value) {
    if (value.length < HEADER || value.bytes[value.offset] != VERSION) {
      return null;
    }
    return typeOf(value.bytes[value.offset + 1]);
  }

  private static byte code(DType type) {
    return switch (type) {
      case INT8 -> 1;
      case FLOAT8_E4M3 -> 2;
      case BINARY -> 3;
      default -> throw new IllegalArgumentException("type is " + type + "; expected INT8, FLOAT8_E4M3 or BINARY");
    };
  }

  private static DType type(byte code) {
    DType type = typeOf(code);
    if (type == null) {
      throw new IllegalArgumentException("type code " + code + "; expected 1 (INT8), 2 (FLOAT8_E4M3) or 3 (BINARY)");
    }
    return type;
  }

  /** The type of a stored type code; null for none. */
  private static DType typeOf(byte code) {
    return switch (code) {
      case 1 -> DType.INT8;
      case 2 -> DType.FLOAT8_E4M3;
      case 3 -> DType.BINARY;
      default -> null;
    };
  }

  private static void requireQuantized(DType type) {
    if (!type.isQuantized()) {
      throw new IllegalArgumentException("type is " + type + "; expected INT8, FLOAT8_E4M3 or BINARY");
    }
  }
}
