package dev.maxsim4j.spark;

import dev.maxsim4j.DType;
import java.util.Arrays;
import java.util.List;

/**
 * Collects the token cells of many rows, {@code array<array<float>>} or {@link TokenCodec} {@code binary}, into
 * one packed batch of one type, so that a partition is scored in a few fused calls. Errors name the row's id.
 */
final class TokenRows {
  private final String role;
  private DType type;
  private int dim;
  private int[] offsets = new int[17];
  private int rows;
  private int tokens;
  private float[] floats = new float[0];
  private short[] halfs = new short[0];
  private byte[] bytes = new byte[0];
  private float[] scales = new float[0];
  private boolean[] mask;
  private int used; // elements of floats/halfs, or bytes of bytes, in use

  /** {@code role} names the rows in errors: "query" or "document". */
  TokenRows(String role) {
    this.role = role;
  }

  int rows() {
    return rows;
  }

  int tokens() {
    return tokens;
  }

  /** d of the rows so far; 0 while none held a token. */
  int dim() {
    return dim;
  }

  void clear() {
    rows = 0;
    tokens = 0;
    used = 0;
    mask = null;
    type = null;
    dim = 0;
  }

  /**
   * Adds one row: {@code cell} is a Spark {@code array<array<float>>} value or a {@link TokenCodec} cell;
   * {@code maskCell}, when not null, an {@code array<boolean>} with one flag per token.
   */
  void add(Object id, Object cell, Object maskCell) {
    String what = "tokens of " + role + " '" + id + "'";
    int before = tokens;
    if (cell instanceof byte[] b) {
      addCell(TokenCodec.read(b, what), what);
    } else if (cell instanceof scala.collection.Seq<?> seq) {
      addArrays(seq, what);
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
    DType t = type == null ? DType.FLOAT32 : type;
    int d = dim == 0 ? fallbackDim : dim;
    int[] off = Arrays.copyOf(offsets, rows + 1);
    boolean[] m = mask == null ? null : Arrays.copyOf(mask, tokens);
    return switch (t) {
      case FLOAT32 -> new PackedTokens(t, d, off, Arrays.copyOf(floats, used), null, null, null, m);
      case FLOAT16, BFLOAT16 -> new PackedTokens(t, d, off, null, Arrays.copyOf(halfs, used), null, null, m);
      default -> new PackedTokens(t, d, off, null, null, Arrays.copyOf(bytes, used),
          Arrays.copyOf(scales, tokens), m);
    };
  }

  private void addCell(TokenCodec.Cell c, String what) {
    if (c.length() == 0) {
      return;
    }
    accept(c.type(), c.dim(), what);
    byte[] b = c.bytes();
    int at = c.payloadOffset();
    var in = java.nio.ByteBuffer.wrap(b).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    int n = c.length();
    if (c.type().isQuantized()) {
      int perToken = (int) c.type().bytesPerToken(c.dim());
      scales = grow(scales, tokens + n);
      in.position(at).asFloatBuffer().get(scales, tokens, n);
      bytes = grow(bytes, used + n * perToken);
      System.arraycopy(b, at + 4 * n, bytes, used, n * perToken);
      used += n * perToken;
    } else if (c.type() == DType.FLOAT32) {
      floats = grow(floats, used + n * dim);
      in.position(at).asFloatBuffer().get(floats, used, n * dim);
      used += n * dim;
    } else {
      halfs = grow(halfs, used + n * dim);
      in.position(at).asShortBuffer().get(halfs, used, n * dim);
      used += n * dim;
    }
    tokens = Math.addExact(tokens, n);
  }

  private void addArrays(scala.collection.Seq<?> seq, String what) {
    int n = seq.length();
    for (int t = 0; t < n; t++) {
      Object token = seq.apply(t);
      if (!(token instanceof scala.collection.Seq<?> values)) {
        throw new IllegalArgumentException(what + ": token " + t + " is " + (token == null ? "null" : "a "
            + token.getClass().getName()) + "; expected array<float>");
      }
      int d = values.length();
      if (d == 0) {
        throw new IllegalArgumentException(what + ": token " + t + " has no element; expected d >= 1");
      }
      accept(DType.FLOAT32, d, what);
      floats = grow(floats, used + d);
      for (int k = 0; k < d; k++) {
        Object v = values.apply(k);
        if (!(v instanceof Float f)) {
          throw new IllegalArgumentException(what + ": token " + t + " element " + k + " is "
              + (v == null ? "null" : v.getClass().getName()) + "; expected a float");
        }
        floats[used++] = f;
      }
      tokens = Math.addExact(tokens, 1);
    }
  }

  private void addMask(Object maskCell, int rowTokens, String what) {
    List<?> flags = maskCell instanceof scala.collection.Seq<?> s ? scala.jdk.javaapi.CollectionConverters.asJava(s)
        : null;
    if (flags == null || flags.size() != rowTokens) {
      throw new IllegalArgumentException("mask of " + what.substring("tokens of ".length()) + " has "
          + (flags == null ? "type " + maskCell.getClass().getName() : flags.size() + " flags")
          + "; expected array<boolean> with one flag per token (" + rowTokens + ")");
    }
    if (mask == null) {
      mask = new boolean[Math.max(16, tokens)];
      Arrays.fill(mask, 0, tokens - rowTokens, true);
    }
    mask = grow(mask, tokens);
    int at = tokens - rowTokens;
    for (int t = 0; t < rowTokens; t++) {
      Object f = flags.get(t);
      if (!(f instanceof Boolean valid)) {
        throw new IllegalArgumentException("mask of " + what.substring("tokens of ".length()) + " has " + f
            + " at token " + t + "; expected true or false");
      }
      mask[at + t] = valid;
    }
  }

  /** All rows of one batch must share a type and d. */
  private void accept(DType t, int d, String what) {
    if (type == null) {
      type = t;
      dim = d;
      return;
    }
    if (t != type) {
      throw new IllegalArgumentException(what + " are " + t + "; expected " + type + " like the " + role
          + "s before it (a column holds one type; convert it with TokenColumns.encode)");
    }
    if (d != dim) {
      throw new IllegalArgumentException(what + " have d = " + d + "; expected d = " + dim + " like the " + role
          + "s before it");
    }
  }

  private static float[] grow(float[] a, int n) {
    return n <= a.length ? a : Arrays.copyOf(a, Math.max(n, a.length * 2));
  }

  private static short[] grow(short[] a, int n) {
    return n <= a.length ? a : Arrays.copyOf(a, Math.max(n, a.length * 2));
  }

  private static byte[] grow(byte[] a, int n) {
    return n <= a.length ? a : Arrays.copyOf(a, Math.max(n, a.length * 2));
  }

  private static boolean[] grow(boolean[] a, int n) {
    return n <= a.length ? a : Arrays.copyOf(a, Math.max(n, a.length * 2));
  }
}
