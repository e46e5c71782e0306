package dev.maxsim4j.langchain4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A long text is tokenized a chunk at a time: one native call on a text of millions of word pieces took hundreds of
 * bytes a piece and, out of memory inside DJL's tokenizer, aborted the JVM (a hostile tester's finding). The chunks
 * give the same word pieces as the whole text, and a text past what a call may hold is refused once its pieces pass
 * that, not after all of them are collected.
 */
class LongTextTest extends WithModel {
  /** Characters that exercise each rule of a cut: words, spaces of every kind, punctuation, CJK, marks, controls. */
  private static final String[] PARTS = {"tide", "moon", "ocean", "x".repeat(120), "é", "e\u0301", "\u0301", " ",
      "  ", "\n", "\r\n", "\t", "\u00a0", "\u3000", "\u2028", ".", ",", "!", "$", "'", "\u00bf", "\u2014", "\u300c",
      "中", "文字", "\uD840\uDC00", "한국어", "😀", "\u0000", "\u000b", "\u0085", "\u200b", "\uFEFF", "[SEP]", "[sep",
      "\uD800", "\uDC00", "ß", "İ", "ﬁ", "Ⅻ", "٣", "ประเทศไทย", "-", "_", "ab1", "9"};

  @Test
  void chunksGiveTheWordPiecesOfTheWholeText() {
    Random r = new Random(20261207);
    for (int round = 0; round < 300; round++) {
      StringBuilder b = new StringBuilder();
      int parts = 1 + r.nextInt(60);
      for (int p = 0; p < parts; p++) {
        b.append(PARTS[r.nextInt(PARTS.length)]);
      }
      String text = b.toString();
      assertSamePieces(text, 1, 2, 3, 7, 16, 50);
    }
  }

  private static void assertSamePieces(String text, int... chunks) {
    long[] whole = encoder.pieces(text, "text", Integer.MAX_VALUE, Integer.MAX_VALUE);
    for (int chunk : chunks) {
      assertArrayEquals(whole, encoder.pieces(text, "text", chunk, Integer.MAX_VALUE),
          "chunks of " + chunk + " of " + text.codePoints().mapToObj(Integer::toHexString).toList());
    }
  }

  /**
   * Characters Java's tables call punctuation that the tokenizer's older tables read as letters (added since Unicode
   * 8), and CJK Extension E's first block, which the tokenizer's CJK ranges leave out: no cut beside them.
   */
  @Test
  void punctuationTheTokenizerReadsAsLettersIsNoPlaceToCut() {
    for (int c : new int[] {0x0C77, 0x2E52, 0x2B820, 0x16FE2, 0x061D, 0x1E95E, 0x2E5D, 0x10EAD, 0x11FFF}) {
      String s = Character.toString(c);
      assertSamePieces("a" + s + "a", 1, 2, 3);
      assertSamePieces("ab" + s + "cd", 1, 2, 3);
      assertSamePieces("x" + s + "y1" + s + s + "z", 1, 2, 3, 4);
    }
  }

  /**
   * A word longer than a chunk is cut inside itself, with over 100 letters on each side: it and its halves are [UNK],
   * which the encoder drops, so its pieces are the whole text's. Before, a text of no cut went whole to the tokenizer
   * (gigabytes of native memory for millions of characters).
   */
  @Test
  void aWordLongerThanAChunkIsCutWhereBothHalvesAreLongWords() {
    String hangul = "한국어".repeat(3000);
    assertSamePieces("tide " + hangul + " moon", 64, 300, 1000);
    assertSamePieces("x".repeat(5000) + ".y" + "z".repeat(150) + " tide", 64, 250);
    // letters among invisible characters: a cut needs 101 letters each side, which the zero-width spaces do not count
    assertSamePieces(("a" + "\u200b".repeat(30)).repeat(400) + " tide", 64, 500);
    assertSamePieces("a" + "\u200b".repeat(5000) + "b tide", 64, 700);
    assertEquals(0, encoder.pieces("x".repeat(3_000_000), "text", TextChunks.CHARS, Integer.MAX_VALUE).length);
  }

