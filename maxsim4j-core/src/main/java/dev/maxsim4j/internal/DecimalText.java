package dev.maxsim4j.internal;

import java.util.regex.Pattern;

/**
 * Whole numbers in the settings a user writes (system properties): decimal ASCII digits with an optional minus, no
 * sign or leading zero. Long.parseLong alone also takes {@code +8}, {@code 08} (octal to a C reader) and other
 * scripts' digits, values a user may not have meant.
 */
public final class DecimalText {
  private static final Pattern INTEGER = Pattern.compile("-?(0|[1-9][0-9]{0,18})");

  private DecimalText() {}

  /** {@code s} as a long; a NumberFormatException where it is not written as above or past a long's range. */
  public static long parseLong(String s) {
    if (!INTEGER.matcher(s).matches()) {
      throw new NumberFormatException("not a decimal integer: '" + s + "'");
    }
    return Long.parseLong(s);
  }

  /** As {@link #parseLong}, within an int's range. */
  public static int parseInt(String s) {
    long n = parseLong(s);
    if (n != (int) n) {
      throw new NumberFormatException("past an int's range: '" + s + "'");
    }
    return (int) n;
  }
}
