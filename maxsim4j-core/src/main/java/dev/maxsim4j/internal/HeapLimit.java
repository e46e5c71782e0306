package dev.maxsim4j.internal;

/**
 * Results refused before work where they would take more than this JVM's whole heap: a small input (a long masked
 * query, many one-token documents) can ask for a result no heap holds, and an OutOfMemoryError part way through
 * names none of it.
 */
public final class HeapLimit {
  /** What a training forward saves, as errors name it. */
  public static final String SAVED_ARGMAX = "saved argmax of pairs x longest query (masked slots included)";
  /** What to do about a training batch too large. */
  public static final String TRAIN_SMALLER = "train on smaller batches of queries or documents";
  /** What else shrinks the saved argmax. */
  public static final String ARGMAX_HINT = ", or end each query at its last valid token with withLengths";

  private HeapLimit() {}

  /** The saved argmax of a training forward on the heap: {@code pairs x stride} ints. */
  public static void requireArgmax(long pairs, long stride) {
    require(pairs, stride, Integer.BYTES, SAVED_ARGMAX, TRAIN_SMALLER + ARGMAX_HINT);
  }

  /**
   * Throws naming {@code what} (its {@code rows x columns} elements of {@code elementBytes}, one flat array) and
   * {@code instead}.
   */
  public static void require(long rows, long columns, int elementBytes, String what, String instead) {
    check(bytes(rows, columns, elementBytes, 0, false), rows, columns, elementBytes, "", what, instead);
  }

  /**
   * As {@link #require} for a result held as {@code arrays} arrays per row (a {@code float[rows][columns]} is one,
   * scores and indices two), {@code elementBytes} summed over them: each array's header, reference and alignment
   * count too (a float[13M][1] takes seven times its floats), and, where {@code flatCopy}, one flat array of every
   * element held beside the rows while they are filled.
   */
  public static void requireRows(long rows, long columns, int elementBytes, int arrays, boolean flatCopy,
      String what, String instead) {
    requireRows(rows, columns, elementBytes, arrays, flatCopy, 0, what, instead);
  }

  /**
   * As above, beside {@code held} bytes that stay on the heap while the result is made (the call's inputs, {@link
   * Tokens#heapBytes}): a result that fits the heap alone may not fit beside them.
   */
  public static void requireRows(long rows, long columns, int elementBytes, int arrays, boolean flatCopy, long held,
      String what, String instead) {
    long result = bytes(rows, columns, elementBytes, arrays, flatCopy);
    long heap = Runtime.getRuntime().maxMemory();
    if (result > heap - held) {
      String layout = " in " + rows + " rows of " + arrays + (arrays == 1 ? " array" : " arrays")
          + (flatCopy ? " and a flat copy" : "");
      throw new IllegalArgumentException(what + " = " + rows + " x " + columns + " elements of " + elementBytes
          + " bytes" + layout + " = " + (result == Long.MAX_VALUE ? "more than 2^63" : String.valueOf(result))
          + " bytes, " + (result > heap ? "more than this JVM's whole heap (" + heap + " bytes, -Xmx)"
          : "more than this JVM's heap (" + heap + " bytes, -Xmx) has beside the " + held + " bytes the inputs"
          + " hold there") + "; " + instead);
    }
  }

  /** Throws naming {@code what}, {@code bytes} of working memory one call holds at once, and {@code instead}. */
  public static void requireBytes(long bytes, String what, String instead) {
    long heap = Runtime.getRuntime().maxMemory();
    if (bytes > heap) {
      throw new IllegalArgumentException(what + " = " + bytes + " bytes, more than this JVM's whole heap (" + heap
          + " bytes, -Xmx); " + instead);
    }
  }

  /** The most a Java array's header (16 bytes), the reference to it (8) and its alignment (7) add to its elements. */
  public static final long ARRAY_OVERHEAD = 32;

  private static long bytes(long rows, long columns, int elementBytes, int arrays, boolean flatCopy) {
    try {
      long elements = Math.multiplyExact(Math.multiplyExact(rows, columns), (long) elementBytes);
      long overhead = Math.multiplyExact(rows, arrays * ARRAY_OVERHEAD);
      return Math.addExact(Math.addExact(elements, overhead), flatCopy ? elements : 0);
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE; // past any heap
    }
  }

  private static void check(long bytes, long rows, long columns, int elementBytes, String layout, String what,
      String instead) {
    if (bytes > Runtime.getRuntime().maxMemory()) {
      requireBytes(bytes, what + " = " + rows + " x " + columns + " elements of " + elementBytes + " bytes" + layout,
          instead);
    }
  }
}
