package dev.maxsim4j.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.data.segment.TextSegment;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A hostile tester's finding: an encoder that says its vectors are unit length ({@link TokenEncoder#unitLength()})
 * but returns others (an ONNX export that skips the final normalisation, say) had every score above 1 clamped to
 * exactly 1.0, so that its best segments tied silently and the reranker's order among them was lost; an infinite
 * token scored 1.0 too. The clamp is for fp32 rounding (a hair over 1); a mean beyond that is the encoder's broken
 * promise, refused by name.
 */
class HostileUnitLengthClaimTest {
  /** "q": one token [1, 0]; "a": [3, 0]; "b": [2, 0]; "inf": [+inf, 0]; "c": [0.6, 0.8] (unit). Claims unit length. */
  private static final TokenEncoder CLAIMS_UNIT = new TokenEncoder() {
    @Override
    public TokenBatch encode(List<String> texts) {
      float[][][] rows = new float[texts.size()][][];
      for (int i = 0; i < texts.size(); i++) {
        rows[i] = new float[][] {switch (texts.get(i)) {
          case "q" -> new float[] {1, 0};
          case "a" -> new float[] {3, 0};
          case "b" -> new float[] {2, 0};
          case "inf" -> new float[] {Float.POSITIVE_INFINITY, 0};
          default -> new float[] {0.6f, 0.8f};
        }};
      }
      return TokenBatch.of(rows);
    }

    @Override
    public boolean unitLength() {
      return true;
    }
  };

  @Test
  void aMeanBeyondRoundingIsRefusedNotClampedToOne() {
    try (MaxSim maxSim = MaxSim.builder().backend("cpu").threads(1).build()) {
      MaxSimScoringModel model = new MaxSimScoringModel(CLAIMS_UNIT, maxSim);
      assertEquals(List.of(0.6000000238418579), model.scoreAll(List.of(TextSegment.from("c")), "q").content());
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> model.scoreAll(List.of(TextSegment.from("c"), TextSegment.from("a"), TextSegment.from("b")), "q"));
      assertTrue(e.getMessage().contains("segments[1]") && e.getMessage().contains("unitLength()"), e.getMessage());
      assertThrows(IllegalStateException.class, () -> model.scoreAll(List.of(TextSegment.from("inf")), "q"));
    }
  }

  /** The clamp still takes what fp32 rounding adds: a hair over 1 is 1. */
  @Test
  void roundingAboveOneIsStillClamped() {
    assertEquals(1.0, MaxSimScoringModel.meanCosine(3.0000009f, 3));
    assertEquals(-1.0, MaxSimScoringModel.meanCosine(-1.0000003f, 1));
    assertTrue(Double.isNaN(MaxSimScoringModel.meanCosine(Float.NaN, 2)));
  }
}
