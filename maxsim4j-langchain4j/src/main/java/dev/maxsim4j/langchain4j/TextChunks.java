package dev.maxsim4j.langchain4j;

import java.util.function.IntFunction;

/**
 * Where a text can be cut for the BERT tokenizer without changing its word pieces, so that a long text is tokenized a
 * piece at a time: the tokenizer's native call and the Java objects it returns take hundreds of bytes a character or
 * word piece, so one call on a text of millions of them exhausted the memory and aborted the JVM from inside the
 * native code.
 *
 * <p>The tokenizer ends a word at a character by that character alone (whitespace, punctuation, a CJK ideograph), so
 * a cut next to one changes no word. Which characters those are is the tokenizer's own answer ({@link Kind}, asked of
 * it a character at a time), not Java's Unicode tables: the native library's are older, and Java calls punctuation
 * some characters it reads as letters. Where a stretch holds no boundary, it is one word: a cut inside it that leaves
 * more than 100 letters on each side (WordPiece's most a word, past which a word is [UNK]) changes no piece either,
 * since the word and both its halves are [UNK], which the encoder drops. Characters that vanish in normalization
 * ({@link Kind#NOTHING}) join the letters beside them, so a long text loses them before it is cut
 * ({@link #withoutNothing}): every stretch without a boundary is then letters, cut within a few hundred of them.
 * Special tokens' names need no care: the encoder lowercases them before and after, so the tokenizer reads them as
 * plain text.
 */
final class TextChunks {
  /** Characters the tokenizer is given at once where a text is longer: a few hundred thousand word pieces at most. */
  static final int CHARS = 1 << 16;
  /** Letters on each side of a cut inside a word: more than WordPiece's 100 characters a word. */
  static final int LONG_WORD = 101;

  /** What a character is to the tokenizer between two letters. */
  enum Kind {
    /** It ends the words beside it (whitespace, punctuation, CJK ideographs). */
    BOUNDARY,
    /** It adds to the word it is in. */
    LETTER,
    /** It vanishes in normalization (control and format characters, combining marks) and joins its neighbours. */
    NOTHING
  }

  private TextChunks() {}

  /**
   * The end of the chunk of {@code text} from {@code from}, chunks of about {@code chars} characters: the text's end;
   * else the last cut after ASCII whitespace in the second half of that span; else the last cut next to a boundary
   * there; else (a word longer than half the span) the first cut inside the word with {@value #LONG_WORD} letters on
   * each side, or next to the first boundary after it, whichever comes first.
   */
  static int end(String text, int from, int chars, IntFunction<Kind> kinds) {
    int limit = from + chars;
    if (limit >= text.length() || limit < 0) {
      return text.length();
    }
    int half = from + Math.max(1, chars / 2);
    for (int i = limit; i >= half; i--) {
      if (isAsciiSpace(text.charAt(i - 1))) {
        return i;
      }
    }
    for (int i = limit; i >= half; i--) {
      if (boundary(text, i, kinds)) {
        return i;
      }
    }
    // no boundary from half to limit: one word spans them, begun before half
    int before = 0; // its letters from half
    int cut = -1;
    int after = 0; // its letters from cut
    for (int i = half; i < text.length(); i += Character.charCount(text.codePointAt(i))) {
      if (i > half && boundary(text, i, kinds)) {
        return i;
      }
      if (kinds.apply(text.codePointAt(i)) == Kind.LETTER) {
        if (cut < 0 && ++before == LONG_WORD) {
          cut = i + Character.charCount(text.codePointAt(i));
        } else if (cut >= 0 && ++after == LONG_WORD) {
          return cut;
        }
      }
    }
    return text.length();
  }

  /** Whether the words of {@code text} stay the same when it is cut before index {@code i} (0 < i < length). */
  static boolean boundary(String text, int i, IntFunction<Kind> kinds) {
    if (Character.isHighSurrogate(text.charAt(i - 1)) && Character.isLowSurrogate(text.charAt(i))) {
      return false;
    }
    return kinds.apply(text.codePointBefore(i)) == Kind.BOUNDARY || kinds.apply(text.codePointAt(i)) == Kind.BOUNDARY;
  }

  /**
   * {@code text} without the characters that vanish in normalization (control and format characters, combining
   * marks): the tokenizer reads the same words in it, since each vanishes whatever surrounds it. Those before a
   * spacing combining mark stay: one of combining class 0 (U+034F) keeps the marks beside it from being reordered
   * by NFD before it is stripped.
   */
  static String withoutNothing(String text, IntFunction<Kind> kinds) {
    StringBuilder out = null;
    int vanishing = -1; // where the run of vanishing characters before i began, or -1
    for (int i = 0; i < text.length(); ) {
      int c = text.codePointAt(i);
      int next = i + Character.charCount(c);
      if (kinds.apply(c) == Kind.NOTHING) {
        if (out == null) {
          out = new StringBuilder(text.length()).append(text, 0, i);
        }
        vanishing = vanishing < 0 ? i : vanishing;
      } else if (out != null) {
        if (vanishing >= 0 && Character.getType(c) == Character.COMBINING_SPACING_MARK) {
          out.append(text, vanishing, i);
        }
        vanishing = -1;
        out.append(text, i, next);
      }
      i = next;
    }
    return out == null ? text : out.toString();
  }

  private static boolean isAsciiSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  }
}
