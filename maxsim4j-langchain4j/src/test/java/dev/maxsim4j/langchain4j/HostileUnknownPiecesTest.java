package dev.maxsim4j.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.data.segment.TextSegment;
import dev.maxsim4j.MaxSim;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A hostile tester's finding: text the vocabulary does not hold (emoji, Thai and other scripts outside it, a word of
 * over 100 characters such as a URL or a hash) is all [UNK] word pieces, and [UNK] matches [UNK] as [CLS] and [SEP]
 * match each other: the query "😀" scored a perfect 1.0 against Thai text and against a 500-character run of x,
 * above "🌊 ocean waves". [UNK] names no text, so it is no word piece: such a text is without text, scored
 * {@code -1e9} as a segment and refused as a query, and [UNK] does not raise a mixed text's score.
 */
class HostileUnknownPiecesTest extends WithModel {
  private static final List<String> UNREADABLE = List.of("😀", "🦀 🌊", "ประเทศไทย", "x".repeat(500));

  @Test
  void textOfUnknownPiecesAloneIsWithoutText() {
    MaxSimScoringModel model = new MaxSimScoringModel(encoder, maxSim);
    List<TextSegment> segments = List.of(TextSegment.from("🌊 ocean waves"), TextSegment.from("ประเทศไทย"),
        TextSegment.from("x".repeat(500)), TextSegment.from("the tide rises twice a day"));
    for (String q : UNREADABLE) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> model.scoreAll(segments, q),
          q.substring(0, Math.min(q.length(), 12)));
      assertTrue(e.getMessage().startsWith("query is without text"), e.getMessage());
    }
    List<Double> scores = model.scoreAll(segments, "ocean tide").content();
    assertEquals(MaxSim.EMPTY_DOCUMENT_SCORE, scores.get(1), "Thai, all [UNK]");
    assertEquals(MaxSim.EMPTY_DOCUMENT_SCORE, scores.get(2), "one word of 500 letters, [UNK]");
    assertTrue(scores.get(0) > MaxSim.EMPTY_DOCUMENT_SCORE && scores.get(3) > MaxSim.EMPTY_DOCUMENT_SCORE);
    // an emoji beside words adds nothing for another emoji to match
    assertEquals(model.score("ocean waves", "ocean").content(), model.score("🌊 ocean waves", "ocean 🦀").content(),
        1e-6);
  }

  @Test
  void theTokenizerAloneAgreesWithTheEncoding() {
    for (String t : UNREADABLE) {
      assertFalse(encoder.hasWordPiece(t), t);
      assertEquals(2, encoder.tokenCount(t), t);
      assertEquals(2, encoder.encode(t).length(0), t);
    }
    String mixed = "🌊 ocean waves";
    assertEquals(encoder.tokenCount("ocean waves"), encoder.tokenCount(mixed));
    assertEquals(encoder.tokenCount(mixed), encoder.encode(mixed).length(0));
  }
}
