package dev.maxsim4j;

import dev.maxsim4j.internal.HeapLimit;

/**
 * Checks of public arguments: each failure is an {@link IllegalArgumentException} that names the argument,
 * what it was and what was expected (for a null argument, that it is null: none is expected to be).
 */
final class Arguments {
  /** The longest Java array the JVM reliably allocates (a few header words below 2^31-1). */
  static final int MAX_ARRAY = Integer.MAX_VALUE - 8;

  private Arguments() {}

  static <T> T nonNull(T value, String name) {
    if (value == null) {
      throw new IllegalArgumentException(name + " is null");
    }
    return value;
  }

  /**
   * Checks that {@code rows x columns} elements fit one Java array; else names {@code what} (e.g. "scores of
   * queries x documents"), the sizes, the limit and what to do instead. The message is built only then: this
   * runs on every call.
   */
  static int arraySize(long rows, long columns, String what, String instead) {
    if (rows < 0 || columns < 0 || rows != 0 && columns > MAX_ARRAY / rows) {
      String size = Math.multiplyHigh(rows, columns) == 0 && rows * columns >= 0 ? " = " + rows * columns : "";
      throw new IllegalArgumentException(what + " = " + rows + " x " + columns + size
          + " elements, more than one Java array holds (" + MAX_ARRAY + "); " + instead);
    }
    return (int) (rows * columns);
  }

  /** As {@link #arraySize} for a result of {@code elementBytes}-byte elements, within the heap ({@link HeapLimit}). */
  static int resultSize(long rows, long columns, int elementBytes, String what, String instead) {
    int elements = arraySize(rows, columns, what, instead);
    HeapLimit.require(rows, columns, elementBytes, what, instead);
    return elements;
  }

  /** As {@link #resultSize} for a result of {@code rows} arrays per kind ({@link HeapLimit#requireRows}). */
  static void rowsResultSize(long rows, long columns, int elementBytes, int arrays, boolean flatCopy, String what,
      String instead) {
    arraySize(rows, columns, what, instead);
    HeapLimit.requireRows(rows, columns, elementBytes, arrays, flatCopy, what, instead);
  }

  /** {@code 0 <= index < size}, as an argument check. */
  static int index(int index, int size, String name) {
    if (index < 0 || index >= size) {
      throw new IllegalArgumentException(name + " = " + index + "; expected " + (size == 0 ? "none: no " + name
          + " exists here (0 of them)" : "0 <= " + name + " < " + size));
    }
    return index;
  }
}
