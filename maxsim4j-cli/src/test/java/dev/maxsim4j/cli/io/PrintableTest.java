package dev.maxsim4j.cli.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Quoted text is cut to a readable length between whole characters, never through an emoji's surrogate pair. */
class PrintableTest {

  @Test
  void longTextIsCutBetweenWholeCharacters() {
    String emoji = "\uD83D\uDE00"; // outside the BMP: two chars
    for (int lead = 0; lead < 4; lead++) {
      String text = "x".repeat(lead) + emoji.repeat(100);
      String shown = Printable.of(text);
      assertTrue(shown.endsWith("..."), shown);
      assertTrue(shown.length() <= 120, shown.length() + " characters");
      String kept = shown.substring(0, shown.length() - 3);
      assertEquals(kept, Printable.oneLine(kept), "lead " + lead + ": a lone surrogate was left in " + shown);
      assertTrue(text.startsWith(kept), "lead " + lead);
    }
  }

  @Test
  void shortTextIsKeptWhole() {
    assertEquals("caf\u00e9 \uD83D\uDE00", Printable.of("caf\u00e9 \uD83D\uDE00"));
  }
}
