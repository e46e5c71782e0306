package dev.maxsim4j.langchain4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.langchain4j.data.segment.TextSegment;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Text is read as text. A hostile tester's finding: the tokenizer matched the names of the model's special tokens
 * in a text ("[SEP]" became a separator, "[CLS]" alone passed for text).
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
  void asTextLowersOnlySpecialTokenNames() {
    String plain = "Tides follow the Moon. \uD83D\uDE00 [sep] [Sep] [SEPT] caf\u00E9";
    assertSame(plain, MiniLmTokenEncoder.asText(plain));
    assertEquals("[pad][unk] [cls] a[sep]b [mask] [SEPT]",
        MiniLmTokenEncoder.asText("[PAD][UNK] [CLS] a[SEP]b [MASK] [SEPT]"));
    assertEquals("", MiniLmTokenEncoder.asText(""));
  }
}
