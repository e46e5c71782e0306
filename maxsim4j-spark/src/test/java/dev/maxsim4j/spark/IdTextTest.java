package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.api.Test;

class IdTextTest {
  @Test
  void plainIdsAreQuotedAsTheyAre() {
    assertEquals("'doc-7'", IdText.quoted("doc-7"));
    assertEquals("'42'", IdText.quoted(42L));
    assertEquals("null", IdText.quoted(null));
    assertEquals("'null'", IdText.quoted("null"));
    assertEquals("'é 文 😀'", IdText.quoted("é 文 😀"));
  }

  @Test
  void charactersThatWouldCutTheLineAreEscaped() {
    assertEquals("'a\\nb\\r\\tc'", IdText.quoted("a\nb\r\tc"));
    assertEquals("'a\\u0000b\\u2028c\\u001b'", IdText.quoted("a\u0000b\u2028c\u001b"));
    assertEquals("'lone \\ud800'", IdText.quoted("lone \ud800"));
  }

  @Test
  void aQuotedIdReadsBackAsExactlyOneId() {
    String lineBreak = IdText.quoted("a\nb");
    String backslashAndN = IdText.quoted("a\\nb");
    assertNotEquals(lineBreak, backslashAndN);
    assertEquals("'a\\\\nb'", backslashAndN);
    assertEquals("'it\\'s'", IdText.quoted("it's"));
  }
}
