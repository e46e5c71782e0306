package dev.maxsim4j.spark;

import dev.maxsim4j.DType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.catalyst.util.ArrayData;

/**
 * Collects the token cells of many rows, {@code array<array<float>>} (as a {@code Row} or Spark's internal rows
 * hold it) or {@link TokenCodec} {@code binary}, into
 * one packed batch of one type, so that a partition is scored in a few fused calls. A binary cell is kept as it
 * comes, an array cell as a float array per row, and all are copied into arrays of the exact size when the batch is
 * packed. Errors name the row's id.
 */
final class TokenRows {
  private final TokenShape shape;
  private final List<Object> pending = new ArrayList<>(); // per row: a TokenCodec.Cell or the row's float[]
  private int[] offsets = new int[17];
  private int rows;
  private int tokens;
  private boolean[] mask;

  /** {@code role} names the rows in errors: "query" or "document". */
  TokenRows(String role) {
    this.shape = new TokenShape(role);
  }

  int rows() {
    return rows;
  }

  int tokens() {
    return tokens;
  }

  /** d of the rows so far; 0 while none held a token. */
  int dim() {
    return shape.dim();
  }

  /**
   * Rows must have d = {@code d} ({@code 0}: any), as {@code of} has, e.g. "the queries": a row of another d
   * is an error naming it, rather than a mismatch of two whole batches. Kept by {@link #clear}.
   */
  void expectDim(int d, String of) {
    shape.expectDim(d, of);
  }

  void clear() {
    pending.clear();
    rows = 0;
    tokens = 0;
    mask = null;
    shape.reset();
  }

  /**
   * Adds one row: {@code cell} is a Spark {@code array<array<float>>} value or a {@link TokenCodec} cell;
   * {@code maskCell}, when not null, an {@code array<boolean>} with one flag per token.
   */
  void add(Object id, Object cell, Object maskCell) {
    addNamed("tokens of " + shape.role() + " " + IdText.quoted(id), cell, maskCell);
  }

  /** As {@link #add} for a row without an id (a SQL function's argument), named by its role alone. */
  void addUnnamed(Object cell) {
    addNamed("tokens of the " + shape.role(), cell, null);
  }

  private void addNamed(String what, Object cell, Object maskCell) {
    int before = tokens;
    if (cell instanceof byte[] b) {
      TokenCodec.Cell c = TokenCodec.read(b, what);
      if (c.length() > 0) {
        shape.accept(c.type(), c.dim(), what);
        pending.add(c);
        tokens = Math.addExact(tokens, c.length());
      }
    } else if (cell instanceof scala.collection.Seq<?> seq) {
      addArrays(seq, what);
    } else if (cell instanceof ArrayData arrays) {
      addArrays(arrays, what);
    } else if (cell == null) {
      throw new IllegalArgumentException(what + " is null; expected its tokens (is the id missing from its table?)");
    } else {
      throw new IllegalArgumentException(what + " is a " + cell.getClass().getName()
          + "; expected array<array<float>> or a binary token cell");
    }
    if (maskCell != null) {
      addMask(maskCell, tokens - before, what);
    } else if (mask != null) {
      mask = grow(mask, tokens);
      Arrays.fill(mask, before, tokens, true);
    }
    if (rows + 2 > offsets.length) {
      offsets = Arrays.copyOf(offsets, offsets.length * 2);
    }
    offsets[++rows] = tokens;
  }

  /** The rows so far; {@code fallbackDim} is d when no row held a token (any d scores such rows alike). */
  PackedTokens pack(int fallbackDim) {
    DType t = shape.type() == null ? DType.FLOAT32 : shape.type();
    int d = shape.dim() == 0 ? fallbackDim : shape.dim();
    int[] off = Arrays.copyOf(offsets, rows + 1);
    boolean[] m = mask == null ? null : Arrays.copyOf(mask, tokens);
    if (t.isQuantized()) {
      int perToken = Math.toIntExact(t.bytesPerToken(d));
      byte[] bytes = new byte[Math.multiplyExact(tokens, perToken)];
      float[] scales = new float[tokens];
      int at = 0;
      for (Object row : pending) {
        TokenCodec.Cell c = (TokenCodec.Cell) row;
        payload(c).asFloatBuffer().get(scales, at, c.length());
        System.arraycopy(c.bytes(), c.payloadOffset() + 4 * c.length(), bytes,
            at * perToken, c.length() * perToken);
        at += c.length();
      }
      return new PackedTokens(t, d, off, null, null, bytes, scales, m);
    }
    int elements = Math.multiplyExact(tokens, d);
    if (t == DType.FLOAT32) {
      float[] floats = new float[elements];
      int at = 0;
      for (Object row : pending) {
        if (row instanceof float[] values) {
          System.arraycopy(values, 0, floats, at, values.length);
          at += values.length;
        } else {
          TokenCodec.Cell c = (TokenCodec.Cell) row;
          payload(c).asFloatBuffer().get(floats, at, c.length() * d);
          at += c.length() * d;
        }
      }
      return new PackedTokens(t, d, off, floats, null, null, null, m);
    }
    short[] halfs = new short[elements];
    int at = 0;
    for (Object row : pending) {
      TokenCodec.Cell c = (TokenCodec.Cell) row;
      payload(c).asShortBuffer().get(halfs, at, c.length() * d);
      at += c.length() * d;
    }
    return new PackedTokens(t, d, off, null, halfs, null, null, m);
  }