  /** Past TextChunks.MAX_RUN characters with no cut (only invisible ones can be), the text is refused, named. */
  @Test
  void aRunOfInvisibleCharactersPastTheBoundIsRefused() {
    String zwsp = "a" + "\u200b".repeat(TextChunks.MAX_RUN + 10) + "b";
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> encoder.encode(List.of("x", zwsp)));
    assertTrue(e.getMessage().startsWith("texts[1] holds " + TextChunks.MAX_RUN + " characters in a row with neither"
        + " a word boundary nor 202 letters"), e.getMessage());
  }

  /** Kinds as the tokenizer would give them for these tests' characters. */
  private static TextChunks.Kind kind(int c) {
    return c == ' ' || c == '中' || c == '.' ? TextChunks.Kind.BOUNDARY
        : c == 0 || c == 0x200b ? TextChunks.Kind.NOTHING : TextChunks.Kind.LETTER;
  }

  @Test
  void aCutIsNeverInsideAShortWordOrASurrogatePair() {
    assertTrue(TextChunks.boundary("ab cd", 3, LongTextTest::kind));
    assertTrue(TextChunks.boundary("ab cd", 2, LongTextTest::kind));
    assertFalse(TextChunks.boundary("abcd", 2, LongTextTest::kind));
    assertFalse(TextChunks.boundary("a\u0000b", 1, LongTextTest::kind), "a control character joins its neighbours");
    assertFalse(TextChunks.boundary("😀😀", 1, LongTextTest::kind), "inside a surrogate pair");
    assertFalse(TextChunks.boundary("😀😀", 2, LongTextTest::kind), "between two emoji: neither ends a word");
    assertTrue(TextChunks.boundary("a中b", 1, LongTextTest::kind));
    assertEquals(12, TextChunks.end("x".repeat(10) + "  " + "y".repeat(10), 0, 16, LongTextTest::kind),
        "after the last ASCII space");
    assertEquals(25, TextChunks.end("x".repeat(25) + " y", 0, 8, LongTextTest::kind), "the word's end");
    // inside a long word: after the 101st letter from half the span, once 101 more follow
    assertEquals(4 + 101, TextChunks.end("x".repeat(400), 0, 8, LongTextTest::kind));
    // "xx", a zero-width space, "x": from 4, 33 groups hold 99 letters (4 .. 135), the 101st is at 137
    assertEquals(138, TextChunks.end("xx\u200bx".repeat(200), 0, 8, LongTextTest::kind),
        "letters counted, not invisible characters");
  }

  @Test
  @Timeout(120)
  void aTextPastWhatACallHoldsIsRefusedOnceItsPiecesPassIt() {
    long limit = MiniLmTokenEncoder.tokenLimit();
    String bangs = "!".repeat((int) limit + 1000); // a word piece a character
    assertTrue(encoder.hasWordPiece(bangs));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> encoder.encode(List.of("tide", bangs)));
    assertTrue(e.getMessage().startsWith("texts hold more than " + limit + " tokens (word pieces and each window's"
        + " [CLS] and [SEP]), passed at texts[1]; expected at most " + limit), e.getMessage());
  }

  /** Encodes a text of eight million word pieces in a JVM of 256 MB of heap; prints the refusal. */
  public static final class EncodeBangs {
    public static void main(String[] args) {
      try (MiniLmTokenEncoder encoder = MiniLmTokenEncoder.load()) {
        encoder.encode(List.of("!".repeat(8_000_000)));
        System.out.println("encoded");
      } catch (IllegalArgumentException e) {
        System.out.println(e.getMessage());
      }
    }
  }

  /** The hostile tester's case: it aborted the JVM (a panic in the tokenizer's native code, exit 134). */
  @Test
  @Timeout(300)
  void eightMillionWordPiecesInASmallHeapAreRefusedNotACrash() throws IOException, InterruptedException {
    List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
        "--enable-native-access=ALL-UNNAMED", "--add-modules", "jdk.incubator.vector", "-cp",
        System.getProperty("java.class.path"), EncodeBangs.class.getName());
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(240, TimeUnit.SECONDS), "the child JVM ended");
    assertEquals(0, p.exitValue(), out);
    assertTrue(out.contains("texts hold more than"), out);
  }
}
