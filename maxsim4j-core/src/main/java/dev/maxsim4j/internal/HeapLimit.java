package dev.maxsim4j.internal;

import java.util.function.LongSupplier;
import java.util.function.Supplier;

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
    check(bytes(rows, columns, elementBytes, arrays, flatCopy), rows, columns, elementBytes, " in " + rows
        + " rows of " + arrays + (arrays == 1 ? " array" : " arrays") + (flatCopy ? " and a flat copy" : ""), what,
        instead);
  }

  /**
   * Throws naming {@code what}, {@code bytes} of working memory one call holds at once, and {@code instead}: where
   * they pass the whole heap, or what it has beside the inputs of the call running on this thread ({@link #beside}).
   */
  public static void requireBytes(long bytes, String what, String instead) {
    long heap = Runtime.getRuntime().maxMemory();
    if (bytes > heap) {
      throw new IllegalArgumentException(what + " = " + shown(bytes) + " bytes, more than this JVM's whole heap ("
          + heap + " bytes, -Xmx); " + instead);
    }
    if (!fitsBeside(bytes, heap)) {
      throw new IllegalArgumentException(what + " = " + bytes + " bytes, more than this JVM's heap (" + heap
          + " bytes, -Xmx) has room for beside the " + held() + " bytes the call's inputs hold there and the eighth"
          + " of it kept for everything else; " + instead);
    }
  }

  /**
   * Whether {@code bytes} fit beside the call's inputs and an eighth of the heap: the JVM's own objects, and the
   * contiguous regions a large array needs, take part of a heap that a result filling the rest would not find.
   */
  private static boolean fitsBeside(long bytes, long heap) {
    return !HELD.isBound() || bytes <= heap - heap / 8 - held();
  }

  /**
   * Runs {@code check} with {@code extra} bytes counted beside the call's inputs: arrays the call holds at the same
   * time as the one checked (a training forward's scores beside its saved argmax), so that checks of parts that fit
   * one by one do not let through a whole that does not.
   */
  public static void alsoHolding(long extra, Runnable check) {
    long held = held() + extra;
    beside(() -> held, () -> {
      check.run();
      return null;
    });
  }

  /** The heap the inputs of the call running on this thread hold (0 outside a call). */
  public static long held() {
    return HELD.isBound() ? HELD.get().getAsLong() : 0;
  }

  /**
   * The heap the inputs of the call running on this thread hold, counted by every check the call makes: the inputs
   * stay reachable while it runs, so a result or working array that fits the heap alone may not fit beside them.
   */
  private static final ScopedValue<LongSupplier> HELD = ScopedValue.newInstance();

  /** Runs {@code call} with {@code held} (its inputs' heap, counted when a check asks) beside every check. */
  public static <T> T beside(LongSupplier held, Supplier<T> call) {
    return ScopedValue.where(HELD, held).call(call::get);
  }

  private static String shown(long bytes) {
    return bytes == Long.MAX_VALUE ? "more than 2^63" : String.valueOf(bytes);
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
    long heap = Runtime.getRuntime().maxMemory();
    if (bytes > heap || !fitsBeside(bytes, heap)) {
      requireBytes(bytes, what + " = " + rows + " x " + columns + " elements of " + elementBytes + " bytes" + layout,
          instead);
    }
  }
}
