package dev.maxsim4j.internal;

import dev.maxsim4j.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * The backends' view of a token-embedding batch: where each row's tokens live and which are valid.
 *
 * <p>Padded and packed inputs share one description: row {@code i} owns the token slots
 * {@code rowStart[i] .. rowStart[i] + rowLength[i] - 1} of the storage, each slot {@code dim} elements long.
 * A padded batch with per-row lengths has {@code rowLength = lengths}; a mask (one flag per stored token)
 * may punch holes. Storage is exactly one of a heap {@code float[]}, a heap {@code short[]} (fp16/bf16 bits),
 * a heap {@code byte[]} (the quantized types) or a {@link MemorySegment}; it is never copied.
 *
 * <p>Quantized tokens ({@link DType#isQuantized()}) take {@link #tokenBytes} bytes each and carry one fp32
 * scale ({@link #scales}, null when every scale is 1); {@link #element}, {@link #copyTokens} and
 * {@link #gatherValid} return their dequantized values, {@code scale x q} rounded to fp32, which a huge or tiny
 * scale overflows or rounds: a kernel that must score exactly stages {@link #copyStored} and applies the scales to
 * its dot products.
 */
public final class Tokens {
  private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;
  private static final ValueLayout.OfShort S16 = ValueLayout.JAVA_SHORT_UNALIGNED;
  private static final ValueLayout.OfByte S8 = ValueLayout.JAVA_BYTE;

  public final DType dtype;
  public final int rows;
  public final int dim;
  /** Stored tokens in all (N*L for padded, T for packed). */
  public final int storedTokens;
  /** L for a padded batch, -1 for a packed one. */
  public final int paddedLength;
  public final int[] rowStart;
  public final int[] rowLength;
  /** One flag per stored token, or null when every slot inside rowLength is valid. */
  public final boolean[] mask;
  public final int[] validCount;
  public final int maxRowLength;
  public final int maxValidCount;
  /** The most valid tokens of a row whose valid tokens are not one run of stored tokens (0 where none is split). */
  public final int maxSplitValidCount;
  /** Whether the rows cover every stored token (packed, or padded with every row full): no padding slots. */
  public final boolean rowsCoverStorage;

  public final float[] f32;
  public final short[] s16;
  /** Stored bytes of a quantized type on the heap. */
  public final byte[] s8;
  public final MemorySegment segment;
  /** One scale per stored token of a quantized type, or null when every scale is 1. */
  public final float[] scales;
  /** Bytes per stored token: {@code dtype.bytesPerToken(dim)} (a long: fp32 tokens of huge d pass 2^31). */
  public final long tokenBytes;
  /** The array a heap segment views (null for a native one, or none), found once. */
  private final Object segmentArray;
  /** Bytes of this batch's heap arrays, each once, as a call counts them ({@link #heapBytes(Tokens, Tokens)}). */
  private final long heapBytes;

  public Tokens(DType dtype, int dim, int paddedLength, int[] rowStart, int[] rowLength, int storedTokens,
      boolean[] mask, float[] f32, short[] s16, MemorySegment segment) {
    this(dtype, dim, paddedLength, rowStart, rowLength, storedTokens, mask, f32, s16, null, segment, null);
  }

  public Tokens(DType dtype, int dim, int paddedLength, int[] rowStart, int[] rowLength, int storedTokens,
      boolean[] mask, float[] f32, short[] s16, byte[] s8, MemorySegment segment, float[] scales) {
    this.dtype = dtype;
    this.s8 = s8;
    this.scales = scales;
    this.tokenBytes = dtype.bytesPerToken(dim);
    this.dim = dim;
    this.paddedLength = paddedLength;
    this.rows = rowStart.length;
    this.rowStart = rowStart;
    this.rowLength = rowLength;
    this.storedTokens = storedTokens;
    this.mask = mask;
    this.f32 = f32;
    this.s16 = s16;
    this.segment = segment;
    this.validCount = new int[rows];
    int maxLen = 0;
    int maxValid = 0;
    int maxSplit = 0;
    long covered = 0;
    for (int i = 0; i < rows; i++) {
      covered += rowLength[i];
      int count = 0;
      if (mask == null) {
        count = rowLength[i];
      } else {
        int runs = 0;
        for (int t = 0, s = rowStart[i]; t < rowLength[i]; t++, s++) {
          if (mask[s]) {
            runs += t == 0 || !mask[s - 1] ? 1 : 0;
            count++;
          }
        }
        maxSplit = runs > 1 ? Math.max(maxSplit, count) : maxSplit;
      }
      validCount[i] = count;
      maxLen = Math.max(maxLen, rowLength[i]);
      maxValid = Math.max(maxValid, count);
    }
    this.maxRowLength = maxLen;
    this.maxValidCount = maxValid;
    this.maxSplitValidCount = maxSplit;
    this.rowsCoverStorage = covered == storedTokens;
    this.segmentArray = segment == null || segment.isNative() ? null : segment.heapBase().orElse(null);
    this.heapBytes = ownHeapBytes();
  }

  /** The same storage with other row lengths and mask (a validity change never copies tokens). */
  public Tokens withValidity(int[] newRowLength, boolean[] newMask) {
    return new Tokens(dtype, dim, paddedLength, rowStart, newRowLength, storedTokens, newMask, f32, s16, s8,
        segment, scales);
  }

  /** Rows {@code [from, to)} over the same storage (no token is copied). */
  public Tokens rows(int from, int to) {
    return new Tokens(dtype, dim, paddedLength, Arrays.copyOfRange(rowStart, from, to),
        Arrays.copyOfRange(rowLength, from, to), storedTokens, mask, f32, s16, s8, segment, scales);
  }

  /** The bytes of the stored tokens, wherever they are: a heap array is viewed through a segment, not copied. */
  public MemorySegment storage() {
    if (f32 != null) {
      return MemorySegment.ofArray(f32);
    }
    if (s16 != null) {
      return MemorySegment.ofArray(s16);
    }
    return s8 != null ? MemorySegment.ofArray(s8) : segment;
  }

  /**
   * Bytes that {@code a} and {@code b} (null, or {@code a} again, for one batch) keep on the Java heap: their
   * bookkeeping, masks, scales and heap-held tokens, an array the two share counted once. Memory a call's result
   * cannot take, since its inputs stay reachable while it runs; every call counts it, so nothing is allocated.
   */
  public static long heapBytes(Tokens a, Tokens b) {
    if (b == null || b == a) {
      return a.heapBytes;
    }
    long shared = a.sharedBytes(b.rowStart) + a.sharedBytes(b.rowLength) + a.sharedBytes(b.validCount)
        + a.sharedBytes(b.mask) + a.sharedBytes(b.f32) + a.sharedBytes(b.s16) + a.sharedBytes(b.s8)
        + a.sharedBytes(b.scales) + a.sharedBytes(b.segmentArray);
    return a.heapBytes + b.heapBytes - shared;
  }

  /** {@code array}'s bytes where it is one of this batch's heap arrays, else 0. */
  private long sharedBytes(Object array) {
    boolean held = array != null && (array == rowStart || array == rowLength || array == validCount || array == mask
        || array == f32 || array == s16 || array == s8 || array == scales || array == segmentArray);
    return held ? arrayBytes(array) : 0;
  }

  /** This batch's heap arrays' bytes, each array once ({@link #heapBytes(Tokens, Tokens)}). */
  private long ownHeapBytes() {
    Object[] arrays = {rowStart, rowLength, validCount, mask, f32, s16, s8, scales, segmentArray};
    long bytes = 0;
    for (int i = 0; i < arrays.length; i++) {
      boolean earlier = false;
      for (int j = 0; j < i; j++) {
        earlier |= arrays[j] == arrays[i];
      }
      bytes += arrays[i] == null || earlier ? 0 : arrayBytes(arrays[i]);
    }
    return bytes;
  }

  /** A primitive array's elements and {@link HeapLimit#ARRAY_OVERHEAD}. */
  private static long arrayBytes(Object array) {
    return HeapLimit.ARRAY_OVERHEAD + switch (array) {
      case boolean[] a -> a.length;
      case byte[] a -> a.length;
      case short[] a -> 2L * a.length;
      case char[] a -> 2L * a.length;
      case int[] a -> 4L * a.length;
      case float[] a -> 4L * a.length;
      case long[] a -> 8L * a.length;
      case double[] a -> 8L * a.length;
      default -> 0L;
    };
  }

  public boolean isPacked() {
    return paddedLength < 0;
  }

  /** Whether slot {@code t} of row {@code row} holds a valid token. */
  public boolean isValid(int row, int t) {
    return t < rowLength[row] && (mask == null || mask[rowStart[row] + t]);
  }


  /** The scale of stored token {@code token} (1 for unquantized types or when none was given). */
  public float scale(int token) {
    return scales == null ? 1f : scales[token];
  }

  /** Element {@code k} of stored token {@code token}, widened (dequantized) to fp32. */
  public float element(int token, int k) {
    if (dtype.isQuantized()) {
      return scale(token) * stored(token, k);
    }
    long e = (long) token * dim + k;
    if (f32 != null) {
      return f32[(int) e];
    }
    if (s16 != null) {
      return dtype.widen(s16[(int) e]);
    }
    return dtype == DType.FLOAT32
        ? segment.getAtIndex(F32, e)
        : dtype.widen(segment.getAtIndex(S16, e));
  }

  /** Element {@code k} of stored token {@code token} exactly, in float64: the reference's value. */
  public double value(int token, int k) {
    return dtype.isQuantized() ? (double) scale(token) * stored(token, k) : element(token, k);
  }

  /** The stored value {@code q} of element {@code k} of a quantized token, before its scale. */
  public float stored(int token, int k) {
    long base = (long) token * tokenBytes;
    return switch (dtype) {
      case INT8 -> storedByte(base + k);
      // a mapped byte is decoded from its bits, never used as a table index (Quantization.e4m3 says why)
      case FLOAT8_E4M3 -> s8 != null ? Quantization.E4M3[s8[(int) (base + k)] & 0xff]
          : Quantization.e4m3(segment.get(S8, base + k));
      case BINARY -> (storedByte(base + (k >>> 3)) & (0x80 >>> (k & 7))) != 0 ? 1f : -1f;
      default -> throw new IllegalStateException(dtype + " is not quantized");
    };
  }

  private byte storedByte(long index) {
    return s8 != null ? s8[(int) index] : segment.get(S8, index);
  }

  /** Widens {@code count} consecutive stored tokens starting at {@code token} into {@code dst[off..]}. */
  public void copyTokens(int token, int count, float[] dst, int off) {
    if (dtype.isQuantized()) {
      for (int t = 0; t < count; t++) {
        float scale = scale(token + t);
        int o = off + t * dim;
        for (int k = 0; k < dim; k++) {
          dst[o + k] = scale * stored(token + t, k);
        }
      }
      return;
    }
    int n = count * dim;
    long e = (long) token * dim;
    if (f32 != null) {
      System.arraycopy(f32, (int) e, dst, off, n);
    } else if (s16 != null) {
      widen(s16, (int) e, dst, off, n);
    } else if (dtype == DType.FLOAT32) {
      MemorySegment.copy(segment, F32, e * 4, dst, off, n);
    } else {
      for (int i = 0; i < n; i++) {
        dst[off + i] = dtype.widen(segment.getAtIndex(S16, e + i));
      }
    }
  }

  /**
   * The stored values {@code q} of {@code count} consecutive quantized tokens, before their scales, into
   * {@code dst[off..]}: kernels that apply each pair's scales after its dot product stage these.
   */
  public void copyStored(int token, int count, float[] dst, int off) {
    for (int t = 0; t < count; t++) {
      int o = off + t * dim;
      for (int k = 0; k < dim; k++) {
        dst[o + k] = stored(token + t, k);
      }
    }
  }

  /** The largest {@code |scale|} of row {@code row}'s valid tokens (1 for unquantized types or no scales). */
  public float maxValidScale(int row) {
    if (scales == null) {
      return 1f;
    }
    float max = 0;
    for (int t = 0; t < rowLength[row]; t++) {
      if (isValid(row, t)) {
        max = Math.max(max, Math.abs(scales[rowStart[row] + t]));
      }
    }
    return max;
  }

  private void widen(short[] src, int from, float[] dst, int off, int n) {
    if (dtype == DType.BFLOAT16) {
      for (int i = 0; i < n; i++) {
        dst[off + i] = Float.intBitsToFloat((src[from + i] & 0xffff) << 16);
      }
    } else {
      for (int i = 0; i < n; i++) {
        dst[off + i] = Float.float16ToFloat(src[from + i]);
      }
    }
  }

  /** Copies (and widens) {@code count} consecutive stored tokens into {@code dst[off..]}. */
  @FunctionalInterface
  public interface RunCopier {
    void copy(int token, int count, float[] dst, int off);
  }

  /**
   * Widens the valid tokens of a row, in slot order, into {@code dst}; writes their slot numbers into
   * {@code slots} when it is not null. Returns how many were written.
   */
  public int gatherValid(int row, float[] dst, int[] slots) {
    return gatherValid(row, dst, slots, this::copyTokens);
  }

  /** As {@link #gatherValid(int, float[], int[])}, copying each run of valid tokens with {@code copier}. */
  public int gatherValid(int row, float[] dst, int[] slots, RunCopier copier) {
    return forEachValidRun(row, slots, (token, count, n) -> copier.copy(token, count, dst, n * dim));
  }

  /** A run of {@code count} consecutive valid stored tokens from {@code token}; {@code n} valid ones came before. */
  @FunctionalInterface
  public interface ValidRun {
    void visit(int token, int count, int n);
  }

  /**
   * Visits the runs of valid tokens of a row in slot order; writes their slot numbers into {@code slots} when it
   * is not null. Returns how many valid tokens there were.
   */
  public int forEachValidRun(int row, int[] slots, ValidRun run) {
    int start = rowStart[row];
    int len = rowLength[row];
    int n = 0;
    int t = 0;
    while (t < len) {
      if (mask != null && !mask[start + t]) {
        t++;
        continue;
      }
      int runEnd = t;
      while (runEnd < len && (mask == null || mask[start + runEnd])) {
        runEnd++;
      }
      run.visit(start + t, runEnd - t, n);
      for (int s = t; s < runEnd; s++, n++) {
        if (slots != null) {
          slots[n] = s;
        }
      }
      t = runEnd;
    }
    return n;
  }
}
