package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** Escaped names stay on one line and come back exactly. */
class NamesTest {
  @Test
  void controlCharactersAndBackslashesAreEscaped() {
    assertEquals("a\\nb\\tc\\rd\\\\e\\u0001f\\u007f", Names.escape("a\nb\tc\rd\\e\u0001f\u007f"));
    assertEquals("caf\u00e9 \uD83D\uDE00", Names.escape("caf\u00e9 \uD83D\uDE00"));
    assertEquals("txt.\\u202eexe", Names.escape("txt.\u202eexe"));
  }

  @Test
  void anyStringRoundTripsAndHasNoLineBreak() {
    Random random = new Random(18);
    for (int i = 0; i < 20_000; i++) {
      StringBuilder s = new StringBuilder();
      for (int n = random.nextInt(12); n > 0; n--) {
        s.append(random.nextInt(4) == 0 ? (char) random.nextInt(0x10000) : (char) random.nextInt(0x80));
      }
      String escaped = Names.escape(s.toString());
      assertFalse(escaped.contains("\n") || escaped.contains("\r") || escaped.contains("\t"), escaped);
      assertEquals(s.toString(), Names.unescape(escaped));
    }
  }

  @Test
  void malformedEscapesAreRefused() {
    for (String bad : new String[] {"a\\", "a\\x", "a\\u12", "a\\u12g4"}) {
      assertThrows(IllegalArgumentException.class, () -> Names.unescape(bad), bad);
    }
  }
}
