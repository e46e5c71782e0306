package dev.maxsim4j.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.data.segment.TextSegment;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A late-interaction model of the application's own, behind {@link TokenEncoder}: the scoring model scores what it
 * encodes, the mean best similarity per query token, with no rule of the bundled MiniLM encoder applied.
 */
class TokenEncoderTest {
  /**
   * Each word of lower-case letters one token: its length, then its first letter's position in the alphabet (no
   * unit length); other words no token.
   */
  private static final TokenEncoder WORDS = texts -> {
    float[][][] rows = new float[texts.size()][][];
    for (int i = 0; i < texts.size(); i++) {
      List<float[]> tokens = new ArrayList<>();
      for (String w : texts.get(i).split(" +")) {
        if (w.matches("[a-z]+")) {
          tokens.add(new float[] {w.length(), w.charAt(0) - 'a' + 1});
        }
      }
      rows[i] = tokens.toArray(float[][]::new);
    }
    return TokenBatch.of(rows);
  };

  @Test
  void scoresAreTheMaxSimOfTheEncodersTokensPerQueryToken() {
    try (MaxSim maxSim = MaxSim.builder().backend("cpu").threads(2).build()) {
      MaxSimScoringModel model = new MaxSimScoringModel(WORDS, maxSim, 2); // groups smaller than the segments
      List<String> texts = List.of("ab cde", "zz", "XY ZZ", "fgh i jk");
      List<TextSegment> segments = new ArrayList<>();
      texts.forEach(t -> segments.add(TextSegment.from(t)));
      List<Double> scores = model.scoreAll(segments, "abc d").content();
      float[] direct = maxSim.scores(WORDS.encode(List.of("abc d")), WORDS.encode(texts))[0];
      for (int i = 0; i < texts.size(); i++) {
        double expected = direct[i] == MaxSim.EMPTY_DOCUMENT_SCORE ? direct[i] : direct[i] / 2.0;
        assertEquals(expected, scores.get(i), texts.get(i));
      }
      assertTrue(scores.get(0) > 1, "no clamp to [-1, 1] for vectors that are not unit length: " + scores);
      assertEquals(MaxSim.EMPTY_DOCUMENT_SCORE, scores.get(2), "a segment of no token");
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> model.scoreAll(segments, "XY"));
      assertEquals("query is without text (the encoder gave it no token); expected some text", e.getMessage());
    }
  }

  /**
   * An encoder that returns its output padded [N, L, d] with per-row lengths, as ColBERT's ONNX models do: a segment
   * without text failed ("mask has length 4; expected 9") where it scores -1e9, and the others score as the core
   * library scores them. Found by a hostile test.
   */
  @Test
  void aPaddedEncoderOutputWithASegmentWithoutText() {
    TokenEncoder padded = texts -> {
      TokenBatch rows = WORDS.encode(texts);
      int l = Math.max(1, rows.maxLength());
      float[] data = new float[texts.size() * l * 2];
      int[] lengths = new int[texts.size()];
      float[] packed = rows.toFloatArray();
      for (int i = 0, at = 0; i < texts.size(); i++) {
        lengths[i] = rows.length(i);
        System.arraycopy(packed, at, data, i * l * 2, lengths[i] * 2);
        at += lengths[i] * 2;
      }
      return TokenBatch.ofFloats(data, texts.size(), l, 2).withLengths(lengths);
    };
    try (MaxSim maxSim = MaxSim.builder().backend("cpu").threads(2).build()) {
      List<String> texts = List.of("ab cde fg", "zz", "XY ZZ");
      List<TextSegment> segments = new ArrayList<>();
      texts.forEach(t -> segments.add(TextSegment.from(t)));
      List<Double> scores = new MaxSimScoringModel(padded, maxSim).scoreAll(segments, "abc d").content();
      float[] direct = maxSim.scores(WORDS.encode(List.of("abc d")), WORDS.encode(texts))[0];
      assertEquals(direct[0] / 2.0, scores.get(0), texts.get(0));
      assertEquals(direct[1] / 2.0, scores.get(1), texts.get(1));
      assertEquals(MaxSim.EMPTY_DOCUMENT_SCORE, scores.get(2), "a segment of no token");
    }
  }

  /** A wrapper that forwards the encoder's rules (a decorator, not a bare method reference) keeps them. */
  @Test
  void aWrapperThatForwardsTheRulesScoresAsTheEncoder() {
    TokenEncoder twoOwnTokens = new TokenEncoder() { // every text gets two tokens of the model's own, as MiniLM's
      @Override
      public TokenBatch encode(List<String> texts) {
        List<String> marked = new ArrayList<>();
        texts.forEach(t -> marked.add("cls sep " + t));
        return WORDS.encode(marked);
      }

      @Override
      public boolean hasText(int validTokens) {
        return validTokens > 2;
      }
    };
    try (MaxSim maxSim = MaxSim.builder().backend("cpu").threads(1).build()) {
      MaxSimScoringModel model = new MaxSimScoringModel(twoOwnTokens, maxSim);
      List<Double> scores = model.scoreAll(List.of(TextSegment.from("ab"), TextSegment.from("XY")), "abc").content();
      assertEquals(MaxSim.EMPTY_DOCUMENT_SCORE, scores.get(1), "the model's own tokens alone are no text");
      assertTrue(scores.get(0) > MaxSim.EMPTY_DOCUMENT_SCORE);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> model.scoreAll(List.of(TextSegment.from("ab")), "XY"));
      assertEquals("query is without text (no word piece in it); expected some text", e.getMessage());
    }
  }

  @Test
  void anEncoderThatReturnsAnotherNumberOfRowsIsRefused() {
    try (MaxSim maxSim = MaxSim.builder().backend("cpu").threads(1).build()) {
      TokenEncoder oneRow = texts -> WORDS.encode(List.of("ab"));
      MaxSimScoringModel model = new MaxSimScoringModel(oneRow, maxSim);
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> model.scoreAll(List.of(TextSegment.from("a"), TextSegment.from("b")), "ab"));
      assertEquals("the token encoder returned 1 rows for 2 texts; expected a row per text", e.getMessage());
    }
  }
}
