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
 * A long text is tokenized a chunk at a time, since one native call on a text of millions of word pieces takes
 * hundreds of bytes a piece and, out of memory inside DJL's tokenizer, aborts the JVM. The chunks give the same word
 * pieces as the whole text, and a text past what a call may hold is refused once its pieces pass that, not after all
 * of them are collected.
 */
class LongTextTest extends WithModel {
  /** Characters that exercise each rule of a cut: words, spaces of every kind, punctuation, CJK, marks, controls. */
  private static final String[] PARTS = {"tide", "moon", "ocean", "x".repeat(120), "é", "e\u0301", "\u0301", " ",
      "  ", "\n", "\r\n", "\t", "\u00a0", "\u3000", "\u2028", ".", ",", "!", "$", "'", "\u00bf", "\u2014", "\u300c",
      "中", "文字", "\uD840\uDC00", "한국어", "😀", "\u0000", "\u000b", "\u0085", "\u200b", "\uFEFF", "[SEP]", "[sep",
      "\uD800", "\uDC00", "ß", "İ", "ﬁ", "Ⅻ", "٣", "ประเทศไทย", "-", "_", "ab1", "9", "[SE\u200bP]",
      "[\u0301MASK]", "[\u00adCLS]", "\u034f", "\u0903", "\uD834\uDD6D", "\uD834\uDD65"};

  @Test
  @Timeout(120) // a cut that makes no progress would loop forever: fail it instead (normally a few seconds)
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
    long[] whole = encoder.pieces(text, Integer.MAX_VALUE, Integer.MAX_VALUE);
    for (int chunk : chunks) {
      assertArrayEquals(whole, encoder.pieces(text, chunk, Integer.MAX_VALUE),
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
   * which the encoder drops, so its pieces are the whole text's, and a text without spaces never goes whole to the
   * tokenizer (gigabytes of native memory for millions of characters).
   */
  @Test
  void aWordLongerThanAChunkIsCutWhereBothHalvesAreLongWords() {
    String hangul = "한국어".repeat(3000);
    assertSamePieces("tide " + hangul + " moon", 64, 300, 1000);
    assertSamePieces("x".repeat(5000) + ".y" + "z".repeat(150) + " tide", 64, 250);
    // letters among invisible characters: a cut needs 101 letters each side, which the zero-width spaces do not count
    assertSamePieces(("a" + "\u200b".repeat(30)).repeat(400) + " tide", 64, 500);
    assertSamePieces("a" + "\u200b".repeat(5000) + "b tide", 64, 700);
    assertEquals(0, encoder.pieces("x".repeat(3_000_000), TextChunks.CHARS, Integer.MAX_VALUE).length);
  }

  /**
   * A long text loses the characters that vanish in normalization before it is cut, so that letters among them are
   * counted and a run of them alone still has a cut: zero-width spaces, controls and combining marks between letters.
   */
  @Test
  void invisibleCharactersBetweenLettersDoNotKeepALongTextWhole() {
    assertSamePieces("a" + "\u200b".repeat(300_000) + "b tide", 64, 70_000);
    assertSamePieces(("ab" + "\u0000\u0301\u200d").repeat(20_000) + " tide", 64, 1000);
    assertEquals(1, encoder.pieces("\u200b".repeat(300_000) + "tide", 64, Integer.MAX_VALUE).length);
  }

  /**
   * A special token's name split by an invisible character is whole once a long text loses it: still plain text to
   * the tokenizer, never the model's control token.
   */
  @Test
  void aSpecialTokensNameJoinedByDroppingAnInvisibleCharacterStaysText() {
    for (String name : List.of("[SE\u200bP]", "[\u0301MASK]", "[\u00adCLS]", "[PA\u0000D]")) {
      String text = "tide ".repeat(40) + name + " moon";
      assertSamePieces(text, 16, 64);
      long[] special = encoder.pieces("[sep] [mask] [cls] [pad]", Integer.MAX_VALUE, Integer.MAX_VALUE);
      long[] pieces = encoder.pieces(text, 16, Integer.MAX_VALUE);
      for (long id : pieces) {
        assertTrue(id != 101 && id != 102 && id != 103 && id != 0, name + ": a control token " + id);
      }
      assertTrue(special.length > 4, "the names as text are word pieces");
    }
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
    long limit = MiniLmTokenEncoder.maxTokensPerCall();
    String bangs = "!".repeat((int) limit + 1000); // a word piece a character
    assertTrue(encoder.hasWordPiece(bangs));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> encoder.encode(List.of("tide", bangs)));
    assertTrue(e.getMessage().startsWith("texts hold more than " + limit + " tokens (word pieces and each window's"
        + " [CLS] and [SEP]), passed at texts[1]; expected at most " + limit), e.getMessage());
  }

  /**
   * Encodes, in a JVM of 256 MB of heap, eight million '!' (args[0] "bangs") or "tide " repeated to nine tenths of
   * the tokens two copies of the vectors would fill the heap with (args[0] "tides"); prints the refusal or "encoded".
   */
  public static final class EncodeInSmallHeap {
    public static void main(String[] args) {
      try (MiniLmTokenEncoder encoder = MiniLmTokenEncoder.load()) {
        long wholeHeap = Runtime.getRuntime().maxMemory() / (2L * Float.BYTES * MiniLmTokenEncoder.DIM);
        encoder.encode(List.of(args[0].equals("bangs") ? "!".repeat(8_000_000)
            : "tide ".repeat((int) (wholeHeap * 9 / 10))));
        System.out.println("encoded");
      } catch (IllegalArgumentException e) {
        System.out.println(e.getMessage());
      }
    }
  }

  private static String inSmallHeap(String text) throws IOException, InterruptedException {
    List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
        "--enable-native-access=ALL-UNNAMED", "--add-modules", "jdk.incubator.vector", "-cp",
        System.getProperty("java.class.path"), EncodeInSmallHeap.class.getName(), text);
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(240, TimeUnit.SECONDS), "the child JVM ended");
    assertEquals(0, p.exitValue(), out);
    return out;
  }

  /** Eight million word pieces in one text: refused, where one native call on it aborted the JVM (exit 134). */
  @Test
  @Timeout(300)
  void eightMillionWordPiecesInASmallHeapAreRefusedNotACrash() throws IOException, InterruptedException {
    assertTrue(inSmallHeap("bangs").contains("texts hold more than"));
  }

  /**
   * Tokens whose two copies of vectors would fill nine tenths of the heap: refused before the model runs, where the
   * heap has no room for them beside everything else (an OutOfMemoryError after the model, with no margin).
   */
  @Test
  @Timeout(300)
  void tokensNearlyFillingTheHeapAreRefusedBeforeTheModel() throws IOException, InterruptedException {
    String out = inSmallHeap("tides");
    assertTrue(out.contains("texts hold more than") && !out.contains("OutOfMemoryError"), out);
  }
}
