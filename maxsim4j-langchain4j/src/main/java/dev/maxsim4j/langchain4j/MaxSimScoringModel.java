package dev.maxsim4j.langchain4j;

import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.output.Response;
import dev.langchain4j.model.scoring.ScoringModel;
import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A LangChain4j {@link ScoringModel} (reranker) backed by token embeddings and MaxSim: the query and every
 * segment are encoded token by token (by a {@link TokenEncoder}: the bundled {@link MiniLmTokenEncoder}, or a
 * late-interaction model of the application's) and the segments are scored against the query
 * {@value #SEGMENTS_PER_CALL} at a time, or fewer where they hold over {@value #CHARS_PER_CALL} characters or, on a
 * small heap, more word pieces than {@link MiniLmTokenEncoder#maxTokensPerCall()} could (a longer segment alone), each
 * group in one fused call (a segment's score does not depend on the others, and memory stays bounded however many and
 * however long the segments a call passes: by the longest segment). Usable wherever
 * LangChain4j takes a scoring model, e.g.
 * {@code ReRankingContentAggregator.builder().scoringModel(new MaxSimScoringModel(encoder, maxSim))}.
 *
 * <p>Score: the MaxSim sum divided by the number of query tokens, i.e. the mean over query tokens of the best
 * similarity with any segment token, so one {@code minScore} threshold means the same for short and long queries:
 * for unit-length token vectors (MiniLM's, ColBERT's) a cosine, with MiniLM's held to [-1, 1] against fp32
 * rounding. A segment without text (no valid token: for MiniLM, no word piece) scores MaxSim's
 * {@link MaxSim#EMPTY_DOCUMENT_SCORE} ({@code -1e9}), below every segment with text. Neither the encoder nor the
 * MaxSim instance is closed by this model.
 */
public final class MaxSimScoringModel implements ScoringModel {
  /** Segments encoded and scored together: a reranker's usual candidates in one call, bounded memory beyond. */
  static final int SEGMENTS_PER_CALL = 1024;
  /**
   * Characters of the segments encoded together, unless one segment holds more: MiniLM makes at most about three word
   * pieces of a character (Hangul syllables split into letters; plus each window's two), so a group's fp32 states
   * stay under about 150 MB however long its segments are (a reranker's candidates come in one call, which the
   * application cannot split).
   */
  static final int CHARS_PER_CALL = 1 << 15;
  /** Word pieces a character makes at most: a Hangul syllable is split into its two or three letters. */
  private static final int PIECES_PER_CHAR = 3;

  private final TokenEncoder encoder;
  private final MaxSim maxSim;
  private final int segmentsPerCall;

  /** A model that encodes with {@code encoder} and scores on {@code maxSim}; it closes neither. */
  public MaxSimScoringModel(TokenEncoder encoder, MaxSim maxSim) {
    this(encoder, maxSim, SEGMENTS_PER_CALL);
  }

  /** As above, {@code segmentsPerCall} segments a call (tests take groups smaller than a test's segments). */
  MaxSimScoringModel(TokenEncoder encoder, MaxSim maxSim, int segmentsPerCall) {
    this.encoder = Arguments.nonNull(encoder, "encoder");
    this.maxSim = Arguments.nonNull(maxSim, "maxSim");
    this.segmentsPerCall = segmentsPerCall;
  }

  @Override
  public Response<List<Double>> scoreAll(List<TextSegment> segments, String query) {
    if (segments == null) {
      throw new IllegalArgumentException("segments is null; expected a list of text segments");
    }
    if (query == null) {
      throw new IllegalArgumentException("query is null; expected some text");
    }
    TokenBatch q = encoded(List.of(query));
    if (q.validTokens(0) == 0 || !encoder.hasText(q.validTokens(0))) { // no token scores 0 / 0 whatever hasText says
      // e.g. MiniLM's tokenizer kept no word piece (whitespace, control, format or lone combining characters, or only
      // [UNK]: emoji, scripts it lacks): only the encoder's [CLS] and [SEP], which score the same against any text
      throw new IllegalArgumentException("query is without text (" + (q.validTokens(0) == 0
          ? "the encoder gave it no token" : "no word piece in it") + "); expected some text");
    }
    if (segments.isEmpty()) {
      return Response.from(List.of());
    }
    List<String> texts = new ArrayList<>(segments.size());
    for (int i = 0; i < segments.size(); i++) {
      TextSegment s = segments.get(i);
      if (s == null) {
        throw new IllegalArgumentException("segments[" + i + "] is null; expected a text segment");
      }
      String text = s.text(); // a subclass may return null where TextSegment's constructor refuses it
      if (text == null) {
        throw new IllegalArgumentException("segments[" + i + "].text() is null; expected some text");
      }
      texts.add(text);
    }
    int queryTokens = q.validTokens(0);
    List<Double> scores = new ArrayList<>(texts.size());
    double[][] exact = null; // the query in float64, made where a sum first passes fp32's range
    long tokensPerCall = MiniLmTokenEncoder.maxTokensPerCall();
    for (int from = 0, to; from < texts.size(); from = to) {
      // a group ends at segmentsPerCall segments, or before the one that would take it past CHARS_PER_CALL or past
      // the tokens MiniLM encodes at once on this heap: its token vectors (a few per character at most) stay bounded
      // however long the segments are, and segments that each fit are not refused together
      long chars = texts.get(from).length();
      for (to = from + 1; to < texts.size() && to - from < segmentsPerCall
          && chars + texts.get(to).length() <= CHARS_PER_CALL
          && mostTokens(chars + texts.get(to).length(), to + 1 - from) <= tokensPerCall; to++) {
        chars += texts.get(to).length();
      }
      List<String> group = texts.subList(from, to);
      TokenBatch documents;
      try {
        documents = withoutTextMasked(encoded(group));
      } catch (IllegalArgumentException e) {
        // the encoder names a text by its place in the group
        throw new IllegalArgumentException("segments[" + from + (to - from > 1 ? ".." + (to - 1) : "") + "] could"
            + " not be encoded: " + e.getMessage(), e);
      }
      if (documents.dim() != q.dim()) {
        throw new IllegalStateException("the token encoder gave the query vectors of d = " + q.dim() + " and segments["
            + from + ".." + (to - 1) + "] vectors of d = " + documents.dim() + "; expected one d for all its texts");
      }
      float[] sums = maxSim.scores(q, documents)[0];
      OverflowMean.Values exactDocuments = null; // the group in float64, made where a sum first passes fp32's range
      for (int i = 0; i < sums.length; i++) {
        // a segment without text keeps MaxSim's score for an empty document, the same on every path; known by its
        // tokens, since a segment with text may sum to exactly that score too
        float s = sums[i];
        if (documents.validTokens(i) == 0) {
          scores.add((double) s);
        } else if (encoder.unitLength()) {
          scores.add(unitMean(s, queryTokens, from + i, q, documents));
        } else if (!Float.isFinite(s)) {
          // a sum past fp32's range may have a finite mean: taken in float64 (a NaN of the vectors stays NaN)
          exact = exact != null ? exact : OverflowMean.exactQuery(q);
          exactDocuments = exactDocuments != null ? exactDocuments : new OverflowMean.Values(documents);
          scores.add(OverflowMean.mean(exact, exactDocuments, i));
        } else {
          scores.add((double) s / queryTokens);
        }
      }
    }
    return Response.from(scores);
  }

  /**
   * The most tokens MiniLM makes of {@code segments} texts of {@code chars} characters: {@value #PIECES_PER_CHAR}
   * word pieces a character, and a [CLS] and a [SEP] for each window of {@value MiniLmTokenEncoder#WINDOW} pieces
   * (one a text at least; a thirty-second of a character bounds those past the first).
   */
  static long mostTokens(long chars, int segments) {
    return PIECES_PER_CHAR * chars + chars / 32 + 2L * segments;
  }

  /** {@code texts} encoded, checked to be a row per text: another encoder's rows would be scored as others'. */
  private TokenBatch encoded(List<String> texts) {
    TokenBatch b = encoder.encode(texts);
    if (b == null || b.size() != texts.size()) {
      throw new IllegalStateException("the token encoder returned " + (b == null ? "null" : b.size() + " rows")
          + " for " + texts.size() + (texts.size() == 1 ? " text" : " texts") + "; expected a row per text");
    }
    return b;
  }

  /**
   * Segment {@code segment}'s mean cosine ({@link #meanCosine}), from an encoder that says its vectors are unit
   * length: a mean past [-1, 1] by more than its types' rounding is that promise broken (vectors not normalised, an
   * infinity), refused rather than clamped to a 1.0 that every such segment would tie at.
   */
  private static double unitMean(float sum, int queryTokens, int segment, TokenBatch query, TokenBatch documents) {
    double mean = (double) sum / queryTokens;
    double slack = Math.max(rounding(query.dtype()), rounding(documents.dtype()));
    if (Math.abs(mean) > 1 + slack) {
      throw new IllegalStateException("segments[" + segment + "] scores a mean best dot product of " + mean
          + " against the query, though the token encoder says its vectors are unit length (unitLength()); expected"
          + " at most 1 (+" + slack + " for rounding): normalise the encoder's vectors, or return false from"
          + " unitLength()");
    }
    return meanCosine(sum, queryTokens);
  }

  /** How far past 1 the dot product of two unit vectors stored as {@code type} may round (generous). */
  private static double rounding(DType type) {
    return switch (type) {
      case FLOAT32 -> 1e-3;
      case FLOAT16, BFLOAT16 -> 2e-2;
      case INT8 -> 5e-2;
      default -> 0.25; // fp8 and bits: coarse by design
    };
  }

  /**
   * The MaxSim sum over the query's tokens, held to [-1, 1]: the encoder's unit vectors are rounded to fp32, so a
   * text against itself summed to a hair over 1 per token (1.0000003), past the range a threshold is set in. NaN
   * stays NaN. Only for rounding: a mean further out is refused first ({@link #unitMean}).
   */
  static double meanCosine(float sum, int queryTokens) {
    double mean = (double) sum / queryTokens;
    return mean > 1 ? 1 : mean < -1 ? -1 : mean;
  }

  /**
   * The segments without text ({@link TokenEncoder#hasText}) masked whole: MiniLM's [CLS] and [SEP] alone would
   * score against any query, above segments with text; with no valid token they score MaxSim's -1e9, below all of
   * those.
   */
  private TokenBatch withoutTextMasked(TokenBatch segments) {
    // a mask covers every stored slot: a packed row's own, a padded row's L whatever its length
    boolean packed = segments.isPacked();
    int total = 0;
    for (int i = 0; i < segments.size(); i++) {
      total += packed ? segments.length(i) : segments.maxLength();
    }
    boolean[] mask = new boolean[total];
    boolean masked = false;
    for (int i = 0, start = 0; i < segments.size(); i++) {
      int slots = packed ? segments.length(i) : segments.maxLength();
      boolean hasText = encoder.hasText(segments.validTokens(i));
      Arrays.fill(mask, start, start + slots, hasText); // combined with the batch's own mask, not replacing it
      masked |= !hasText;
      start += slots;
    }
    return masked ? segments.withMask(mask) : segments;
  }
}
