package dev.maxsim4j.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.langchain4j.data.segment.TextSegment;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A score is the mean best dot product, S / n: where the fp32 sum S passes fp32's range its mean may not, and must come
 * out finite rather than infinite and ranked first (or last).
 */
class HostileMeanOverflowTest {
  /**
   * One-dimensional tokens: "q" two tokens of 1, "pm" one of 2 and one of -2, "pm20" one of 1e20 and one of -1e20,
   * "e20" one of 1e20, "big" one of 2e38, "neg" one of -2e38, "huge" one of MAX.
   */
  private static final TokenEncoder ENCODER = texts -> {
    float[] data = new float[2 * texts.size()];
    int[] offsets = new int[texts.size() + 1];
    int tokens = 0;
    for (int i = 0; i < texts.size(); i++) {
      float[] rows = switch (texts.get(i)) {
        case "q" -> new float[] {1f, 1f};
        case "pm" -> new float[] {2f, -2f};
        case "pm20" -> new float[] {1e20f, -1e20f};
        case "e20" -> new float[] {1e20f};
        case "big" -> new float[] {2e38f};
        case "neg" -> new float[] {-2e38f};
        case "huge" -> new float[] {Float.MAX_VALUE};
        default -> new float[] {1f};
      };
      System.arraycopy(rows, 0, data, tokens, rows.length);
      tokens += rows.length;
      offsets[i + 1] = tokens;
    }
    return TokenBatch.packedFloats(Arrays.copyOf(data, tokens), offsets, 1);
  };

  @Test
  void theMeanOfASumPastFloatsRangeIsFinite() {
    try (MaxSim maxSim = MaxSim.builder().backend("vector").threads(1).build()) {
      List<Double> scores = new MaxSimScoringModel(ENCODER, maxSim).scoreAll(List.of(TextSegment.from("big"),
          TextSegment.from("neg"), TextSegment.from("one"), TextSegment.from("huge")), "q").content();
      assertEquals(List.of((double) 2e38f, (double) -2e38f, 1.0, (double) Float.MAX_VALUE), scores);
    }
  }

  /** Best dot products of +4e38 and -4e38, each past fp32's range: the sum is NaN, the mean 0. */
  @Test
  void aSumOfOppositeOverflowsHasItsFiniteMean() {
    try (MaxSim maxSim = MaxSim.builder().backend("vector").threads(1).build()) {
      List<Double> scores = new MaxSimScoringModel(ENCODER, maxSim).scoreAll(List.of(TextSegment.from("big")), "pm")
          .content();
      assertEquals(List.of(0.0), scores);
      // each best, +-1e40, passes fp32's range by more than any power of two of the query's tokens
      assertEquals(List.of(0.0), new MaxSimScoringModel(ENCODER, maxSim).scoreAll(List.of(TextSegment.from("e20")),
          "pm20").content());
    }
  }
}
