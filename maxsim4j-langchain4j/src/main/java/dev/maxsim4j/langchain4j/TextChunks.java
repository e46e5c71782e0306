package dev.maxsim4j.langchain4j;

/**
 * Where a text can be cut for the BERT tokenizer without changing its word pieces, so that a long text is tokenized a
 * piece at a time: the tokenizer's native call and the Java objects it returns take hundreds of bytes a word piece,
 * so one call on a text of millions of pieces exhausted the memory and aborted the JVM from inside the native code.
 *
 * <p>A cut is safe next to a character that ends a word whatever surrounds it, as all-MiniLM-L6-v2's tokenizer reads
 * it (BertNormalizer, then BertPreTokenizer): whitespace (ASCII, or a space separator, which the normalizer makes a
 * space), punctuation (ASCII, or Unicode's), or a CJK ideograph (which the normalizer surrounds by spaces); never
 * inside a surrogate pair. Control and format characters, which the normalizer deletes, join the words beside them
 * and are no place to cut. Special tokens' names need no care: the encoder lowercases them before, so the tokenizer
 * reads them as plain text.
 */
final class TextChunks {
  /** Characters the tokenizer is given at once where a text is longer: a few hundred thousand word pieces at most. */
  static final int CHARS = 1 << 16;

  private TextChunks() {}

  /**
   * The end of the chunk of {@code text} from {@code from}, chunks of at most about {@code chars} characters: the
   * text's end, else the last safe cut after ASCII whitespace in the second half of that span, else the last safe
   * cut there, else the first safe cut beyond it (a word longer than the span, which the tokenizer reads as one
   * [UNK] anyway), else the text's end.
   */
  static int end(String text, int from, int chars) {
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
      if (safeCut(text, i)) {
        return i;
      }
    }
    for (int i = limit + 1; i < text.length(); i++) {
      if (safeCut(text, i)) {
        return i;
      }
    }
    return text.length();
  }

  /** Whether the words of {@code text} stay the same when it is cut before index {@code i} (0 < i < length). */
  static boolean safeCut(String text, int i) {
    if (Character.isHighSurrogate(text.charAt(i - 1)) && Character.isLowSurrogate(text.charAt(i))) {
      return false;
    }
    return endsWords(text.codePointBefore(i)) || endsWords(text.codePointAt(i));
  }

  private static boolean isAsciiSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  }

  /** Whether the tokenizer ends a word at {@code c} whatever surrounds it (see the class comment). */
  static boolean endsWords(int c) {
    if (c < 128) {
      return isAsciiSpace((char) c) || (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96)
          || (c >= 123 && c <= 126);
    }
    return switch (Character.getType(c)) {
      case Character.SPACE_SEPARATOR, Character.CONNECTOR_PUNCTUATION, Character.DASH_PUNCTUATION,
          Character.START_PUNCTUATION, Character.END_PUNCTUATION, Character.INITIAL_QUOTE_PUNCTUATION,
          Character.FINAL_QUOTE_PUNCTUATION, Character.OTHER_PUNCTUATION -> true;
      default -> isCjk(c);
    };
  }

  /** BERT's CJK ideograph blocks, the characters its normalizer surrounds by spaces. */
  private static boolean isCjk(int c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF)
        || (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF)
        || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
  }
}
