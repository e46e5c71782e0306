package dev.maxsim4j.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.langchain4j.data.segment.TextSegment;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A hostile tester's finding: a segment with text whose MaxSim sum was exactly -1e9 (large vectors, not unit length)
 * was reported as a segment without text, -1e9, instead of that sum over the query's tokens. Segments without text
 * are now known by their tokens, not by their score.
 */
class HostileSentinelSumTest {
  /** "q": two tokens [1, 0]; "s": one token [-5e8, 0], whose sum against q is -1e9; others: [-4e8, 0]; "none": none. */
  private static final TokenEncoder ENCODER = texts -> {
    int[] offsets = new int[texts.size() + 1];
    float[] data = new float[4 * texts.size()];
    int tokens = 0;
    for (int i = 0; i < texts.size(); i++) {
      float[] rows = switch (texts.get(i)) {
        case "q" -> new float[] {1, 0, 1, 0};
        case "s" -> new float[] {-5e8f, 0};
        case "none" -> new float[0];
        default -> new float[] {-4e8f, 0};
      };
      System.arraycopy(rows, 0, data, 2 * tokens, rows.length);
      tokens += rows.length / 2;
      offsets[i + 1] = tokens;
    }
    return TokenBatch.packedFloats(java.util.Arrays.copyOf(data, 2 * tokens), offsets, 2);
  };

  @Test
  void aSegmentWhoseSumIsTheEmptyScoreKeepsItsMean() {
    try (MaxSim maxSim = MaxSim.create()) {
      List<Double> scores = new MaxSimScoringModel(ENCODER, maxSim)
          .scoreAll(List.of(TextSegment.from("s"), TextSegment.from("t"), TextSegment.from("none")), "q").content();
      assertEquals(List.of(-5e8, -4e8, (double) MaxSim.EMPTY_DOCUMENT_SCORE), scores);
    }
  }
}
