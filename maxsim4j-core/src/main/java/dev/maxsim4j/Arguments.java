package dev.maxsim4j;

/**
 * Checks of public arguments: each failure is an {@link IllegalArgumentException} that names the argument,
 * what it was and what was expected.
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
   * Checks that {@code size} elements fit one Java array; else names {@code what} (e.g. "scores of queries
   * x documents = 50000 x 50000"), the size, the limit and what to do instead.
   */
  static int arraySize(long size, String what, String instead) {
    if (size < 0 || size > MAX_ARRAY) {
      throw new IllegalArgumentException(what + " = " + size + " elements, more than one Java array holds ("
          + MAX_ARRAY + "); " + instead);
    }
    return (int) size;
  }

  /** {@code 0 <= index < size}, as an argument check. */
  static int index(int index, int size, String name) {
    if (index < 0 || index >= size) {
      throw new IllegalArgumentException(name + " = " + index + "; expected 0 <= " + name + " < " + size);
    }
    return index;
  }
}
