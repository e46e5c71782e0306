package dev.maxsim4j.cli.io;

/** Text from a file, made safe to quote in a one-line error message. */
final class Printable {
  private static final int MAX = 120;

  private Printable() {}

  /** {@code text} with control characters as '?' and cut to a readable length. */
  static String of(String text) {
    String s = text.replaceAll("\\p{Cntrl}", "?");
    return s.length() <= MAX ? s : s.substring(0, MAX - 3) + "...";
  }
}
