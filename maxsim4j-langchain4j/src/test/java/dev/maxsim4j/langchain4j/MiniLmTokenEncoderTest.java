package dev.maxsim4j.langchain4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.TopK;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Real text through all-MiniLM-L6-v2 token by token, then MaxSim. */
class MiniLmTokenEncoderTest extends WithModel {

  @Test
  void tokensAreUnitVectorsOfWordPiecesPlusClsAndSep() {
    TokenBatch b = encoder.encode(List.of("Tides follow the Moon.", ""));
    assertEquals(2, b.size());
    assertEquals(MiniLmTokenEncoder.DIM, b.dim());
    assertEquals(2, b.length(1), "an empty text is [CLS] [SEP]");
    assertTrue(b.length(0) >= 6 && b.length(0) <= 10, "word pieces + 2, got " + b.length(0));
    for (int r = 0; r < b.size(); r++) {
      for (int t = 0; t < b.length(r); t++) {
        double norm = 0;
        for (int k = 0; k < b.dim(); k++) {
          norm += b.get(r, t, k) * b.get(r, t, k);
        }
        assertEquals(1.0, norm, 1e-4, "token " + t + " of row " + r);
      }
    }
    assertArrayEquals(encoder.encode("Tides follow the Moon.").toFloatArray(),
        encoder.encode(List.of("Tides follow the Moon.")).toFloatArray(), "the same text, the same vectors");
  }

  /** The tokenizer-only check agrees with the encoding it stands in for. */
  @Test
  void aWordPieceIsToldWithoutTheModel() {
    for (String text : new String[] {"Tides follow the Moon.", "", "\u200b\u200b", "\u0301", "x"}) {
      assertEquals(MiniLmTokenEncoder.hasWordPiece(encoder.encode(text).validTokens(0)), encoder.hasWordPiece(text),
          text);
    }
  }

  /** Loading opts out of DJL's usage tracking where the user has not chosen: encoding sends nothing anywhere. */
  /** The tokenizer's count is the encoding's length: one window, several (each with [CLS] and [SEP]), none. */
  @Test
  void theTokenCountIsToldWithoutTheModel() {
    String[] texts = {"Tides follow the Moon.", "", "\u200b", ".".repeat(600), "otters ".repeat(300)};
    for (String text : texts) {
      assertEquals(encoder.encode(text).length(0), encoder.tokenCount(text), text.length() + " characters");
    }
  }

  @Test
  void loadingOptsOutOfTheTokenizersTrackingUnlessTheUserChose() {
    org.junit.jupiter.api.Assumptions.assumeTrue(System.getenv("OPT_OUT_TRACKING") == null,
        "the environment chose already");
    String before = System.clearProperty("OPT_OUT_TRACKING");
    try (MiniLmTokenEncoder own = MiniLmTokenEncoder.load()) {
      assertEquals("true", System.getProperty("OPT_OUT_TRACKING"));
    } finally {
      if (before != null) {
        System.setProperty("OPT_OUT_TRACKING", before);
      }
    }
  }

  /**
   * A second close does nothing, an encoding after close is refused by name, and a close during an encoding waits
   * for it rather than freeing the native session under it.
   */
  @Test
  void closeIsIdempotentAndWaitsForEncodingsInProgress() throws Exception {
    MiniLmTokenEncoder own = MiniLmTokenEncoder.load();
    List<String> texts = java.util.Collections.nCopies(64, "The glacier scraped the valley floor. ".repeat(20));
    var encoding = java.util.concurrent.CompletableFuture.supplyAsync(() -> own.encode(texts));
    Thread.sleep(50);
    own.close();
    try {
      assertEquals(64, encoding.get().size(), "an encoding started before close finishes");
    } catch (java.util.concurrent.ExecutionException e) {
      assertTrue(e.getCause() instanceof IllegalStateException && e.getCause().getMessage().contains("closed"),
          "an encoding that had not started is refused: " + e.getCause());
    }
    own.close();
    IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
        () -> own.encode("after close"));
    assertTrue(e.getMessage().contains("closed"), e.getMessage());
  }

  /** A close from an encoding's own Progress is refused, not a wait on this thread's own read lock forever. */
  @Test
  void closeFromTheEncodingsOwnProgressIsRefused() {
    MiniLmTokenEncoder own = MiniLmTokenEncoder.load();
    IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
        () -> own.encode(List.of("Tides follow the Moon."), (done, all) -> own.close()));
    assertTrue(e.getMessage().contains("during an encoding on the same thread"), e.getMessage());
    assertEquals(1, own.encode("still open").size(), "the refused close left the encoder open");
    own.close();
  }

  /** The texts are read once: a list that grows or shrinks during the call (from its Progress) changes nothing. */
  @Test
  void aListChangedDuringTheCallIsEncodedAsItWasGiven() {
    List<String> base = new java.util.ArrayList<>();
    for (int i = 0; i < 300; i++) { // several batches of windows: Progress is called between them
      base.add("Text number " + i + " about rivers.");
    }
    TokenBatch expected = encoder.encode(List.copyOf(base));
    for (boolean grow : new boolean[] {true, false}) {
      List<String> texts = new java.util.ArrayList<>(base);
      TokenBatch b = encoder.encode(texts, (done, all) -> {
        if (grow) {
          texts.add("one more");
        } else if (!texts.isEmpty()) {
          texts.remove(texts.size() - 1);
        }
      });
      assertEquals(300, b.size(), grow ? "growing" : "shrinking");
      assertEquals(expected.length(299), b.length(299));
      org.junit.jupiter.api.Assertions.assertArrayEquals(expected.toFloatArray(), b.toFloatArray());
    }
  }

  @Test
  void longTextsAreEncodedInWindowsAndKeepEveryToken() {
    String sentence = "The glacier scraped the valley floor and left a moraine behind. ";
    String text = sentence.repeat(60); // ~780 word pieces: 4 windows
    TokenBatch b = encoder.encode(text);
    int pieces = encoder.encode(List.of(text)).length(0);
    assertEquals(pieces, b.length(0));
    assertTrue(b.length(0) > 3 * MiniLmTokenEncoder.WINDOW, "every window kept: " + b.length(0) + " tokens");
    assertTrue(b.length(0) <= 4 * (MiniLmTokenEncoder.WINDOW + 2), b.length(0) + " tokens in at most 4 windows");
  }

  /** A query's paraphrase ranks its source paragraph first among the bundled paragraphs. */
  @Test
  void paraphrasesFindTheirParagraph() {
    List<SampleTexts.Paragraph> paragraphs = SampleTexts.paragraphs();
    assertEquals(10, paragraphs.size());
    TokenBatch documents = encoder.encode(paragraphs.stream().map(SampleTexts.Paragraph::text).toList());
    List<String> titles = paragraphs.stream().map(SampleTexts.Paragraph::title).toList();
    List<String> queries = titles.stream().map(Paraphrases.BY_TITLE::get).toList();
    TopK top = maxSim.topK(encoder.encode(queries), documents, 3);
    for (int i = 0; i < queries.size(); i++) {
      assertEquals(titles.get(i), titles.get(top.indices()[i][0]),
          "\"" + queries.get(i) + "\" ranked " + titles.get(top.indices()[i][0]) + " first (then "
              + titles.get(top.indices()[i][1]) + ", " + titles.get(top.indices()[i][2]) + ")");
    }
  }
}
