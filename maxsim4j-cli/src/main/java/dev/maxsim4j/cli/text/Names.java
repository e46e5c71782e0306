package dev.maxsim4j.cli.text;

import dev.maxsim4j.cli.io.Printable;
import java.util.Locale;

/**
 * File names written on one line: a backslash, every control character and the text-direction marks are
 * escaped ({@code \\}, {@code \n}, {@code \t}, {@code \r}, otherwise {@code \}{@code uXXXX}), so that a name
 * holding a newline can neither split a line of the index manifest nor forge a line of output.
 */
public final class Names {
  private Names() {}

  public static String escape(String name) {
    StringBuilder out = new StringBuilder(name.length());
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      switch (c) {
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\t' -> out.append("\\t");
        case '\r' -> out.append("\\r");
        default -> {
          if (Printable.breaksLine(name, i)) {
            out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.toString();
  }

  /** The name {@link #escape} wrote; an escape it never writes is an IllegalArgumentException. */
  public static String unescape(String escaped) {
    StringBuilder out = new StringBuilder(escaped.length());
    for (int i = 0; i < escaped.length(); i++) {
      char c = escaped.charAt(i);
      if (c != '\\') {
        out.append(c);
        continue;
      }
      if (i + 1 >= escaped.length()) {
        throw new IllegalArgumentException("a name ends in a lone backslash: " + escaped);
      }
      char e = escaped.charAt(++i);
      switch (e) {
        case '\\' -> out.append('\\');
        case 'n' -> out.append('\n');
        case 't' -> out.append('\t');
        case 'r' -> out.append('\r');
        case 'u' -> {
          if (i + 4 >= escaped.length()) {
            throw new IllegalArgumentException("a name has a cut \\u escape: " + escaped);
          }
          String hex = escaped.substring(i + 1, i + 5);
          if (!hex.matches("[0-9a-fA-F]{4}")) {
            throw new IllegalArgumentException("a name has a bad \\u escape '" + hex + "': " + escaped);
          }
          out.append((char) Integer.parseInt(hex, 16));
          i += 4;
        }
        default -> throw new IllegalArgumentException("a name has an unknown escape \\" + e + ": " + escaped);
      }
    }
    return out.toString();
  }
}
