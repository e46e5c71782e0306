package dev.maxsim4j.spark;

/**
 * An id as an error message quotes it: {@code 'x'}, with the characters that would break the message's line (control
 * characters, line and paragraph separators) written as Java escapes, so that a message naming an id stays one line
 * whole, as the job's one-line report and log readers need it ({@code 'x\ny'}, not a line cut after {@code 'x}). A
 * backslash and a quote are escaped too, so that the quoted text reads back as exactly one id: {@code 'a\\nb'} is
 * the id of four characters, {@code 'a\nb'} the one with a line break.
 */
final class IdText {
  private IdText() {}

  static String quoted(Object id) {
    if (id == null) {
      return "null"; // unquoted: the string id "null" reads 'null'
    }
    String text = id.toString();
    StringBuilder out = new StringBuilder(text.length() + 2).append('\'');
    text.codePoints().forEach(c -> {
      switch (c) {
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        case '\\' -> out.append("\\\\");
        case '\'' -> out.append("\\'");
        default -> {
          if (Character.isISOControl(c) || c == 0x2028 || c == 0x2029 || Character.getType(c) == Character.SURROGATE) {
            out.append(String.format("\\u%04x", c));
          } else {
            out.appendCodePoint(c);
          }
        }
      }
    });
    return out.append('\'').toString();
  }
}
