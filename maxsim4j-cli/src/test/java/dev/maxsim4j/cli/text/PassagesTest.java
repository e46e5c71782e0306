package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** How a text is cut into passages: bounded in words and characters, overlapping, with their lines. */
class PassagesTest {
  private static String words(int from, int to, String sep) {
    return IntStream.range(from, to).mapToObj(i -> "w" + i).collect(Collectors.joining(sep));
  }

  @Test
  void shortTextIsOnePassage() {
    assertEquals(List.of(new Passages.Passage(2, "hello  world", 2)), Passages.of("\n  hello  world \n"));
    assertTrue(Passages.of(" \n\t ").isEmpty());
    String mixed = "a\r\n" + words(0, 200, "\r");
    assertEquals(List.of(1, 129), Passages.of(mixed).stream().map(Passages.Passage::line).toList());
    assertTrue(Passages.of("").isEmpty());
  }

  @Test
  void longTextIsCutWithOverlapAndLines() {
    String text = words(0, 1000, "\n");
    List<Passages.Passage> passages = Passages.of(text);
    assertEquals(8, passages.size());
    for (Passages.Passage p : passages) {
      String[] w = p.text().split("\\s+");
      assertTrue(w.length <= Passages.WORDS, p.text());
      // one word per line: the passage's line is its first word's number + 1
      assertEquals(Integer.parseInt(w[0].substring(1)) + 1, p.line());
    }
    assertEquals("w0", passages.get(0).text().split("\n")[0]);
    assertEquals("w128", passages.get(1).text().split("\n")[0], "32 words of overlap");
    assertTrue(passages.get(passages.size() - 1).text().endsWith("w999"));
  }

  @Test
  void textWithoutSpacesIsBoundedInCharacters() {
    String blob = "x".repeat(1_000_000);
    List<Passages.Passage> passages = Passages.of(blob);
    for (Passages.Passage p : passages) {
      assertTrue(p.text().length() <= Passages.CHARS, "passage of " + p.text().length() + " chars");
    }
    int covered = passages.get(0).text().length();
    assertTrue(passages.size() >= 1_000_000 / Passages.CHARS && covered > Passages.CHARS / 2, passages.size() + "");
    // no surrogate pair is cut
    String emoji = "\uD83D\uDE00".repeat(100);
    for (Passages.Passage p : Passages.of(emoji)) {
      assertTrue(!Character.isLowSurrogate(p.text().charAt(0)));
      assertTrue(!Character.isHighSurrogate(p.text().charAt(p.text().length() - 1)));
    }
  }

  @Test
  void longWordsOfManyCharactersStayUnderTheCharacterBound() {
    String text = words(0, 500, " ").replace("w", "word-of-some-length-");
    for (Passages.Passage p : Passages.of(text)) {
      assertTrue(p.text().length() <= Passages.CHARS);
    }
  }
}
