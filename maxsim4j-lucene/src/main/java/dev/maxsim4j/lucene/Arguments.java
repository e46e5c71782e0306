package dev.maxsim4j.lucene;

/** Checks of public arguments, as the core library makes them: an {@link IllegalArgumentException} naming the argument. */
final class Arguments {
  private Arguments() {}

  static <T> T nonNull(T value, String name) {
    if (value == null) {
      throw new IllegalArgumentException(name + " is null");
    }
    return value;
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
