package dev.maxsim4j.cli.text;

import java.util.ArrayList;
import java.util.List;

/**
 * A text cut into passages, each scored on its own, so that a long file is found by its best part and never
 * becomes one document of a million tokens. A passage holds at most {@value #WORDS} words and
 * {@value #CHARS} characters (a word: a run of non-space characters, cut every {@value #WORD_CHARS}
 * characters) and repeats the last {@value #OVERLAP} words of the one before it. At about 1.3 word pieces per
 * English word, a passage fits one window of the model (254 word pieces). Text written without spaces (Chinese,
 * Japanese, Thai) takes about a word piece per character: its passages span up to five windows, each encoded with
 * its own [CLS] and [SEP], and are still scored as one.
 */
public final class Passages {
  public static final int WORDS = 160;
  public static final int OVERLAP = 32;
  public static final int CHARS = 1200;
  static final int WORD_CHARS = 40;

  /** One passage: the line of the text it starts on (1 = first), its text and its number of words. */
  public record Passage(int line, String text, int words) {}

  private Passages() {}

  /** The passages of {@code text} in order; none for a text of only white space. */
  public static List<Passage> of(String text) {
    List<int[]> words = words(text);
    List<Passage> out = new ArrayList<>();
    int line = 1;
    int lineCountedTo = 0;
    for (int start = 0; start < words.size(); ) {
      int end = start;
      while (end < words.size() && end - start < WORDS
          && (end == start || words.get(end)[1] - words.get(start)[0] <= CHARS)) {
        end++;
      }
      int from = words.get(start)[0];
      for (; lineCountedTo < from; lineCountedTo++) {
        char c = text.charAt(lineCountedTo);
        // lines end at \n, \r\n or a lone \r, as the text commands count them everywhere
        if (c == '\n' || c == '\r' && (lineCountedTo + 1 == text.length() || text.charAt(lineCountedTo + 1) != '\n')) {
          line++;
        }
      }
      out.add(new Passage(line, text.substring(from, words.get(end - 1)[1]), end - start));
      if (end == words.size()) {
        break;
      }
      start = end - Math.min(OVERLAP, (end - start) / 2);
    }
    return out;
  }

  /** [start, end) of each word, long runs cut so that no word passes WORD_CHARS (never inside a pair). */
  private static List<int[]> words(String text) {
    List<int[]> out = new ArrayList<>();
    int i = 0;
    while (i < text.length()) {
      int c = text.codePointAt(i);
      if (Character.isWhitespace(c)) {
        i += Character.charCount(c);
        continue;
      }
      int start = i;
      while (i < text.length()) {
        int d = text.codePointAt(i);
        if (Character.isWhitespace(d) || i - start + Character.charCount(d) > WORD_CHARS) {
          break;
        }
        i += Character.charCount(d);
      }
      out.add(new int[] {start, i});
    }
    return out;
  }
}