  private static ByteBuffer payload(TokenCodec.Cell c) {
    return ByteBuffer.wrap(c.bytes()).order(ByteOrder.LITTLE_ENDIAN).position(c.payloadOffset());
  }

  private void addArrays(scala.collection.Seq<?> seq, String what) {
    int n = seq.length();
    if (n == 0) {
      return;
    }
    float[] values = null;
    for (int t = 0; t < n; t++) {
      Object token = seq.apply(t);
      if (!(token instanceof scala.collection.Seq<?> elements)) {
        throw new IllegalArgumentException(what + ": token " + t + " is " + (token == null ? "null" : "a "
            + token.getClass().getName()) + "; expected array<float>");
      }
      int d = elements.length();
      checkTokenDim(d, values == null ? d : values.length / n, t, what);
      shape.accept(DType.FLOAT32, d, what);
      if (values == null) {
        values = new float[Math.multiplyExact(n, d)];
      }
      for (int k = 0; k < d; k++) {
        Object v = elements.apply(k);
        if (!(v instanceof Float f)) {
          throw new IllegalArgumentException(what + ": token " + t + " element " + k + " is "
              + (v == null ? "null" : "a " + v.getClass().getName()) + "; expected a float" + Cells.castHint(v));
        }
        values[t * d + k] = f;
      }
    }
    pending.add(values);
    tokens = Math.addExact(tokens, n);
  }

  /** The same from Spark's internal rows, which hold the floats unboxed. */
  private void addArrays(ArrayData arrays, String what) {
    int n = arrays.numElements();
    if (n == 0) {
      return;
    }
    float[] values = null;
    for (int t = 0; t < n; t++) {
      if (arrays.isNullAt(t)) {
        throw new IllegalArgumentException(what + ": token " + t + " is null; expected array<float>");
      }
      ArrayData token = arrays.getArray(t);
      int d = token.numElements();
      checkTokenDim(d, values == null ? d : values.length / n, t, what);
      shape.accept(DType.FLOAT32, d, what);
      for (int k = 0; k < d; k++) {
        if (token.isNullAt(k)) {
          throw new IllegalArgumentException(what + ": token " + t + " element " + k + " is null; expected a float");
        }
      }
      if (values == null) {
        values = new float[Math.multiplyExact(n, d)];
      }
      System.arraycopy(token.toFloatArray(), 0, values, t * d, d);
    }
    pending.add(values);
    tokens = Math.addExact(tokens, n);
  }

  /** A token of a row holds {@code rowDim} elements, as its first token does. */
  private static void checkTokenDim(int d, int rowDim, int t, String what) {
    if (d == 0) {
      throw new IllegalArgumentException(what + ": token " + t + " has no element; expected d >= 1");
    }
    if (d != rowDim) {
      throw new IllegalArgumentException(what + ": token " + t + " has d = " + d + "; expected d = " + rowDim
          + " like token 0 of the same row");
    }
  }

  private void addMask(Object maskCell, int rowTokens, String what) {
    int at = tokens - rowTokens;
    if (mask == null) {
      mask = new boolean[Math.max(16, tokens)];
      Arrays.fill(mask, 0, at, true);
    }
    mask = grow(mask, tokens);
    copyMask(maskCell, rowTokens, what, mask, at);
  }

  /**
   * Copies a row's mask cell ({@code array<boolean>} as a Row or Spark's internal rows hold it), one flag per
   * token of the row, into {@code dst[at..]}; any other cell is an error naming the row.
   */
  static void copyMask(Object maskCell, int rowTokens, String what, boolean[] dst, int at) {
    String row = what.substring("tokens of ".length());
    List<?> flags = maskCell instanceof scala.collection.Seq<?> s ? scala.jdk.javaapi.CollectionConverters.asJava(s)
        : maskCell instanceof ArrayData a ? maskFlags(a) : null;
    if (flags == null || flags.size() != rowTokens) {
      throw new IllegalArgumentException("mask of " + row + " has "
          + (flags == null ? "type " + maskCell.getClass().getName() : flags.size() + " flags")
          + "; expected array<boolean> with one flag per token (" + rowTokens + ")");
    }
    for (int t = 0; t < rowTokens; t++) {
      if (!(flags.get(t) instanceof Boolean valid)) {
        throw new IllegalArgumentException("mask of " + row + " has " + flags.get(t) + " at token " + t
            + "; expected true or false");
      }
      dst[at + t] = valid;
    }
  }

  private static List<Boolean> maskFlags(ArrayData a) {
    List<Boolean> flags = new ArrayList<>(a.numElements());
    for (int i = 0; i < a.numElements(); i++) {
      flags.add(a.isNullAt(i) ? null : a.getBoolean(i));
    }
    return flags;
  }

  static boolean[] grow(boolean[] a, int n) {
    return n <= a.length ? a : Arrays.copyOf(a, Math.max(n, a.length * 2));
  }
}
