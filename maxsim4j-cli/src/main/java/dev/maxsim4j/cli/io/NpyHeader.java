package dev.maxsim4j.cli.io;

import java.util.ArrayList;
import java.util.List;

/**
 * The Python dict literal of a .npy header ({@code {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }}),
 * parsed strictly: every key once, a string dtype, non-negative integer dimensions.
 */
record NpyHeader(NdArray.ElementType type, long[] shape) {
  private static final int MAX_DIMS = 64;
  /** The most characters of a header an error message shows. */
  private static final int SHOWN = 200;

  static NpyHeader parse(String text, String file) {
    Parser p = new Parser(text, file);
    String descr = null;
    Boolean fortran = null;
    long[] shape = null;
    p.expect('{');
    while (!p.peekIs('}')) {
      String key = p.string();
      p.expect(':');
      switch (key) {
        case "descr" -> {
          p.once(descr, key);
          if (p.peekIs('[') || p.peekIs('{')) {
            throw p.error("a structured dtype; expected one of " + ACCEPTED);
          }
          if (!p.peekIs('\'') && !p.peekIs('"')) {
            throw p.error(p.here() + " where the dtype string belongs; expected one of " + ACCEPTED);
          }
          descr = p.string();
        }
        case "fortran_order" -> {
          p.once(fortran, key);
          fortran = p.bool();
        }
        case "shape" -> {
          p.once(shape, key);
          shape = p.tuple();
        }
        default -> throw p.error("an unknown key '" + Printable.of(key)
            + "'; expected descr, fortran_order and shape");
      }
      if (!p.peekIs('}')) {
        p.expect(',');
      }
    }
    p.expect('}');
    p.end();
    if (descr == null || fortran == null || shape == null) {
      throw new IllegalArgumentException(file + ": .npy header lacks "
          + (descr == null ? "'descr'" : fortran == null ? "'fortran_order'" : "'shape'") + ": " + p.shown());
    }
    if (fortran && shape.length > 1) {
      throw new IllegalArgumentException(file + " is in Fortran order; expected C order (np.ascontiguousarray)");
    }
    return new NpyHeader(type(descr, file), shape);
  }

  private static final String ACCEPTED = "float32 '<f4', float16 '<f2', bool '|b1', uint8 '|u1', int8 '|i1',"
      + " int32 '<i4' or int64 '<i8'";

  /** The element type of a dtype string, or an IllegalArgumentException naming the dtype. */
  static NdArray.ElementType type(String descr, String file) {
    if (descr.length() >= 2) {
      // without a byte-order character NumPy reads the native order ('i1' as '|i1', 'f4' as '=f4')
      boolean ordered = "<>|=".indexOf(descr.charAt(0)) >= 0;
      char order = ordered ? descr.charAt(0) : '=';
      String kindSize = ordered ? descr.substring(1) : descr;
      boolean single = kindSize.equals("b1") || kindSize.equals("u1") || kindSize.equals("i1");
      if (order == '<' || order == '|' || order == '=' && java.nio.ByteOrder.nativeOrder()
          == java.nio.ByteOrder.LITTLE_ENDIAN || (single && order == '>')) {
        switch (kindSize) {
          case "f4": return NdArray.ElementType.F32;
          case "f2": return NdArray.ElementType.F16;
          case "b1": return NdArray.ElementType.BOOL;
          case "u1": return NdArray.ElementType.U8;
          case "i1": return NdArray.ElementType.I8;
          case "i4": return NdArray.ElementType.I32;
          case "i8": return NdArray.ElementType.I64;
          default: break;
        }
      }
    }
    throw new UnsupportedDtypeException(file, "'" + Printable.of(describe(descr)) + "'", ACCEPTED);
  }

  /** The dtype string with NumPy's name for it, e.g. {@code <u2 (uint16)} or {@code >f4 (big-endian float32)}. */
  static String describe(String descr) {
    if (descr.isEmpty()) {
      return descr;
    }
    // no byte-order character: the native order, as NumPy reads it
    String kindSize = "<>|=".indexOf(descr.charAt(0)) < 0 ? descr : descr.substring(1);
    if (kindSize.isEmpty()) {
      return descr;
    }
    String kind = switch (kindSize.charAt(0)) {
      case 'f' -> "float";
      case 'i' -> "int";
      case 'u' -> "uint";
      case 'c' -> "complex";
      case 'b' -> "bool";
      case 'O' -> "object";
      case 'U' -> "unicode string";
      case 'S' -> "byte string";
      case 'V' -> "raw bytes (void)";
      case 'M' -> "datetime64";
      case 'm' -> "timedelta64";
      default -> null;
    };
    if (kind == null) {
      return descr;
    }
    String size = kindSize.substring(1);
    String name = switch (kind) {
      case "float", "int", "uint", "complex" -> size.matches("\\d{1,3}") ? kind + (8 * Integer.parseInt(size)) : kind;
      default -> kind;
    };
    boolean big = descr.charAt(0) == '>' && !size.equals("1");
    return descr + " (" + (big ? "big-endian " : "") + name + ")";
  }

