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
      long[] whole = encoder.pieces(text, Integer.MAX_VALUE, Integer.MAX_VALUE);
      for (int chunk : new int[] {1, 2, 3, 7, 16, 50}) {
        assertArrayEquals(whole, encoder.pieces(text, chunk, Integer.MAX_VALUE),
            "chunks of " + chunk + " of " + text.codePoints().mapToObj(Integer::toHexString).toList());
      }
    }
  }

  @Test
  void aCutIsNeverInsideAWordOrASurrogatePair() {
    assertTrue(TextChunks.safeCut("ab cd", 3));
    assertTrue(TextChunks.safeCut("ab cd", 2));
    assertFalse(TextChunks.safeCut("abcd", 2));
    assertFalse(TextChunks.safeCut("a\u0000b", 1), "a control character joins the letters beside it");
    assertFalse(TextChunks.safeCut("😀😀", 1), "inside a surrogate pair");
    assertFalse(TextChunks.safeCut("😀😀", 2), "between two emoji: neither ends a word");
    assertTrue(TextChunks.safeCut("a中b", 1));
    assertEquals(12, TextChunks.end("x".repeat(10) + "  " + "y".repeat(10), 0, 16), "after the last ASCII space");
    assertEquals(25, TextChunks.end("x".repeat(25) + " y", 0, 8), "a word longer than the span is read whole");
  }

  @Test
  @Timeout(120)
  void aTextPastWhatACallHoldsIsRefusedOnceItsPiecesPassIt() {
    long limit = Math.min((Integer.MAX_VALUE - 8) / MiniLmTokenEncoder.DIM,
        Runtime.getRuntime().maxMemory() / (2L * Float.BYTES * MiniLmTokenEncoder.DIM));
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
