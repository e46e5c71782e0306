package dev.maxsim4j;

import java.lang.foreign.MemorySegment;
import java.util.function.Supplier;

/**
 * The argument checks of {@link TokenBatch}'s factories: shapes against storage sizes, dtypes against storage
 * kinds, scales and memory segments. Each failure is an {@link IllegalArgumentException} naming the argument,
 * what it held and what was expected.
 */
final class BatchChecks {
  private BatchChecks() {}

  static void checkSegment(MemorySegment memory, DType dtype) {
    Arguments.nonNull(memory, "memory");
    Arguments.nonNull(dtype, "dtype");
    if (!memory.scope().isAlive()) {
      throw new IllegalArgumentException("memory is no longer alive (its arena was closed); expected a live segment");
    }
    if (!dtype.isQuantized() && memory.byteSize() % dtype.byteSize() != 0) {
      throw new IllegalArgumentException("memory holds " + memory.byteSize() + " bytes, not a whole number of "
          + dtype + " elements (" + dtype.byteSize() + " bytes each)");
    }
    if (!memory.isAccessibleBy(new Thread(() -> {}))) {
      throw new IllegalArgumentException("memory is confined to one thread, but scoring reads it from a thread pool;"
          + " expected a segment from Arena.ofShared(), Arena.ofAuto() or Arena.global()");
    }
  }

  static void checkHalf(DType dtype) {
    Arguments.nonNull(dtype, "dtype");
    if (dtype != DType.FLOAT16 && dtype != DType.BFLOAT16) {
      throw new IllegalArgumentException("dtype " + dtype + " given for short[] bits; expected FLOAT16 or BFLOAT16"
          + (dtype == DType.FLOAT32 ? " (use ofFloats for fp32)" : " (use ofBytes for quantized types)"));
    }
  }

  static void checkQuantized(DType dtype, String storage) {
    Arguments.nonNull(dtype, "dtype");
    if (!dtype.isQuantized()) {
      throw new IllegalArgumentException("dtype " + dtype + " given for " + storage
          + "; expected INT8, FLOAT8_E4M3 or BINARY (use ofFloats or ofHalfs for " + dtype + ")");
    }
  }

  static void requireNoScales(float[] scales, DType dtype) {
    if (scales != null) {
      throw new IllegalArgumentException("scales given for dtype " + dtype
          + "; expected null (scales belong to INT8, FLOAT8_E4M3 and BINARY)");
    }
  }

  /** A copy of {@code scales}, checked as copied: its length and that every scale is finite. */
  static float[] checkScales(float[] given, long tokens) {
    if (given == null) {
      return null;
    }
    float[] scales = given.clone(); // the caller's array could change while it is checked
    if (scales.length != tokens) {
      throw new IllegalArgumentException("scales has length " + scales.length + "; expected " + tokens
          + " (one per stored token)");
    }
    for (int i = 0; i < scales.length; i++) {
      if (!Float.isFinite(scales[i])) {
        throw new IllegalArgumentException("scales[" + i + "] = " + scales[i] + "; expected a finite scale");
      }
    }
    return scales;
  }

  static void checkPaddedBytes(String name, long bytes, DType dtype, int n, int length, int dim) {
    if (n < 0 || length < 0 || dim <= 0) {
      throw new IllegalArgumentException("shape [n=" + n + ", length=" + length + ", dim=" + dim
          + "]; expected n >= 0, length >= 0, dim >= 1");
    }
    checkPaddedTokens(n, length, dim);
    long perToken = dtype.bytesPerToken(dim);
    long expected = (long) n * length * perToken;
    if (bytes != expected) {
      throw new IllegalArgumentException(name + " holds " + bytes + " bytes; expected " + expected + " for shape ["
          + n + ", " + length + ", " + dim + "] of " + dtype + " (" + perToken + " bytes per token)");
    }
  }

  /** A copy of {@code given}, checked as copied as offsets over {@code bytes} bytes of {@code dtype} tokens. */
  static int[] checkPackedBytes(String name, long bytes, DType dtype, int[] given, int dim) {
    int[] offsets = checkOffsets(given, dim);
    long perToken = dtype.bytesPerToken(dim);
    if (bytes % perToken != 0) {
      throw new IllegalArgumentException(name + " holds " + bytes + " bytes, not a whole number of " + dtype
          + " tokens of dim " + dim + " (" + perToken + " bytes each)");
    }
    long tokens = bytes / perToken;
    if (tokens > Arguments.MAX_ARRAY) { // more than offsets (ints) can count: say so rather than "offsets end at"
      throw new IllegalArgumentException(name + " holds " + bytes + " bytes, " + tokens + " " + dtype
          + " tokens of dim " + dim + "; expected at most " + Arguments.MAX_ARRAY);
    }
    // counted in tokens and bytes: for BINARY, tokens x dim is no count of anything the storage holds
    if (offsets[offsets.length - 1] != tokens) {
      throw new IllegalArgumentException("offsets end at " + offsets[offsets.length - 1] + "; expected T = " + tokens
          + " (" + name + " holds " + bytes + " bytes, " + tokens + " " + dtype + " tokens of dim " + dim + " at "
          + perToken + " bytes each)");
    }
    return offsets;
  }

