package dev.maxsim4j.lucene;

/**
 * Checks of public arguments, as the core library makes them: an {@link IllegalArgumentException} naming the
 * argument.
 */
final class Arguments {
  private Arguments() {}

  static <T> T nonNull(T value, String name) {
    if (value == null) {
      throw new IllegalArgumentException(name + " is null");
    }
    return value;
  }

  /**
   * {@code rows} with each row read once and cloned (a null array or row stays null, for the caller's check to name):
   * the checks and every later use then read the same rows and values, where reading the caller's array again could
   * see a row or value another thread wrote after the check.
   */
  static float[][] copyRows(float[][] rows) {
    if (rows == null) {
      return null;
    }
    float[][] copy = rows.clone();
    for (int i = 0; i < copy.length; i++) {
      copy[i] = copy[i] == null ? null : copy[i].clone();
    }
    return copy;
  }

  /** Every value of {@code values} finite, else named as {@code name[i][k]}: what {@code purpose} needs. */
  static void requireFinite(float[][] values, String name, String purpose) {
    for (int i = 0; i < values.length; i++) {
      for (int k = 0; k < values[i].length; k++) {
        if (!Float.isFinite(values[i][k])) {
          throw new IllegalArgumentException(name + "[" + i + "][" + k + "] is " + values[i][k]
              + "; expected finite values to " + purpose);
        }
      }
    }
  }
}
