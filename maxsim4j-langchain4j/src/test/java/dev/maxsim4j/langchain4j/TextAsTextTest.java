package dev.maxsim4j.langchain4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.langchain4j.data.segment.TextSegment;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Text is read as text. A hostile tester's findings: the tokenizer matched the names of the model's special tokens
 * in a text ("[SEP]" became a separator, "[CLS]" alone passed for text), and one unpaired surrogate made the native
 * call decode the whole text lossily, so every character beyond the BMP vanished with it (an emoji and a lone
 * U+D800 had no token).
 */
class TextAsTextTest extends WithModel {

  @Test
  void specialTokenNamesInATextAreItsWordPieces() {
    for (String name : new String[] {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
      String lower = name.toLowerCase(java.util.Locale.ROOT);
      assertArrayEquals(encoder.encode(lower).toFloatArray(), encoder.encode(name).toFloatArray(), name);
      assertEquals(encoder.encode(lower).length(0), encoder.encode(name).length(0), name);
      assertEquals(true, encoder.encode(name).length(0) > 4, name + " is '[', its letters' pieces and ']'");
    }
    assertArrayEquals(encoder.encode("what does the [mask] token do, a[sep]b").toFloatArray(),
        encoder.encode("what does the [MASK] token do, a[SEP]b").toFloatArray());
    // a segment that is only a special token's name has text: it is scored, not masked as empty
    MaxSimScoringModel model = new MaxSimScoringModel(encoder, maxSim);
    List<Double> scores =
        model.scoreAll(List.of(TextSegment.from("[CLS]"), TextSegment.from("[cls]")), "cls").content();
    assertEquals(scores.get(1), scores.get(0));
    assertEquals(true, scores.get(0) >= -1, scores.toString());
  }

  @Test
  void anUnpairedSurrogateIsDroppedAloneNotWithTheCharactersBeyondTheBmp() {
    // a word glued to a character beyond the BMP (none is in the vocabulary) is one [UNK], left out: [CLS] [SEP];
    // decoded lossily, the character would be dropped and the word read ("tide": 3 tokens)
    String emoji = "tide\uD83D\uDE00";
    assertEquals(2, encoder.encode(emoji).length(0), "[CLS] [SEP]");
    for (String lone : new String[] {"\uD800", "\uDC00", "\uDE00\uD83D"}) {
      for (String text : new String[] {emoji + " " + lone, lone + emoji, "caf\u00E9 " + emoji + lone}) {
        // a chunker that cuts text by chars leaves half a pair at a segment's end
        String replaced = MiniLmTokenEncoder.asText(text);
        assertArrayEquals(encoder.encode(replaced).toFloatArray(), encoder.encode(text).toFloatArray(), replaced);
        assertArrayEquals(encoder.encode(replaced.replace("\uFFFD", "")).toFloatArray(),
            encoder.encode(text).toFloatArray(), "U+FFFD is dropped: " + replaced);
      }
    }
    MaxSimScoringModel model = new MaxSimScoringModel(encoder, maxSim);
    assertEquals(model.score(emoji, "smile").content(), model.score(emoji + " \uD800", "smile").content());
  }

  @Test
  void asTextReplacesOnlyUnpairedSurrogatesAndLowersOnlySpecialTokenNames() {
    String plain = "Tides follow the Moon. \uD83D\uDE00 [sep] [Sep] [SEPT] caf\u00E9";
    assertSame(plain, MiniLmTokenEncoder.asText(plain));
    assertEquals("a\uFFFDb", MiniLmTokenEncoder.asText("a\uD800b"));
    assertEquals("\uFFFD\uFFFD", MiniLmTokenEncoder.asText("\uDE00\uD83D"));
    assertEquals("\uD83D\uDE00\uFFFD", MiniLmTokenEncoder.asText("\uD83D\uDE00\uD83D"));
    assertEquals("\uFFFD\uD83D\uDE00x", MiniLmTokenEncoder.asText("\uDC00\uD83D\uDE00x"));
    assertEquals("[pad][unk] [cls] a[sep]b [mask] [SEPT]",
        MiniLmTokenEncoder.asText("[PAD][UNK] [CLS] a[SEP]b [MASK] [SEPT]"));
    assertEquals("", MiniLmTokenEncoder.asText(""));
  }
}
