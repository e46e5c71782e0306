package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * Vectors that QuantizedLateInteractionField cannot store (a null or ragged token, a token of no dimension, NaN or an
 * infinity) are named as its argument, vectors, with the token and dimension: they were named "rows[0][1]" (a batch of
 * rows the caller never made) or "stored token 0".
 */
class HostileQuantizedVectorsTest {
  @Test
  void badVectorsAreNamedAsVectors() {
    float[][][] bad = {{{1, 2}, {1}}, {{1, 2}, null}, {null}, {{}}, {{Float.NaN, 1}},
        {{1, 2}, {1, Float.NEGATIVE_INFINITY}}};
    String[] named = {"vectors[1] ", "vectors[1] ", "vectors[0] ", "vectors[0] ", "vectors[0][0] is NaN",
        "vectors[1][1] is -Infinity"};
    for (int i = 0; i < bad.length; i++) {
      float[][] v = bad[i];
      for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
        for (boolean field : new boolean[] {false, true}) {
          IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> {
            if (field) {
              new QuantizedLateInteractionField("f", v, type);
            } else {
              QuantizedLateInteractionField.encode(v, type);
            }
          });
          assertTrue(e.getMessage().startsWith(named[i]), Arrays.deepToString(v) + " " + type + ": " + e.getMessage());
        }
      }
    }
  }
}
