package dev.maxsim4j.cli.io;

/**
 * A count and its noun for a message ("1 byte", "0 bytes", "3 queries"), so that a count of one never reads as
 * "1 bytes".
 */
public final class Counts {
  private Counts() {}

  /**
   * {@code n}, a space and {@code singular} when {@code n} is 1, else {@code plural}: {@code of(1, "query",
   * "queries")} is "1 query", {@code of(2, "query", "queries")} is "2 queries".
   */
  public static String of(long n, String singular, String plural) {
    return n + " " + (n == 1 ? singular : plural);
  }

  /**
   * As {@link #of(long, String, String)} with the plural {@code singular + "s"}, for nouns that take a plain "s"
   * ("byte", "file", "token"; not "query" or "axis"): {@code of(1, "byte")} is "1 byte", {@code of(8, "byte")} is
   * "8 bytes".
   */
  public static String of(long n, String singular) {
    return of(n, singular, singular + "s");
  }
}
