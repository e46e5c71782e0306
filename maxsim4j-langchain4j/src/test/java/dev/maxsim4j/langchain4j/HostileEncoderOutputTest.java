package dev.maxsim4j.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.data.document.Metadata;
import dev.langchain4j.data.segment.TextSegment;
import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What an application's encoder or segment may hand the scoring model: a query of no token from an encoder whose
 * hasText says yes, vectors of two widths, a segment subclass whose text is null, and an int8 query whose
 * dequantized values pass fp32's range. Each is an error naming its source or a finite score, never NaN or
 * Infinity.
 */
class HostileEncoderOutputTest {
  private static MaxSim maxSim;

  @BeforeAll
  static void open() {
    maxSim = MaxSim.builder().backend("vector").threads(1).build();
  }

  @AfterAll
  static void close() {
    maxSim.close();
  }

  /** One-dimensional tokens of 1 a character; "empty" none; d = 2 for texts starting with "wide". */
  private static final TokenEncoder ONE_A_CHARACTER = new TokenEncoder() {
    @Override
    public TokenBatch encode(List<String> texts) {
      int dim = texts.get(0).startsWith("wide") ? 2 : 1;
      int[] offsets = new int[texts.size() + 1];
      for (int i = 0; i < texts.size(); i++) {
        offsets[i + 1] = offsets[i] + (texts.get(i).equals("empty") ? 0 : texts.get(i).length());
      }
      float[] data = new float[offsets[texts.size()] * dim];
      java.util.Arrays.fill(data, 1f);
      return TokenBatch.packedFloats(data, offsets, dim);
    }

    @Override
    public boolean hasText(int validTokens) {
      return true; // an encoder's claim the model does not take on trust where there is no token at all
    }
  };

  @Test
  void aQueryOfNoTokenIsRefusedWhateverHasTextSays() {
    MaxSimScoringModel model = new MaxSimScoringModel(ONE_A_CHARACTER, maxSim);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> model.scoreAll(List.of(TextSegment.from("abc")), "empty"));
    assertTrue(e.getMessage().startsWith("query is without text (the encoder gave it no token)"), e.getMessage());
  }

  @Test
  void vectorsOfTwoWidthsAreTheEncodersFault() {
    MaxSimScoringModel model = new MaxSimScoringModel(ONE_A_CHARACTER, maxSim);
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> model.scoreAll(List.of(TextSegment.from("abc"), TextSegment.from("de")), "wide query"));
    assertEquals("the token encoder gave the query vectors of d = 2 and segments[0..1] vectors of d = 1; expected one"
        + " d for all its texts", e.getMessage());
  }

  @Test
  void aSegmentWhoseTextIsNullIsNamed() {
    TextSegment nullText = new TextSegment("x", new Metadata()) {
      @Override
      public String text() {
        return null;
      }
    };
    MaxSimScoringModel model = new MaxSimScoringModel(ONE_A_CHARACTER, maxSim);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> model.scoreAll(List.of(TextSegment.from("a"), nullText), "q"));
    assertEquals("segments[1].text() is null; expected some text", e.getMessage());
  }

  /**
   * Four int8 tokens of 127 at scale 1e37 (each value 1.27e39, past fp32) against a segment of 0.1: the sum passes
   * fp32's range, the mean, 1.27e38, does not; rescaled from its fp32 values, the query would be infinite too.
   * e4m3 alike.
   */
  @Test
  void anInt8QueryPastFloatsRangeHasAFiniteMean() {
    for (DType type : List.of(DType.INT8, DType.FLOAT8_E4M3)) {
      byte code = type == DType.INT8 ? (byte) 127 : (byte) 0x7e; // e4m3 0x7e = 448
      float value = type == DType.INT8 ? 127f : 448f;
      float scale = type == DType.INT8 ? 1e37f : 2e36f; // each value past fp32's range, a quarter of it within
      TokenEncoder encoder = texts -> texts.get(0).equals("q")
          ? TokenBatch.packedBytes(type, new byte[] {code, code, code, code}, new float[] {scale, scale, scale, scale},
              new int[] {0, 4}, 1)
          : TokenBatch.packedFloats(new float[] {0.1f}, new int[] {0, 1}, 1);
      double score = new MaxSimScoringModel(encoder, maxSim).scoreAll(List.of(TextSegment.from("d")), "q")
          .content().get(0);
      double expected = (double) value * scale * 0.1f;
      assertEquals(expected, score, expected * 1e-6, type.toString());
    }
  }

  /**
   * An int8 segment whose value passes fp32's range (127 x 1e37) against three query tokens of 0.1: the sum, 3.81e38,
   * passes it too, the mean, 1.27e38, does not (read from fp32 values, the segment's was infinite).
   */
  @Test
  void anInt8SegmentPastFloatsRangeHasAFiniteMean() {
    TokenEncoder encoder = texts -> texts.get(0).equals("q")
        ? TokenBatch.packedFloats(new float[] {0.1f, 0.1f, 0.1f}, new int[] {0, 3}, 1)
        : TokenBatch.packedBytes(DType.INT8, new byte[] {127}, new float[] {1e37f}, new int[] {0, 1}, 1);
    double score = new MaxSimScoringModel(encoder, maxSim).scoreAll(List.of(TextSegment.from("d")), "q")
        .content().get(0);
    double expected = 127 * (double) 1e37f * 0.1f;
    assertEquals(expected, score, expected * 1e-12);
  }
}