  /** Rows and a mask of n x length tokens are Java arrays: both counts must fit one. */
  private static void checkPaddedTokens(int n, int length, int dim) {
    String shape = "shape [" + n + ", " + length + ", " + dim + "]";
    if (n > Arguments.MAX_ARRAY) {
      throw new IllegalArgumentException(shape + " has " + n + " rows; expected at most " + Arguments.MAX_ARRAY
          + " (rows are kept in Java arrays)");
    }
    if ((long) n * length > Arguments.MAX_ARRAY) {
      throw new IllegalArgumentException(shape + " has " + n + " rows x " + length + " tokens = " + (long) n * length
          + " token slots; expected at most " + Arguments.MAX_ARRAY + " (a mask of rows x tokens is a Java array):"
          + (n > 1 ? " fewer rows per batch" : " a shorter row"));
    }
    checkRowBookkeeping(shape, n, Runtime.getRuntime().maxMemory());
  }

  /** Bytes of per-row bookkeeping a batch keeps: a row start, a length and a valid count, an int each. */
  static final long ROW_BOOKKEEPING_BYTES = 3L * Integer.BYTES;

  /**
   * A batch keeps three ints per row whatever its tokens, so rows of no token cost heap that their (empty) data
   * does not: more rows than {@code heapBytes} can book are refused here rather than as an OutOfMemoryError.
   */
  static void checkRowBookkeeping(String what, long rows, long heapBytes) {
    long bytes = rows * ROW_BOOKKEEPING_BYTES;
    if (bytes > heapBytes) {
      throw new IllegalArgumentException(what + " has " + rows + " rows, whose bookkeeping (a start, a length and"
          + " a valid count per row, " + ROW_BOOKKEEPING_BYTES + " bytes) takes " + bytes + " bytes, more than this"
          + " JVM's whole heap (" + heapBytes + " bytes, -Xmx); expected fewer rows per batch, or a larger heap");
    }
  }

  /**
   * Makes what a batch of {@code rows} rows keeps per row (bookkeeping, copies of the caller's per-row arrays): below
   * the whole heap {@link #checkRowBookkeeping} lets through, what else the heap holds decides whether it fits, so a
   * heap that runs out here is the argument's size too.
   */
  static <T> T bookRows(String what, long rows, Supplier<T> allocation) {
    try {
      return allocation.get();
    } catch (OutOfMemoryError e) {
      long heap = Runtime.getRuntime().maxMemory();
      throw new IllegalArgumentException(what + " has " + rows + " rows, whose copies and bookkeeping (at least "
          + ROW_BOOKKEEPING_BYTES + " bytes a row) did not fit in what this JVM's heap (" + heap + " bytes, -Xmx) had"
          + " free; expected fewer or shorter rows per batch, or a larger heap", e);
    }
  }

  static void checkPaddedShape(String name, long elements, int n, int length, int dim) {
    if (n < 0 || length < 0 || dim <= 0) {
      throw new IllegalArgumentException("shape [n=" + n + ", length=" + length + ", dim=" + dim
          + "]; expected n >= 0, length >= 0, dim >= 1");
    }
    long expected = (long) n * length * dim;
    checkPaddedTokens(n, length, dim);
    if (elements != expected) {
      throw new IllegalArgumentException(name + " holds " + elements + " elements; expected " + expected
          + " for shape [" + n + ", " + length + ", " + dim + "]");
    }
  }

  /** A copy of {@code given}, checked as copied as offsets over {@code elements} elements of dim {@code dim}. */
  static int[] checkPackedShape(String name, long elements, int[] given, int dim) {
    int[] offsets = checkOffsets(given, dim);
    long tokens = elements / dim;
    if (elements % dim != 0) {
      throw new IllegalArgumentException(name + " holds " + elements + " elements, not a multiple of dim " + dim);
    }
    if (offsets[offsets.length - 1] != tokens) {
      throw new IllegalArgumentException("offsets end at " + offsets[offsets.length - 1] + "; expected T = "
          + tokens + " (" + name + " holds " + elements + " elements of dim " + dim + ")");
    }
    return offsets;
  }

  /**
   * A copy of {@code given} after checking {@code dim >= 1} and offsets of N+1 entries from 0, never decreasing,
   * whose rows the heap can book: checked as copied, since the caller's array could change while it is checked.
   */
  private static int[] checkOffsets(int[] given, int dim) {
    Arguments.nonNull(given, "offsets");
    if (dim <= 0) {
      throw new IllegalArgumentException("dim = " + dim + "; expected dim >= 1");
    }
    if (given.length == 0) {
      throw new IllegalArgumentException("offsets is empty; expected N+1 entries starting at 0");
    }
    String what = "offsets of length " + given.length;
    checkRowBookkeeping(what, given.length - 1L, Runtime.getRuntime().maxMemory());
    int[] offsets = bookRows(what, given.length - 1L, given::clone);
    if (offsets[0] != 0) {
      throw new IllegalArgumentException("offsets[0] = " + offsets[0] + "; expected 0");
    }
    for (int i = 1; i < offsets.length; i++) {
      if (offsets[i] < offsets[i - 1]) {
        throw new IllegalArgumentException("offsets not monotone: offsets[" + i + "] = " + offsets[i]
            + " < offsets[" + (i - 1) + "] = " + offsets[i - 1]);
      }
    }
    return offsets;
  }
}
