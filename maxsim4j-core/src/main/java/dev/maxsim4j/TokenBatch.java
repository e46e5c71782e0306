package dev.maxsim4j;

import dev.maxsim4j.internal.Quantization;
import dev.maxsim4j.internal.Tokens;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A batch of token-embedding sets: {@code N} rows, each a sequence of up to {@code L} tokens of dimension
 * {@code d}, in fp32, fp16 or bf16, or quantized (int8, fp8 e4m3 or one bit per dimension, each token with an
 * fp32 scale; see {@link DType}).
 *
 * <p>Two layouts:
 * <ul>
 *   <li><b>padded</b> {@code [N, L, d]}, row-major, with an optional validity mask {@code [N, L]} or per-row
 *       lengths (the first {@code lengths[i]} tokens of row {@code i} are valid);
 *   <li><b>packed</b> {@code [T, d]}: all rows' tokens concatenated, with offsets {@code [N + 1]} (as
 *       {@code cu_seqlens}): row {@code i} is tokens {@code offsets[i] .. offsets[i+1]-1}. A mask over the
 *       {@code T} tokens may be added.
 * </ul>
 *
 * <p>The embedding array or memory is <em>not copied</em>: a batch is a view, and changing the array
 * afterwards changes later scores. Changed while a call reads it, the call still completes (or fails as it would on
 * the values it read, e.g. {@link #quantize} on a NaN), but its results may mix old and new values and match
 * neither. Masks, lengths, offsets and scales are copied. Instances are immutable and thread-safe to share.
 *
 * <p>A quantized batch ({@link #ofBytes}, {@link #packedBytes}, the {@code MemorySegment} factories with a
 * quantized type, or {@link #quantize}) is scored without being expanded in memory, as MaxSim on its dequantized
 * vectors ({@code scale x q}): each product exact, the sums in fp32, so within fp32 rounding of (not bit for bit)
 * the scores of an fp32 copy. It can be scored, ranked and made resident like any batch; training calls take fp32,
 * fp16 or bf16 only.
 */
public final class TokenBatch {
  private final Tokens tokens;

  private TokenBatch(Tokens tokens) {
    this.tokens = tokens;
  }

  Tokens tokens() {
    return tokens;
  }

  // ---------------------------------------------------------------- padded factories

  /** A padded fp32 batch {@code [n, length, dim]} over {@code data} (row-major, {@code n*length*dim}). */
  public static TokenBatch ofFloats(float[] data, int n, int length, int dim) {
    Arguments.nonNull(data, "data");
    BatchChecks.checkPaddedShape("data", data.length, n, length, dim);
    return new TokenBatch(padded(DType.FLOAT32, n, length, dim, data, null, null));
  }

  /** A padded fp16 or bf16 batch {@code [n, length, dim]} over {@code bits} (row-major bit patterns). */
  public static TokenBatch ofHalfs(DType dtype, short[] bits, int n, int length, int dim) {
    Arguments.nonNull(bits, "bits");
    BatchChecks.checkHalf(dtype);
    BatchChecks.checkPaddedShape("bits", bits.length, n, length, dim);
    return new TokenBatch(padded(dtype, n, length, dim, null, bits, null));
  }

  /**
   * A padded quantized batch {@code [n, length, dim]} over {@code data}: {@code dtype.bytesPerToken(dim)} bytes
   * per token, row-major ({@code [n, length, dim]} int8 or e4m3 bytes, {@code [n, length, ceil(dim / 8)]} for
   * {@link DType#BINARY}), with one scale per token {@code [n * length]} or null for scale 1.
   */
  public static TokenBatch ofBytes(DType dtype, byte[] data, float[] scales, int n, int length, int dim) {
    Arguments.nonNull(data, "data");
    BatchChecks.checkQuantized(dtype, "byte[] data");
    BatchChecks.checkPaddedBytes("data", data.length, dtype, n, length, dim);
    return new TokenBatch(paddedTokens(dtype, n, length, dim, null, null, data, null,
        BatchChecks.checkScales(scales, (long) n * length)));
  }

  /**
   * A batch from nested arrays {@code [n][tokens][dim]}, {@code n >= 1}. Rows may have different token counts:
   * then the batch is packed (no padding is stored). Data is copied into one array. A row may hold no token
   * (it scores as an empty document); an empty {@code rows}, a null or a zero-length token is an error. Rows
   * that hold no token at all give no dimension: the batch gets d = 1, and scoring it against queries of another d
   * is refused (build it with that d instead, e.g. {@code ofFloats(new float[0], n, 0, d)}).
   */
  public static TokenBatch of(float[][][] rows) {
    Arguments.nonNull(rows, "rows");
    if (rows.length == 0) {
      throw new IllegalArgumentException("rows is empty; expected at least one row of tokens"
          + " (for an empty batch of known d use ofFloats(new float[0], 0, 0, d))");
    }
    return BatchChecks.bookRows("rows of length " + rows.length, rows.length, () -> copied(rows));
  }

  private static TokenBatch copied(float[][][] given) {
    float[][][] rows = given.clone(); // with each row's array of tokens: checked as copied, the caller's could change
    int dim = -1;
    long total = 0;
    boolean ragged = false;
    for (int i = 0; i < rows.length; i++) {
      if (rows[i] == null) {
        throw new IllegalArgumentException("rows[" + i + "] is null; expected an array of tokens");
      }
      rows[i] = rows[i].clone();
      if (i > 0 && rows[i].length != rows[0].length) {
        ragged = true;
      }
      for (int t = 0; t < rows[i].length; t++) {
        float[] token = rows[i][t];
        if (token == null) {
          throw new IllegalArgumentException("rows[" + i + "][" + t + "] is null; expected a vector");
        }
        if (token.length == 0) {
          throw new IllegalArgumentException("rows[" + i + "][" + t + "] has dimension 0; expected d >= 1");
        }
        if (dim < 0) {
          dim = token.length;
        } else if (token.length != dim) {
          throw new IllegalArgumentException("rows[" + i + "][" + t + "] has dimension " + token.length
              + "; expected " + dim + " like rows' first token");
        }
      }
      total += rows[i].length;
    }
    if (dim < 0) {
      dim = 1; // no token at all gives no dimension: a placeholder, which MaxSim's d check names as such
    }
    float[] data = new float[Arguments.arraySize(total, dim, "rows' tokens x d",
        "use fromMemorySegment or packedFromMemorySegment for larger batches")];
    int[] offsets = new int[rows.length + 1];
    int pos = 0;
    for (int i = 0; i < rows.length; i++) {
      offsets[i] = pos / dim;
      for (float[] token : rows[i]) {
        System.arraycopy(token, 0, data, pos, dim);
        pos += dim;
      }
    }
    offsets[rows.length] = (int) total;
    if (!ragged) {
      return ofFloats(data, rows.length, rows[0].length, dim);
    }
    return packedFloats(data, offsets, dim);
  }

  /**
   * One row {@code [1, L, d]} from its tokens {@code [L][d]}: a single query (or document), e.g. the output
   * of an encoder for one text. The data is copied; a null or ragged token is an error naming its index.
   */
  public static TokenBatch ofQuery(float[][] tokens) {
    tokens = Arguments.nonNull(tokens, "tokens").clone(); // checked as copied: the caller's could change
    if (tokens.length == 0) {
      throw new IllegalArgumentException("tokens is empty; expected at least one token, [L >= 1][d >= 1]");
    }
    for (int t = 0; t < tokens.length; t++) {
      if (tokens[t] == null) {
        throw new IllegalArgumentException("tokens[" + t + "] is null; expected a vector");
      }
      if (tokens[t].length == 0 || tokens[t].length != tokens[0].length) {
        throw new IllegalArgumentException("tokens[" + t + "] has dimension " + tokens[t].length + "; expected "
            + (tokens[0].length == 0 ? "d >= 1" : tokens[0].length + " like tokens[0]"));
      }
    }
    int dim = tokens[0].length;
    float[] data = new float[Arguments.arraySize(tokens.length, dim, "tokens x d",
        "use fromMemorySegment for larger rows")];
    for (int t = 0; t < tokens.length; t++) {
      System.arraycopy(tokens[t], 0, data, t * dim, dim);
    }
    return ofFloats(data, 1, tokens.length, dim);
  }

  /**
   * A padded batch over off-heap (or heap) memory holding {@code n*length*dim} elements of {@code dtype},
   * little-endian as the platform stores them. The memory must stay alive while the batch is used, and
   * must be readable from any thread (scoring runs on a pool): allocate it from {@code Arena.ofShared()},
   * {@code Arena.ofAuto()} or {@code Arena.global()}, not a confined arena.
   */
  public static TokenBatch fromMemorySegment(MemorySegment memory, DType dtype, int n, int length, int dim) {
    return fromMemorySegment(memory, dtype, null, n, length, dim);
  }

  /**
   * As {@link #fromMemorySegment(MemorySegment, DType, int, int, int)}; for a quantized type the memory holds
   * {@code n*length} tokens of {@code dtype.bytesPerToken(dim)} bytes and {@code scales} one scale per token
   * (null: scale 1); for the float types {@code scales} must be null.
   */
  public static TokenBatch fromMemorySegment(MemorySegment memory, DType dtype, float[] scales, int n, int length,
      int dim) {
    BatchChecks.checkSegment(memory, dtype);
    if (dtype.isQuantized()) {
      BatchChecks.checkPaddedBytes("memory", memory.byteSize(), dtype, n, length, dim);
      return new TokenBatch(paddedTokens(dtype, n, length, dim, null, null, null, memory,
          BatchChecks.checkScales(scales, (long) n * length)));
    }
    BatchChecks.requireNoScales(scales, dtype);
    BatchChecks.checkPaddedShape("memory", memory.byteSize() / dtype.byteSize(), n, length, dim);
    return new TokenBatch(padded(dtype, n, length, dim, null, null, memory));
  }

  // ---------------------------------------------------------------- packed factories

  /** A packed fp32 batch: tokens {@code [T, dim]} in {@code data}, rows delimited by {@code offsets [N+1]}. */
  public static TokenBatch packedFloats(float[] data, int[] offsets, int dim) {
    Arguments.nonNull(data, "data");
    int[] checked = BatchChecks.checkPackedShape("data", data.length, offsets, dim);
    return new TokenBatch(packed(DType.FLOAT32, checked, dim, data, null, null));
  }

  /** A packed fp16/bf16 batch: tokens {@code [T, dim]} as bit patterns, rows delimited by {@code offsets}. */
  public static TokenBatch packedHalfs(DType dtype, short[] bits, int[] offsets, int dim) {
    Arguments.nonNull(bits, "bits");
    BatchChecks.checkHalf(dtype);
    int[] checked = BatchChecks.checkPackedShape("bits", bits.length, offsets, dim);
    return new TokenBatch(packed(dtype, checked, dim, null, bits, null));
  }

  /** A packed batch over memory holding {@code T*dim} elements of {@code dtype}. */
  public static TokenBatch packedFromMemorySegment(MemorySegment memory, DType dtype, int[] offsets, int dim) {
    return packedFromMemorySegment(memory, dtype, null, offsets, dim);
  }

  /**
   * A packed quantized batch: tokens {@code [T]} of {@code dtype.bytesPerToken(dim)} bytes each in {@code data},
   * one scale per token {@code [T]} (or null for scale 1), rows delimited by {@code offsets [N+1]}.
   */
  public static TokenBatch packedBytes(DType dtype, byte[] data, float[] scales, int[] offsets, int dim) {
    Arguments.nonNull(data, "data");
    BatchChecks.checkQuantized(dtype, "byte[] data");
    int[] checked = BatchChecks.checkPackedBytes("data", data.length, dtype, offsets, dim);
    return new TokenBatch(packedTokens(dtype, checked, dim, null, null, data, null,
        BatchChecks.checkScales(scales, checked[checked.length - 1])));
  }

  /**
   * A packed batch over memory holding {@code T} tokens of {@code dtype}; for a quantized type, {@code scales}
   * holds one scale per token (null: scale 1), and must be null otherwise.
   */
  public static TokenBatch packedFromMemorySegment(MemorySegment memory, DType dtype, float[] scales, int[] offsets,
      int dim) {
    BatchChecks.checkSegment(memory, dtype);
    if (dtype.isQuantized()) {
      int[] checked = BatchChecks.checkPackedBytes("memory", memory.byteSize(), dtype, offsets, dim);
      return new TokenBatch(packedTokens(dtype, checked, dim, null, null, null, memory,
          BatchChecks.checkScales(scales, checked[checked.length - 1])));
    }
    BatchChecks.requireNoScales(scales, dtype);
    int[] checked = BatchChecks.checkPackedShape("memory", memory.byteSize() / dtype.byteSize(), offsets, dim);
    return new TokenBatch(packed(dtype, checked, dim, null, null, memory));
  }

  // ---------------------------------------------------------------- validity

  /**
   * This batch with a validity mask: for padded batches {@code [N*L]} flags (row-major), for packed ones
   * {@code [T]}. A false flag removes the token (from the sum for queries, from the max for documents). Masks
   * only narrow: a token this batch already masks stays masked (start from the unmasked batch to restore one).
   */
  public TokenBatch withMask(boolean[] mask) {
    Arguments.nonNull(mask, "mask");
    if (mask.length != tokens.storedTokens) {
      throw new IllegalArgumentException("mask has length " + mask.length + "; expected "
          + tokens.storedTokens + (tokens.isPacked() ? " (T, the packed token count)"
              : " (N*L = " + tokens.rows + "*" + tokens.paddedLength + ")"));
    }
    return BatchChecks.bookRows("mask of length " + mask.length, tokens.rows,
        () -> new TokenBatch(tokens.withValidity(tokens.rowLength, combine(tokens.mask, mask))));
  }

  /** This padded batch with a {@code [N][L]} mask. */
  public TokenBatch withMask(boolean[][] mask) {
    Arguments.nonNull(mask, "mask");
    requirePadded("withMask(boolean[][])");
    int n = tokens.rows;
    int l = tokens.paddedLength;
    if (mask.length != n) {
      throw new IllegalArgumentException("mask has shape [" + mask.length + "][..]; expected [" + n + "][" + l + "]");
    }
    boolean[] flat = new boolean[n * l];
    for (int i = 0; i < n; i++) {
      boolean[] row = mask[i]; // read once: the caller's could change between a check and the copy
      if (row == null || row.length != l) {
        throw new IllegalArgumentException("mask[" + i + "] has length "
            + (row == null ? "null" : row.length) + "; expected " + l + " (L)");
      }
      System.arraycopy(row, 0, flat, i * l, l);
    }
    return withMask(flat);
  }

  /**
   * This padded batch with per-row lengths: the first {@code lengths[i]} tokens of row {@code i} are valid, of
   * those this batch already has (lengths only narrow: a row already shortened, or masked, stays so; start from
   * the unrestricted batch to lengthen rows).
   */
  public TokenBatch withLengths(int[] lengths) {
    Arguments.nonNull(lengths, "lengths");
    return BatchChecks.bookRows("lengths of length " + lengths.length, lengths.length, () -> lengthsApplied(lengths));
  }

  private TokenBatch lengthsApplied(int[] given) {
    int[] lengths = given.clone(); // checked as copied: the caller's could change
    requirePadded("withLengths");
    int l = tokens.paddedLength;
    if (lengths.length != tokens.rows) {
      throw new IllegalArgumentException("lengths has length " + lengths.length + "; expected " + tokens.rows + " (N)");
    }
    int[] rowLength = new int[lengths.length];
    for (int i = 0; i < lengths.length; i++) {
      if (lengths[i] < 0 || lengths[i] > l) {
        throw new IllegalArgumentException("lengths[" + i + "] = " + lengths[i] + "; expected 0 <= length <= " + l
            + " (L)");
      }
      rowLength[i] = Math.min(lengths[i], tokens.rowLength[i]);
    }
    return new TokenBatch(tokens.withValidity(rowLength, tokens.mask));
  }

  /**
   * An fp32 copy of this batch with every stored token scaled to unit L2 norm, masked and padding ones too (zero
   * vectors stay zero; a token holding NaN is left as it is, with any infinity it holds, and one holding an infinity
   * but no NaN becomes NaN there and 0 elsewhere: either scores NaN where it is valid).
   * Quantized tokens are normalised from their exact values {@code scale x q}, finite even where their fp32 copy
   * ({@link #toFloatArray}) is not. Scoring never normalises on its own; this is the explicit opt-in.
   */
  public TokenBatch l2Normalized() {
    float[] data = copyAsFloats("l2Normalized");
    boolean quantized = tokens.dtype.isQuantized();
    try {
      normalize(data, quantized);
    } catch (IllegalStateException e) {
      throw closedWhileRead(e);
    }
    return withStorage(DType.FLOAT32, data, null);
  }

  /** Scales each stored token of {@code data}, this batch's fp32 copy, to unit L2 norm (see l2Normalized). */
  private void normalize(float[] data, boolean quantized) {
    int dim = tokens.dim;
    for (int s = 0; s < tokens.storedTokens; s++) {
      double sq = 0;
      for (int k = 0; k < dim; k++) {
        // a quantized value is read exactly, scale x q: its fp32 copy is infinite for a large scale
        double v = quantized ? tokens.value(s, k) : data[s * dim + k];
        sq += v * v;
      }
      if (sq > 0) {
        double norm = Math.sqrt(sq);
        float inv = (float) (1.0 / norm);
        boolean normalInverse = !quantized && inv >= Float.MIN_NORMAL && inv <= Float.MAX_VALUE;
        for (int k = 0; k < dim; k++) {
          // a norm outside fp32's normal range has a reciprocal that overflows or is subnormal: divide in float64
          data[s * dim + k] = normalInverse ? data[s * dim + k] * inv
              : (float) ((quantized ? tokens.value(s, k) : data[s * dim + k]) / norm);
        }
      }
    }
  }

  /**
   * A quantized copy of this batch in {@code type} ({@link DType#INT8}, {@link DType#FLOAT8_E4M3} or
   * {@link DType#BINARY}), with the same layout, mask and lengths. Each token gets the scale that suits its
   * type: absmax / 127 for int8 and absmax / 448 for fp8, rounded to fp32 (so the largest magnitude takes the largest
   * code, within the rounding of its scale; a scale below fp32's normal range is rounded up, so that no value
   * clips, and one whose largest code would dequantize past fp32's largest value is rounded down), values rounded
   * to nearest even; for one bit the mean magnitude {@code mean |x|} (with the signs fixed, the scale of least
   * squared error; the smallest subnormal where that rounds to 0 for a token that is not all zeros); the sign bit
   * is set for {@code x >= 0}. A token of zeros stays exactly zero (scale 1 for int8 and fp8, 0 for one bit).
   * A masked or padding slot, which no score reads, is quantized as it stands, or as zeros where the type cannot
   * store it (NaN, an infinity, or a scale past fp32's largest value). Quantizing a quantized batch requantizes
   * its dequantized values.
   *
   * @throws IllegalArgumentException when {@code type} is not quantized, a valid token holds NaN or an
   *     infinity, or (requantizing) a valid token's values {@code scale x q}, read exactly, need a scale past
   *     fp32's largest value (the error names it)
   */
  public TokenBatch quantize(DType type) {
    Arguments.nonNull(type, "type");
    if (!type.isQuantized()) {
      throw new IllegalArgumentException("type is " + type + "; expected INT8, FLOAT8_E4M3 or BINARY");
    }
    requireOpenMemory();
    Arguments.resultSize(tokens.storedTokens, type.bytesPerToken(tokens.dim), 1, "quantize: this batch's stored"
        + " tokens x bytes per token", "quantize it in slices of rows");
    Arguments.resultSize(tokens.storedTokens, 1, Float.BYTES, "quantize: a scale per stored token",
        "quantize it in slices of rows");
    // each token is staged as fp32, d floats in one array (a batch of no token stages none)
    Arguments.arraySize(Math.min(tokens.storedTokens, 1), tokens.dim, "quantize: one token staged as fp32",
        "quantize tokens of fewer dimensions");
    Quantization.Quantized q;
    try {
      q = Quantization.quantize(tokens, type);
    } catch (IllegalStateException e) {
      throw closedWhileRead(e);
    }
    return new TokenBatch(new Tokens(type, tokens.dim, tokens.paddedLength, tokens.rowStart, tokens.rowLength,
        tokens.storedTokens, tokens.mask, null, null, q.data(), null, q.scales()));
  }

  /**
   * The per-token scales of a quantized batch, one per stored token ({@code N*L} padded, {@code T} packed),
   * all 1 when none were given; a copy.
   *
   * @throws IllegalStateException for a batch of an unquantized type
   */
  public float[] scales() {
    if (!tokens.dtype.isQuantized()) {
      throw new IllegalStateException("scales() is for quantized batches; this one is " + tokens.dtype);
    }
    if (tokens.scales != null) {
      return tokens.scales.clone();
    }
    float[] ones = new float[Arguments.resultSize(tokens.storedTokens, 1, Float.BYTES, "scales(): a scale per stored"
        + " token", "read the scales of a slice of rows")];
    Arrays.fill(ones, 1f);
    return ones;
  }

  // ---------------------------------------------------------------- accessors

  /** N, the number of rows. */
  public int size() {
    return tokens.rows;
  }

  /** Token dimension d. */
  public int dim() {
    return tokens.dim;
  }

  /** The storage type of the tokens. */
  public DType dtype() {
    return tokens.dtype;
  }

  /** Whether the rows are packed one after another ({@code [T, d]} with offsets) rather than padded to one L. */
  public boolean isPacked() {
    return tokens.isPacked();
  }

  /** L for a padded batch; the longest row for a packed one. */
  public int maxLength() {
    return tokens.isPacked() ? tokens.maxRowLength : tokens.paddedLength;
  }

  /** Token slots of row {@code i} (L, its length, or its packed length). */
  public int length(int row) {
    Arguments.index(row, tokens.rows, "row");
    return tokens.rowLength[row];
  }

  /** Valid tokens of row {@code i}. */
  public int validTokens(int row) {
    Arguments.index(row, tokens.rows, "row");
    return tokens.validCount[row];
  }

  /**
   * Whether slot {@code t} of row {@code row} is a valid token: false for a masked slot and for any {@code t} outside
   * the row ({@code t < 0} or past its length), so that a loop over {@link #maxLength()} slots serves packed rows
   * too; {@link #get} refuses a slot outside a packed row, and reads a padded row's slots up to L, padding included.
   */
  public boolean isValid(int row, int t) {
    Arguments.index(row, tokens.rows, "row");
    return t >= 0 && tokens.isValid(row, t);
  }

  /**
   * Element {@code k} of slot {@code t} of row {@code row}, as fp32 (dequantized for the quantized types): {@code t}
   * below the row's length for packed rows, below L for padded ones (the padding as stored, as {@link #toFloatArray}
   * has it).
   *
   * @throws IllegalArgumentException where {@code row}, {@code t} or {@code k} is out of those bounds
   * @throws IllegalStateException where the batch's memory segment is closed
   */
  public float get(int row, int t, int k) {
    Arguments.index(row, tokens.rows, "row");
    Arguments.index(t, tokens.isPacked() ? tokens.rowLength[row] : tokens.paddedLength, "t");
    Arguments.index(k, tokens.dim, "k");
    requireOpenMemory();
    try {
      return tokens.element(tokens.rowStart[row] + t, k);
    } catch (IllegalStateException e) {
      throw closedWhileRead(e);
    }
  }

  /**
   * All stored elements as fp32 (dequantized for the quantized types), in storage order ({@code N*L*d} padded,
   * {@code T*d} packed).
   */
  public float[] toFloatArray() {
    return copyAsFloats("toFloatArray");
  }

  private float[] copyAsFloats(String call) {
    requireOpenMemory();
    float[] out = new float[Arguments.resultSize(tokens.storedTokens, tokens.dim, Float.BYTES, call
        + ": this batch's stored tokens x d", "read it in slices with get(row, t, k), or keep it in a MemorySegment")];
    try {
      tokens.copyTokens(0, tokens.storedTokens, out, 0);
    } catch (IllegalStateException e) {
      throw closedWhileRead(e);
    }
    return out;
  }

  /**
   * The stored bytes of a quantized batch, in storage order ({@code N*L} or {@code T} tokens of
   * {@code dtype().bytesPerToken(dim())} bytes): what {@link #quantize} produced or the factory was given,
   * e.g. to write them to a file or an index beside {@link #scales()}. A copy.
   *
   * @throws IllegalStateException for a batch of an unquantized type
   */
  public byte[] toByteArray() {
    if (!tokens.dtype.isQuantized()) {
      throw new IllegalStateException("toByteArray() is for quantized batches; this one is " + tokens.dtype);
    }
    requireOpenMemory();
    long bytes = tokens.storedTokens * tokens.tokenBytes;
    byte[] out = new byte[Arguments.resultSize(1, bytes, 1, "toByteArray: this batch's stored bytes",
        "read the batch's memory segment in slices")];
    if (tokens.s8 != null) {
      System.arraycopy(tokens.s8, 0, out, 0, out.length);
    } else {
      try {
        MemorySegment.copy(tokens.segment, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, out, 0, out.length);
      } catch (IllegalStateException e) {
        throw closedWhileRead(e);
      }
    }
    return out;
  }

  /**
   * Offsets {@code [N+1]} of a packed batch, a copy.
   *
   * @throws IllegalStateException for a padded batch, which has none
   */
  public int[] offsets() {
    if (!tokens.isPacked()) {
      throw new IllegalStateException("offsets() is for packed batches; this one is padded [N, L, d]");
    }
    int[] offsets = Arrays.copyOf(tokens.rowStart, tokens.rows + 1);
    offsets[tokens.rows] = tokens.storedTokens;
    return offsets;
  }

  /** Reading a batch over a MemorySegment needs that memory still open: else the JDK's bare "Already closed". */
  private void requireOpenMemory() {
    MaxSim.requireOpenMemory("this TokenBatch's rows", tokens);
  }

  /** The memory closed after that check, while it was read, is named the same way (the JDK's error as the cause). */
  private IllegalStateException closedWhileRead(IllegalStateException e) {
    return MaxSim.closedMemory(e, "this TokenBatch's rows", tokens);
  }

  /** A batch of the same layout and validity over other storage (gradients use this). */
  TokenBatch withStorage(DType dtype, float[] f32, short[] s16) {
    return new TokenBatch(new Tokens(dtype, tokens.dim, tokens.paddedLength, tokens.rowStart, tokens.rowLength,
        tokens.storedTokens, tokens.mask, f32, s16, null, null, null));
  }

  @Override
  public String toString() {
    return tokens.isPacked()
        ? "TokenBatch[packed N=" + tokens.rows + ", T=" + tokens.storedTokens + ", d=" + tokens.dim + ", "
            + tokens.dtype + "]"
        : "TokenBatch[N=" + tokens.rows + ", L=" + tokens.paddedLength + ", d=" + tokens.dim + ", " + tokens.dtype
            + "]";
  }

  /** Shape for error messages, e.g. {@code [4, 32, 128]} or {@code packed [T=100, 128] N=4}. */
  String shape() {
    return tokens.isPacked()
        ? "packed [T=" + tokens.storedTokens + ", d=" + tokens.dim + "] with N=" + tokens.rows
        : "[" + tokens.rows + ", " + tokens.paddedLength + ", " + tokens.dim + "]";
  }

  // ---------------------------------------------------------------- helpers

  private void requirePadded(String what) {
    if (tokens.isPacked()) {
      throw new IllegalArgumentException(what + " needs a padded [N, L, d] batch; this one is " + shape()
          + " (use withMask(boolean[]) over the T packed tokens)");
    }
  }

  private static boolean[] combine(boolean[] existing, boolean[] mask) {
    boolean[] copy = mask.clone();
    if (existing != null) {
      for (int i = 0; i < copy.length; i++) {
        copy[i] &= existing[i];
      }
    }
    return copy;
  }

  private static Tokens padded(DType dtype, int n, int length, int dim, float[] f32, short[] s16, MemorySegment seg) {
    return paddedTokens(dtype, n, length, dim, f32, s16, null, seg, null);
  }

  private static Tokens paddedTokens(DType dtype, int n, int length, int dim, float[] f32, short[] s16, byte[] s8,
      MemorySegment seg, float[] scales) {
    return BatchChecks.bookRows("shape [" + n + ", " + length + ", " + dim + "]", n, () -> {
      int[] start = new int[n];
      int[] len = new int[n];
      for (int i = 0; i < n; i++) {
        start[i] = i * length;
        len[i] = length;
      }
      return new Tokens(dtype, dim, length, start, len, n * length, null, f32, s16, s8, seg, scales);
    });
  }

  private static Tokens packed(DType dtype, int[] offsets, int dim, float[] f32, short[] s16, MemorySegment seg) {
    return packedTokens(dtype, offsets, dim, f32, s16, null, seg, null);
  }

  private static Tokens packedTokens(DType dtype, int[] offsets, int dim, float[] f32, short[] s16, byte[] s8,
      MemorySegment seg, float[] scales) {
    int n = offsets.length - 1;
    return BatchChecks.bookRows("offsets of length " + offsets.length, n, () -> {
      int[] start = Arrays.copyOf(offsets, n);
      int[] len = new int[n];
      for (int i = 0; i < n; i++) {
        len[i] = offsets[i + 1] - offsets[i];
      }
      return new Tokens(dtype, dim, -1, start, len, offsets[n], null, f32, s16, s8, seg, scales);
    });
  }
}
