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

  /** Throws naming {@code what} (its {@code rows x columns} elements of {@code elementBytes}) and {@code instead}. */
  public static void require(long rows, long columns, int elementBytes, String what, String instead) {
    long heap = Runtime.getRuntime().maxMemory();
    long bytes;
    try {
      bytes = Math.multiplyExact(Math.multiplyExact(rows, columns), (long) elementBytes);
    } catch (ArithmeticException e) {
      bytes = Long.MAX_VALUE; // past any heap
    }
    if (bytes > heap) {
      throw new IllegalArgumentException(what + " = " + rows + " x " + columns + " elements of " + elementBytes
          + " bytes = " + bytes + " bytes, more than this JVM's whole heap (" + heap + " bytes, -Xmx); " + instead);
    }
  }
}