  static String descr(NdArray.ElementType type) {
    return switch (type) {
      case F32 -> "<f4";
      case F16 -> "<f2";
      case BOOL -> "|b1";
      case U8 -> "|u1";
      case I8 -> "|i1";
      case I32 -> "<i4";
      case I64 -> "<i8";
      case BF16 -> throw new IllegalArgumentException("bfloat16 has no .npy dtype; write .safetensors instead");
      case F8_E4M3 -> throw new IllegalArgumentException("float8_e4m3fn has no .npy dtype; write .safetensors"
          + " instead");
    };
  }

  /** A cursor over the header text; every error names the file and shows the header. */
  private static final class Parser {
    private final String s;
    private final String file;
    private int pos;

    Parser(String s, String file) {
      this.s = s;
      this.file = file;
    }

    void skip() {
      // Python's whitespace between tokens, which NumPy's reader takes: Java's whitespace holds more
      while (pos < s.length() && " \t\n\r\f".indexOf(s.charAt(pos)) >= 0) {
        pos++;
      }
    }

    /**
     * What stands at the cursor, for a message: a character (its code point where it does not print), or the end
     * of a header that stops early.
     */
    String here() {
      if (pos >= s.length()) {
        return "the header's end (its length field may be too small)";
      }
      char c = s.charAt(pos);
      return Printable.character(c, c == '\'' ? '"' : '\'');
    }

    boolean peekIs(char c) {
      skip();
      return pos < s.length() && s.charAt(pos) == c;
    }

    void expect(char c) {
      if (!peekIs(c)) {
        throw error(here() + " where '" + c + "' belongs");
      }
      pos++;
    }

    /** Only padding may follow the dict: anything else means the header is not the dict it seems to be. */
    void end() {
      skip();
      if (pos < s.length()) {
        throw error("'" + Printable.of(s.substring(pos, Math.min(s.length(), pos + 20)).strip()) + "' after the dict;"
            + " expected only spaces and a newline");
      }
    }

    void once(Object seen, String key) {
      if (seen != null) {
        throw error("the key '" + key + "' twice");
      }
    }

    String string() {
      skip();
      char quote = pos < s.length() ? s.charAt(pos) : '\0';
      if (quote != '\'' && quote != '"') {
        throw error(here() + " at offset " + pos + " where a quoted key or value belongs");
      }
      int end = s.indexOf(quote, pos + 1);
      if (end < 0) {
        throw error("an unterminated string");
      }
      String v = s.substring(pos + 1, end);
      pos = end + 1;
      return v;
    }

    boolean bool() {
      skip();
      for (String word : new String[] {"True", "False"}) {
        if (s.startsWith(word, pos)) {
          pos += word.length();
          return word.equals("True");
        }
      }
      throw error("a fortran_order that is neither True nor False");
    }

    long[] tuple() {
      expect('(');
      List<Long> dims = new ArrayList<>();
      boolean comma = false;
      while (!peekIs(')')) {
        int start = pos;
        while (pos < s.length() && (Character.isLetterOrDigit(s.charAt(pos)) || s.charAt(pos) == '-'
            || s.charAt(pos) == '+' || s.charAt(pos) == '.')) {
          pos++;
        }
        String t = s.substring(start, pos);
        long dim;
        try {
          // Python writes ASCII digits (with an L after them in Python 2); Long.parseLong alone takes +3 and other
          // scripts' digits too
          if (!t.matches("-?(0|[1-9][0-9]{0,18})L?")) {
            throw new NumberFormatException(t);
          }
          dim = Long.parseLong(t.endsWith("L") ? t.substring(0, t.length() - 1) : t);
        } catch (NumberFormatException e) {
          throw error("a shape entry '" + Printable.of(t) + "'; expected non-negative integers");
        }
        if (dim < 0) {
          throw error("a negative dimension " + dim);
        }
        if (dims.size() == MAX_DIMS) {
          throw error("more than " + MAX_DIMS + " dimensions");
        }
        dims.add(dim);
        if (!peekIs(')')) {
          expect(',');
          comma = true;
        }
      }
      if (dims.size() == 1 && !comma) {
        // Python reads (60) as the number 60, not a shape: NumPy refuses such a header
        throw error("a shape (" + dims.get(0) + ") without the comma of a 1-tuple; expected (" + dims.get(0) + ",)");
      }
      expect(')');
      return dims.stream().mapToLong(Long::longValue).toArray();
    }

    /** The header for a message, cut short: a header may be a MiB long, an error message stays readable. */
    String shown() {
      String flat = s.strip().replaceAll("\\s+", " ");
      return Printable.of(flat.length() <= SHOWN ? flat : flat.substring(0, SHOWN) + "... (" + flat.length()
          + " characters)");
    }

    IllegalArgumentException error(String what) {
      return new IllegalArgumentException(file + ": .npy header has " + what + ": " + shown());
    }
  }
}
