package dev.maxsim4j.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.langchain4j.data.segment.TextSegment;
import dev.maxsim4j.TokenBatch;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A segment's score does not depend on the segments scored with it: texts of very different lengths (padded
 * together in one encoder batch, one of them several windows long), right-to-left text, combining marks, emoji,
 * NUL and a byte-order mark alone score bitwise as each does alone, and encode to the same vectors.
 */
class HostileScoringModelTest extends WithModel {
  private static final List<String> TEXTS = List.of("sea", "\u202Eשלום עולם", "e\u0301\u0301\u0301", "😀🌊",
      "a\u0000b", "\uFEFF", "the moon pulls the ocean and the tide rises twice a day along most coasts",
      "the tide rises and falls with the moon ".repeat(80), "tide", "x".repeat(3000));

  @Test
  void eachSegmentScoresAndEncodesBitwiseAsItDoesAlone() {
    MaxSimScoringModel model = new MaxSimScoringModel(encoder, maxSim);
    List<TextSegment> segments = TEXTS.stream().map(TextSegment::from).toList();
    for (String query : List.of("why does the tide rise", "\u05E9\u05DC\u05D5\u05DD", TEXTS.get(7))) {
      List<Double> together = model.scoreAll(segments, query).content();
      List<Double> alone = new ArrayList<>();
      for (TextSegment s : segments) {
        alone.add(model.score(s, query).content());
      }
      assertEquals(alone, together, "query " + query.substring(0, Math.min(20, query.length())));
    }
    TokenBatch all = encoder.encode(TEXTS);
    for (int i = 0; i < TEXTS.size(); i++) {
      TokenBatch one = encoder.encode(TEXTS.get(i));
      assertEquals(one.length(0), all.length(i), "tokens of text " + i);
      for (int t = 0; t < one.length(0); t++) {
        for (int k = 0; k < MiniLmTokenEncoder.DIM; k++) {
          assertEquals(Float.floatToIntBits(one.get(0, t, k)), Float.floatToIntBits(all.get(i, t, k)),
              "text " + i + " token " + t + " element " + k);
        }
      }
    }
  }
}
