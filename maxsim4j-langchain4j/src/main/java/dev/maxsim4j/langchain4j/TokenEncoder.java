package dev.maxsim4j.langchain4j;

import dev.maxsim4j.TokenBatch;
import java.util.List;

/**
 * Text to token vectors, as a late-interaction model (ColBERT, ModernColBERT, LateOn, ...) embeds it: what a
 * {@link MaxSimScoringModel} encodes queries and segments with. {@link MiniLmTokenEncoder} is the bundled one; an
 * application with a late-interaction model of its own (e.g. an ONNX export) implements this interface around it.
 */
@FunctionalInterface
public interface TokenEncoder {
  /**
   * The token vectors of each text, row {@code i} for {@code texts.get(i)}: as many rows as texts, every row of the
   * same d. A text the model keeps no token of is a row of no valid token, which scores MaxSim's {@code -1e9}.
   */
  TokenBatch encode(List<String> texts);

  /**
   * Whether a row of {@code validTokens} valid tokens holds text: by default one token or more. A model that adds
   * tokens of its own to every text (MiniLM's {@code [CLS]} and {@code [SEP]}) says how many hold none; such a
   * segment is scored as empty ({@code -1e9}) and such a query refused. A wrapper of an encoder forwards this.
   */
  default boolean hasText(int validTokens) {
    return validTokens > 0;
  }

  /**
   * Whether every token vector is unit length (default false), so that a mean best dot product is a cosine and is
   * held to [-1, 1] against rounding; a mean further out (vectors not normalised) is an IllegalStateException,
   * not a 1.0 that such segments would tie at. A wrapper of an encoder forwards this.
   */
  default boolean unitLength() {
    return false;
  }
}
