package dev.maxsim4j;

import java.util.function.IntFunction;

/**
 * Arrays as text for {@code toString}: whole while short, otherwise the first entries and a count of the rest, so
 * that printing the result of a call over a large corpus does not build a string of every score.
 */
final class ArrayText {
  /** Entries printed per level before the rest is counted. */
  static final int SHOWN = 16;

  private ArrayText() {}

  static String of(float[] a) {
    return a == null ? "null" : join(a.length, i -> Float.toString(a[i]));
  }

  static String of(int[] a) {
    return a == null ? "null" : join(a.length, i -> Integer.toString(a[i]));
  }

  static String of(float[][] a) {
    return a == null ? "null" : join(a.length, i -> of(a[i]));
  }

  static String of(int[][] a) {
    return a == null ? "null" : join(a.length, i -> of(a[i]));
  }

  private static String join(int length, IntFunction<String> entry) {
    StringBuilder s = new StringBuilder("[");
    int shown = Math.min(length, SHOWN);
    for (int i = 0; i < shown; i++) {
      s.append(i == 0 ? "" : ", ").append(entry.apply(i));
    }
    if (length > shown) {
      s.append(", ... (").append(length - shown).append(" more)");
    }
    return s.append(']').toString();
  }
}
