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
}
