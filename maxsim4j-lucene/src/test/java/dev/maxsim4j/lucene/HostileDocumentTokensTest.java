package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.FixedDimensionalEncoder;
import dev.maxsim4j.MaxSim;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * A document's tokens of the wrong shape are named as documentFields' argument, tokens, by both overloads: the one
 * that encodes them named "documents" (the encoder's batch) for tokens of another d than the encoder's.
 */
class HostileDocumentTokensTest {
  @Test
  void badDocumentTokensAreNamedAsTokens() {
    try (MaxSim maxSim = MaxSim.builder().backend("scalar").build()) {
      FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(4).simHashBits(1).repetitions(2).build();
      LateInteractionRetriever retriever = new LateInteractionRetriever(encoder, "fde", "tokens", maxSim);
      float[] encoding = new float[encoder.dimension()];
      for (float[][] t : new float[][][] {null, {}, {{1, 0}}, {{1, 0, 0, 0, 0}}, {{1, 0, 0, 0}, null},
          {{1, 0, 0, 0}, {1, 0, 0}}}) {
        for (boolean encoded : new boolean[] {false, true}) {
          IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
              () -> { if (encoded) retriever.documentFields(t, encoding); else retriever.documentFields(t); });
          boolean shape = t == null || t.length == 0 || e.getMessage().contains("4");
          assertTrue(e.getMessage().startsWith("tokens") && shape,
              Arrays.deepToString(t) + (encoded ? " with its encoding: " : ": ") + e.getMessage());
        }
      }
    }
  }

  @Test
  void aDocumentPastOneStoredValueIsRefusedAsTokensBeforeItIsCopied() {
    try (MaxSim maxSim = MaxSim.builder().backend("scalar").build()) {
      int d = 1024;
      FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(d).simHashBits(1).repetitions(1).build();
      LateInteractionRetriever retriever = new LateInteractionRetriever(encoder, "fde", "tokens", maxSim);
      // 4 + 4 L d passes an int: Lucene's field would size its value negative (L = 525,312: 2^31 + 2^22 + 4 bytes)
      // or, wrapped past zero, too small (L = 2^20: 4 bytes)
      float[] row = new float[d];
      row[0] = 1;
      for (int length : new int[] {525_312, 1 << 20}) {
        float[][] tokens = new float[length][];
        Arrays.fill(tokens, row);
        for (boolean encoded : new boolean[] {false, true}) {
          IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> {
            if (encoded) {
              retriever.documentFields(tokens, new float[encoder.dimension()]);
            } else {
              retriever.documentFields(tokens);
            }
          });
          assertTrue(e.getMessage().startsWith("tokens has " + length + " vectors of d = 1024")
              && e.getMessage().contains("expected at most 524287 vectors"), e.getMessage());
        }
      }
    }
  }
}
