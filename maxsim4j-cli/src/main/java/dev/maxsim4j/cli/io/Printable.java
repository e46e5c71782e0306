package dev.maxsim4j.cli.io;

import java.util.Locale;

/**
 * Text made safe to quote on one line of output (an error, a warning, a summary): control characters, line and
 * paragraph separators, the marks that turn text right to left, invisible format characters and lone surrogates
 * could split the line, forge another or disguise a name.
 */
public final class Printable {
  private static final int MAX = 120;

  private Printable() {}

  /** {@code text} from a file, one-line safe and cut to a readable length. */
  static String of(String text) {
    return cut(oneLine(text), MAX);
  }

  /**
   * {@code text} cut to at most {@code max} characters ending in "..." where it is longer: between whole
   * characters, never through the surrogate pair of one outside the BMP (an emoji), whose lone half prints as '?'.
   */
  public static String cut(String text, int max) {
    if (text.length() <= max) {
      return text;
    }
    int cut = Math.max(0, max - 3);
    if (cut > 0 && Character.isHighSurrogate(text.charAt(cut - 1))) {
      cut--;
    }
    return text.substring(0, cut) + "...";
  }

  /** {@code text} with every character that {@link #breaksLine} finds as '?'. */
  public static String oneLine(String text) {
    char[] out = null;
    for (int i = 0; i < text.length(); i++) {
      if (breaksLine(text, i)) {
        if (out == null) {
          out = text.toCharArray();
        }
        out[i] = '?';
      }
    }
    return out == null ? text : new String(out);
  }

  /**
   * One character for a message, between {@code quote}s where it prints as itself, else as its code point: a
   * character that breaks the line or reads as a space (a no-break space) would hide what the message points at.
   */
  public static String character(char c, char quote) {
    String one = String.valueOf(c);
    return breaksLine(one, 0) || c != ' ' && Character.isSpaceChar(c)
        ? String.format(Locale.ROOT, "U+%04X", (int) c) : quote + one + quote;
  }

  /** Whether the character at {@code i} of {@code s} could break or disguise a line it is printed on. */
  public static boolean breaksLine(String s, int i) {
    char c = s.charAt(i);
    return Character.isISOControl(c) || isLineOrDirection(c) || isInvisible(c) || isUnpairedSurrogate(s, i);
  }

  /**
   * A format character that prints as nothing (a zero-width space, a byte-order mark, the Arabic letter mark) makes
   * two names look alike; the joiners are kept, as real names (Persian words, emoji sequences) hold them.
   */
  private static boolean isInvisible(char c) {
    return Character.getType(c) == Character.FORMAT && c != '\u200c' && c != '\u200d';
  }

  private static boolean isLineOrDirection(char c) {
    return c == '\u2028' || c == '\u2029' || c == '\u200e' || c == '\u200f' || c >= '\u202a' && c <= '\u202e'
        || c >= '\u2066' && c <= '\u2069';
  }

  private static boolean isUnpairedSurrogate(String s, int i) {
    char c = s.charAt(i);
    if (Character.isHighSurrogate(c)) {
      return i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1));
    }
    return Character.isLowSurrogate(c) && (i == 0 || !Character.isHighSurrogate(s.charAt(i - 1)));
  }
}
