package dev.maxsim4j.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.rag.content.Content;
import dev.langchain4j.rag.content.aggregator.ReRankingContentAggregator;
import dev.langchain4j.rag.query.Query;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The scoring model through LangChain4j's own reranking step (ReRankingContentAggregator). */
class MaxSimScoringModelTest extends WithModel {

  @Test
  void langChain4jRerankingPutsTheSourceParagraphFirst() {
    MaxSimScoringModel model = new MaxSimScoringModel(encoder, maxSim);
    ReRankingContentAggregator aggregator = ReRankingContentAggregator.builder().scoringModel(model).maxResults(3)
        .build();
    List<Content> contents = new ArrayList<>();
    for (SampleTexts.Paragraph p : SampleTexts.paragraphs()) {
      contents.add(Content.from(TextSegment.from(p.text())));
    }
    Collections.shuffle(contents, new Random(7)); // the retriever's order must not matter
    for (SampleTexts.Paragraph p : SampleTexts.paragraphs()) {
      Query query = Query.from(Paraphrases.BY_TITLE.get(p.title()));
      List<Content> ranked = aggregator.aggregate(Map.of(query, List.of(contents)));
      assertEquals(3, ranked.size());
      assertEquals(p.text(), ranked.get(0).textSegment().text(), query.text());
    }
  }

  @Test
  void scoresAreMeanBestCosinesInOrderOfTheSegments() {
    MaxSimScoringModel model = new MaxSimScoringModel(encoder, maxSim);
    List<SampleTexts.Paragraph> paragraphs = SampleTexts.paragraphs();
    List<TextSegment> segments = paragraphs.stream().map(p -> TextSegment.from(p.text())).toList();
    List<Double> scores = model.scoreAll(segments, "sea level rises with the moon").content();
    assertEquals(segments.size(), scores.size());
    for (double s : scores) {
      assertTrue(s >= -1 && s <= 1, "mean best cosine in [-1, 1]: " + s);
    }
    // a text against itself: each token's best cosine is with itself, 1, which fp32 unit vectors passed by an ulp
    // (1.0000003) for about one text in five of these
    String[] words = "the quick brown fox jumps over lazy dog river mountain cloud rain sun moon star sky".split(" ");
    java.util.Random random = new java.util.Random(1);
    for (int i = 0; i < 40; i++) {
      StringBuilder text = new StringBuilder();
      for (int w = 0, n = 1 + random.nextInt(30); w < n; w++) {
        text.append(words[random.nextInt(words.length)]).append(' ');
      }
      double self = model.score(TextSegment.from(text.toString()), text.toString()).content();
      assertTrue(self <= 1 && self > 0.999, "'" + text + "' against itself: " + self);
    }
    int best = scores.indexOf(Collections.max(scores));
    assertEquals("Tides", paragraphs.get(best).title());
    assertEquals(scores.get(best), model.score(segments.get(best), "sea level rises with the moon").content(), 1e-6);
    assertTrue(model.scoreAll(List.of(), "anything").content().isEmpty());
    List<TextSegment> withNull = new ArrayList<>(segments);
    withNull.add(null);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> model.scoreAll(withNull, "q"));
    assertTrue(e.getMessage().contains("segments[10]"), e.getMessage());
    // no word piece: whitespace, control, zero-width, byte-order mark, a lone combining mark, a soft hyphen
    for (String q : new String[] {"", "  ", "\0\0", null, "\u200B", "\uFEFF", "\u0301", "\u00AD", "\u200D\u200C"}) {
      IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> model.scoreAll(segments, q));
      assertTrue(bad.getMessage().startsWith("query is "), bad.getMessage());
    }
    assertTrue(assertThrows(IllegalArgumentException.class, () -> model.scoreAll(null, "q")).getMessage()
        .startsWith("segments is null"));
  }

  /**
   * A segment without a word piece (blank, zero-width, a lone combining mark) scored its [CLS] and [SEP] alone, above
   * a segment with text; it has no valid token, so it scores below every segment with text.
   */
  @Test
  void segmentsWithoutTextRankLast() {
    MaxSimScoringModel model = new MaxSimScoringModel(encoder, maxSim);
    String query = "hello world";
    List<TextSegment> segments = List.of(TextSegment.from("\u200B"), TextSegment.from(" x "),
        TextSegment.from("\u0301 "), TextSegment.from("the tides of the sea"));
    List<Double> scores = model.scoreAll(segments, query).content();
    assertEquals(-1e9f, scores.get(0), 0.0);
    assertEquals(-1e9f, scores.get(2), 0.0);
    assertTrue(scores.get(1) >= -1 && scores.get(3) >= -1, scores.toString());
  }

  /**
   * Each score is exactly the direct MaxSim sum on the encoder's vectors over the query's tokens (the same path, so
   * equal, not close), in the order of the segments, through several encoder batches and masked segments, whether
   * the segments are scored in one call or in groups.
   */
  @Test
  void scoresEqualADirectMaxSimCallInSegmentOrder() {
    MaxSimScoringModel model = new MaxSimScoringModel(encoder, maxSim);
    List<String> texts = new ArrayList<>();
    for (int i = 0; i < 37; i++) {
      texts.add(i % 9 == 4 ? "\u200B" : SampleTexts.paragraphs().get(i % 10).text().substring(i));
    }
    String query = "how does slowly moving ice shape mountain valleys";
    List<Double> scores = model.scoreAll(texts.stream().map(TextSegment::from).toList(), query).content();
    // in groups of 5 segments a call: the same scores, in the same order
    assertEquals(scores, new MaxSimScoringModel(encoder, maxSim, 5)
        .scoreAll(texts.stream().map(TextSegment::from).toList(), query).content());
    dev.maxsim4j.TokenBatch q = encoder.encode(query);
    float[] sums = maxSim.scores(q, encoder.encode(texts))[0];
    assertEquals(texts.size(), scores.size());
    for (int i = 0; i < texts.size(); i++) {
      if (i % 9 == 4) {
        assertEquals(-1e9f, scores.get(i), 0.0, "segment " + i + " has no text");
      } else {
        assertEquals(MaxSimScoringModel.meanCosine(sums[i], q.validTokens(0)), scores.get(i), "segment " + i);
        assertEquals((double) sums[i] / q.validTokens(0), scores.get(i), 1e-6, "segment " + i);
      }
    }
  }

  @Test
  void nullArgumentsAreNamedInIllegalArgumentExceptions() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new MaxSimScoringModel(null, maxSim));
    assertEquals("encoder is null", e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> new MaxSimScoringModel(encoder, null));
    assertEquals("maxSim is null", e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> encoder.encode((List<String>) null));
    assertEquals("texts is null", e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> encoder.encode((String) null));
    assertEquals("text is null", e.getMessage());
  }
}
