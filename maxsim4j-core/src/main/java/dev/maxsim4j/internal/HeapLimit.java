package dev.maxsim4j.internal;

import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Results and working arrays refused before work where the heap has no room for them beside what the call holds
 * (its inputs, the arrays it keeps at the same time): a small input (a long masked query, many empty documents) can
 * ask for a result no heap holds, and an OutOfMemoryError part way through names none of it.
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
   * they pass the whole heap, or what it has room for beside what the call running on this thread holds there
   * ({@link #beside}) and the room an array needs around it ({@link #fitsBeside}).
   */
  public static void requireBytes(long bytes, String what, String instead) {
    if (bytes > HEAP) {
      throw new IllegalArgumentException(what + " = " + shown(bytes) + " bytes, more than this JVM's whole heap ("
          + HEAP + " bytes, -Xmx); " + instead);
    }
    if (!fitsBeside(bytes)) {
      throw new IllegalArgumentException(what + " = " + bytes + " bytes, more than this JVM's heap (" + HEAP
          + " bytes, -Xmx) has room for beside the " + held() + " bytes the call holds there (its inputs and the"
          + " arrays it keeps at the same time) and as much again, up to an eighth of the heap, for the JVM around"
          + " it; " + instead);
    }
  }

  /**
   * Whether {@code bytes} of working memory pass {@link #requireBytes(long, String, String)}'s check with
   * {@code alsoHeld} bytes the call holds beside them counted too.
   */
  public static boolean fits(long bytes, long alsoHeld) {
    return bytes <= HEAP && fitsBeside(bytes, held() + alsoHeld);
  }

  /**
   * As {@link #requireBytes(long, String, String)} with {@code alsoHeld} bytes the call holds beside them counted too
   * ({@link #alsoHolding}), the message made only where the bytes are refused: a check on every call's path.
   */
  public static void requireBytes(long bytes, long alsoHeld, Supplier<String> what, String instead) {
    if (bytes > HEAP || !fitsBeside(bytes, held() + alsoHeld)) {
      alsoHolding(alsoHeld, () -> requireBytes(bytes, what.get(), instead));
    }
  }

  /** The heap left beside what the call running on this thread holds and {@code alsoHeld} bytes more. */
  public static long room(long alsoHeld) {
    return HEAP - held() - alsoHeld;
  }

  /** The heap's size, which does not change while the JVM runs. */
  private static final long HEAP = Runtime.getRuntime().maxMemory();

  /**
   * Whether {@code bytes} fit beside what the call holds and as much again, up to an eighth of the heap: the JVM's
   * own objects, and the contiguous regions a large array needs, take part of a heap that an array filling the rest
   * would not find; a small array beside a large input still fits.
   */
  private static boolean fitsBeside(long bytes) {
    return fitsBeside(bytes, held());
  }

  private static boolean fitsBeside(long bytes, long held) {
    return bytes <= HEAP - held - Math.min(bytes, HEAP / 8);
  }

  /**
   * What the call running on this thread holds on the heap, counted by every check the call makes: its inputs stay
   * reachable while it runs, so a result or working array that fits the heap alone may not fit beside them.
   */
  private static final ScopedValue<LongSupplier> HELD = ScopedValue.newInstance();

  /** Runs {@code call} with {@code held} (what it holds, counted when a check asks) beside every check. */
  public static <T> T beside(LongSupplier held, Supplier<T> call) {
    return ScopedValue.where(HELD, held).call(call::get);
  }

  /**
   * Runs {@code check} with {@code extra} bytes counted beside what the call holds: arrays it holds at the same time
   * as the one checked (a training forward's scores beside its saved argmax), so that parts that fit one by one do
   * not let through a whole that does not. The outer count is read before the binding, whose supplier would
   * otherwise ask itself.
   */
  public static void alsoHolding(long extra, Runnable check) {
    long held = held() + extra;
    beside(() -> held, () -> {
      check.run();
      return null;
    });
  }

  /** What the call running on this thread holds on the heap (0 outside a call). */
  public static long held() {
    return HELD.isBound() ? HELD.get().getAsLong() : 0;
  }

  private static String shown(long bytes) {
    return bytes == Long.MAX_VALUE ? "more than 2^63" : String.valueOf(bytes);
  }

  /** The most a Java array's header (16 bytes), the reference to it (8) and its alignment (7) add to its elements. */
  public static final long ARRAY_OVERHEAD = 32;

  private static long bytes(long rows, long columns, int elementBytes, int arrays, boolean flatCopy) {
    try {
      long elements = Math.multiplyExact(Math.multiplyExact(rows, columns), (long) elementBytes);
      if (arrays == 0) {
        return elements; // one array: the region it may round up to is within the room kept around it
      }
      // each row's arrays as the collector lays them out (large ones in whole regions), header and reference included
      long perArray = HeapRegions.footprint(Math.multiplyExact(columns, (long) elementBytes) / arrays + ARRAY_OVERHEAD);
      long inRows = Math.multiplyExact(Math.multiplyExact(rows, (long) arrays), perArray);
      return Math.addExact(inRows, flatCopy ? elements : 0);
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE; // past any heap
    }
  }

  private static void check(long bytes, long rows, long columns, int elementBytes, String layout, String what,
      String instead) {
    if (bytes > HEAP || !fitsBeside(bytes)) {
      requireBytes(bytes, what + " = " + rows + " x " + columns + " elements of " + elementBytes + " bytes" + layout,
          instead);
    }
  }
}
