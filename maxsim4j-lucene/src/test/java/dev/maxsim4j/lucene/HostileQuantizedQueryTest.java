package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.junit.jupiter.api.Test;

/**
 * A query that withQueryType cannot quantize (NaN or an infinity in a token) is refused naming queryVectors, the
 * token and dimension and the value the caller gave, not a "stored token" of a batch the caller never made, nor the
 * NaN that COSINE's normalisation turned an infinity into.
 */
class HostileQuantizedQueryTest {
  @Test
  void aQueryThatCannotBeQuantizedIsNamedAsTheQuery() {
    try (MaxSim maxSim = MaxSim.builder().backend("scalar").build()) {
      for (float bad : new float[] {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY}) {
        float[][] q = {{0f, 1f, 0f}, {0f, 0f, bad}};
        for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
          for (MaxSimRescorer r : new MaxSimRescorer[] {
              MaxSimRescorer.createQuantized("q", q, MaxSimRescorer.Scale.RAW, maxSim),
              MaxSimRescorer.create("f", q, VectorSimilarityFunction.DOT_PRODUCT, MaxSimRescorer.Scale.RAW, maxSim),
              MaxSimRescorer.create("f", q, VectorSimilarityFunction.COSINE, MaxSimRescorer.Scale.RAW, maxSim)}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> r.withQueryType(type));
            String m = e.getMessage();
            assertTrue(m.startsWith("queryVectors[1][2] is " + bad + ";") && m.contains(type.toString()),
                r + " " + type + ": " + m);
          }
        }
      }
    }
  }
}
