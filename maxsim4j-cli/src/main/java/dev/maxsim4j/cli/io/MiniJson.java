package dev.maxsim4j.cli.io;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Just enough JSON for safetensors headers: objects, arrays, strings, integers (as Long), other numbers
 * (as Double), true/false/null. Throws IllegalArgumentException with the position on bad input, on a key
 * given twice in one object, on nesting deeper than {@value #MAX_DEPTH} and past the limits a caller sets on
 * array entries and values (checked as the text is read, so a hostile text is refused before its tree fills the
 * heap).
 */
public final class MiniJson {
  /** Deeper nesting than any real header or chart file; bounds the recursion so it cannot overflow the stack. */
  static final int MAX_DEPTH = 64;
  private final String s;
  private final int maxArray;
  private final long maxValues;
  private int pos;
  private int depth;
  private long values;

  private static final Pattern JSON_NUMBER = Pattern.compile("-?(0|[1-9]\\d*)(\\.\\d+)?([eE][+-]?\\d+)?");

  private MiniJson(String s, int maxArray, long maxValues) {
    this.s = s;
    this.maxArray = maxArray;
    this.maxValues = maxValues;
  }

  public static Object parse(String text) {
    return parse(text, Integer.MAX_VALUE, Long.MAX_VALUE);
  }

  /**
   * As {@link #parse(String)}, refusing an array of more than {@code maxArray} entries or more than {@code maxValues}
   * values in all.
   */
  public static Object parse(String text, int maxArray, long maxValues) {
    MiniJson p = new MiniJson(text, maxArray, maxValues);
    Object v = p.value();
    p.skipSpace();
    if (p.pos != text.length()) {
      throw p.error("trailing characters");
    }
    return v;
  }

  /** A JSON string literal for {@code value}. */
  public static String quote(String value) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : value.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }

  /**
   * A parsed value as JSON text, as in a message: strings quoted, so that a shape of {@code [3, "4"]} does not read
   * as the valid {@code [3, 4]}.
   */
  static String text(Object value) {
    return switch (value) {
      case null -> "null";
      case String str -> quote(str);
      case List<?> list -> list.stream().map(MiniJson::text).collect(Collectors.joining(", ", "[", "]"));
      case Map<?, ?> map -> map.entrySet().stream().map(e -> quote(String.valueOf(e.getKey())) + ": "
          + text(e.getValue())).collect(Collectors.joining(", ", "{", "}"));
      default -> String.valueOf(value);
    };
  }

  /** {@code value} as a JSON string literal for a message: a header's text may be megabytes long. */
  static String shown(String value) {
    return Printable.of(quote(value));
  }

  private Object value() {
    if (++values > maxValues) {
      throw error("more than " + maxValues + " values");
    }
    skipSpace();
    if (pos >= s.length()) {
      throw error("unexpected end");
    }
    char c = s.charAt(pos);
    return switch (c) {
      case '{', '[' -> nested(c);
      case '"' -> string();
      case 't' -> literal("true", Boolean.TRUE);
      case 'f' -> literal("false", Boolean.FALSE);
      case 'n' -> literal("null", null);
      default -> number();
    };
  }

  private Object nested(char open) {
    if (++depth > MAX_DEPTH) {
      throw error("nesting deeper than " + MAX_DEPTH + " levels");
    }
    Object v = open == '{' ? object() : array();
    depth--;
    return v;
  }

  private Map<String, Object> object() {
    Map<String, Object> m = new LinkedHashMap<>();
    pos++;
    skipSpace();
    if (peek() == '}') {
      pos++;
      return m;
    }
    while (true) {
      skipSpace();
      String key = string();
      skipSpace();
      expect(':');
      if (m.containsKey(key)) {
        throw error("key " + shown(key) + " given twice");
      }
      m.put(key, value());
      skipSpace();
      if (peek() == ',') {
        pos++;
      } else {
        expect('}');
        return m;
      }
    }
  }

  private List<Object> array() {
    List<Object> l = new ArrayList<>();
    pos++;
    skipSpace();
    if (peek() == ']') {
      pos++;
      return l;
    }
    while (true) {
      if (l.size() == maxArray) {
        throw error("an array of more than " + maxArray + " entries");
      }
      l.add(value());
      skipSpace();
      if (peek() == ',') {
        pos++;
      } else {
        expect(']');
        return l;
      }
    }
  }

  private String string() {
    expect('"');
    StringBuilder b = new StringBuilder();
    while (pos < s.length()) {
      char c = s.charAt(pos++);
      if (c == '"') {
        return b.toString();
      }
      if (c < 0x20) { // JSON escapes them: a raw one is no JSON, which other readers refuse
        throw error("a control character " + quote(String.valueOf(c)) + " in a string");
      }
      if (c == '\\') {
        if (pos >= s.length()) {
          break;
        }
        char e = s.charAt(pos++);
        switch (e) {
          case 'n' -> b.append('\n');
          case 't' -> b.append('\t');
          case 'r' -> b.append('\r');
          case 'b' -> b.append('\b');
          case 'f' -> b.append('\f');
          case 'u' -> {
            char unit = escapedUnit();
            // a lone half of a surrogate pair is no Unicode text: other readers (serde_json) refuse it, and written
            // back as UTF-8 it would turn into '?'
            if (Character.isHighSurrogate(unit) && s.startsWith("\\u", pos)) {
              pos += 2;
              char low = escapedUnit();
              if (!Character.isLowSurrogate(low)) {
                throw error("a lone surrogate " + escape(unit) + " (followed by " + escape(low) + ")");
              }
              b.append(unit).append(low);
            } else if (Character.isSurrogate(unit)) {
              throw error("a lone surrogate " + escape(unit));
            } else {
              b.append(unit);
            }
          }
          case '"', '\\', '/' -> b.append(e);
          // any other is no JSON: read as the letter it escapes, a name would differ from what other readers see
          default -> throw error("bad escape " + quote("\\" + e));
        }
      } else {
        b.append(c);
      }
    }
    throw error("unterminated string");
  }

  /** The UTF-16 unit of the four hex digits at {@code pos} (after a backslash and a 'u'). */
  private char escapedUnit() {
    String hex = s.substring(pos, Math.min(s.length(), pos + 4));
    if (!hex.matches("[0-9a-fA-F]{4}")) {
      throw error("bad escape " + quote("\\u" + hex));
    }
    pos += 4;
    return (char) Integer.parseInt(hex, 16);
  }

  private static String escape(char unit) {
    return String.format("\\u%04x", (int) unit);
  }

  private Object number() {
    int start = pos;
    while (pos < s.length() && "+-0123456789.eE".indexOf(s.charAt(pos)) >= 0) {
      pos++;
    }
    String t = s.substring(start, pos);
    if (t.isEmpty()) {
      throw error(pos < s.length() ? "unexpected character " + character(s.charAt(pos)) : "unexpected end");
    }
    // JSON's grammar, not Java's: Java takes "02", "+1" and "1." too, which other readers of the file refuse
    if (!JSON_NUMBER.matcher(t).matches()) {
      throw error("bad number '" + Printable.of(t) + "'");
    }
    try {
      // "-0" is the float -0.0 to other readers (serde_json), so that a shape or an offset of -0 is refused there
      return t.matches("-?\\d+") && !t.equals("-0") ? (Object) Long.parseLong(t) : (Object) Double.parseDouble(t);
    } catch (NumberFormatException e) {
      throw error("bad number '" + Printable.of(t) + "' (past the 64-bit integers)");
    }
  }

  /** A character for a message: quoted where it prints, else its code point (and what a byte-order mark is). */
  private static String character(char c) {
    if (c == '\ufeff') {
      return "U+FEFF (a byte-order mark)";
    }
    return c == '"' || c == '\\' ? quote(String.valueOf(c)) : Printable.character(c, '"');
  }

  private Object literal(String word, Object value) {
    if (!s.startsWith(word, pos)) {
      throw error("expected " + word);
    }
    pos += word.length();
    return value;
  }

  private char peek() {
    return pos < s.length() ? s.charAt(pos) : '\0';
  }

  private void expect(char c) {
    if (peek() != c) {
      throw error("expected '" + c + "'");
    }
    pos++;
  }

  private void skipSpace() {
    // JSON's four whitespace characters only: Java's whitespace holds more, which other readers refuse
    while (pos < s.length() && " \t\n\r".indexOf(s.charAt(pos)) >= 0) {
      pos++;
    }
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException("bad JSON at offset " + pos + ": " + what);
  }
}
