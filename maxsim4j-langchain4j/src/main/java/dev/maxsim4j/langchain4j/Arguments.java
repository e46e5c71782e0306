package dev.maxsim4j.langchain4j;

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
}
