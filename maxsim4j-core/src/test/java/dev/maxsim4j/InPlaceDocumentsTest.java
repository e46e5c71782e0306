package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The vector backend reads an fp32 heap document whose valid tokens are one run where it lies, and copies the
 * others: documents whose masks keep one run anywhere in the row (with NaN in the masked tokens around it), two
 * runs, none, packed rows (the run starting past the array's start), against the float64 reference, scores,
 * top-k and the training argmax.
 */
class InPlaceDocumentsTest {
  private static MaxSim reference;
  private static MaxSim vector;

  @BeforeAll
  static void open() {
    reference = MaxSim.builder().backend("reference").threads(2).build();
    vector = MaxSim.builder().backend("vector").threads(2).build();
  }

  @AfterAll
  static void close() {
    reference.close();
    vector.close();
  }

  @Test
  void runsOfValidTokensAnywhereInTheRowMatchTheReference() {
    long seed = new SplittableRandom().nextLong();
    SplittableRandom random = new SplittableRandom(seed);
    for (int dim : new int[] {1, 3, 33, 128, 513}) {
      int n = 12;
      int length = 20;
      float[] values = new float[n * length * dim];
      for (int i = 0; i < values.length; i++) {
        values[i] = (float) random.nextDouble(-1, 1);
      }
      boolean[] mask = new boolean[n * length];
      for (int row = 0; row < n; row++) {
        // rows 0-3 one run at the start, middle or end; 4-7 two runs; 8 none; 9-11 all valid
        int from = row < 4 ? random.nextInt(length) : 0;
        int to = row < 4 ? from + 1 + random.nextInt(length - from) : length;
        for (int t = 0; t < length; t++) {
          boolean valid = row < 4 ? t >= from && t < to : row < 8 ? t % 7 != 3 : row != 8;
          mask[row * length + t] = valid;
          if (!valid) {
            Arrays.fill(values, (row * length + t) * dim, (row * length + t + 1) * dim, Float.NaN);
          }
        }
      }
      TokenBatch documents = TokenBatch.ofFloats(values, n, length, dim).withMask(mask);
      TokenBatch queries = TokenBatch.ofFloats(randomValues(random, 3 * 9 * dim), 3, 9, dim);
      String where = "d=" + dim + " (seed=" + seed + "L)";
      assertScores(queries, documents, where);

      int[] offsets = {0, 1, 5, 5, 13, 40};
      TokenBatch packed = TokenBatch.packedFloats(randomValues(random, 40 * dim), offsets, dim);
      assertScores(queries, packed, where + " packed");
    }
  }

  private static void assertScores(TokenBatch queries, TokenBatch documents, String where) {
    float[][] expected = reference.scores(queries, documents);
    float[][] got = vector.scores(queries, documents);
    for (int i = 0; i < expected.length; i++) {
      for (int j = 0; j < expected[i].length; j++) {
        assertEquals(expected[i][j], got[i][j], Oracle.tolerance(queries, i, documents, j),
            where + " pair " + i + ", " + j);
      }
    }
    TopK top = vector.topK(queries, documents, 3);
    for (int i = 0; i < expected.length; i++) {
      // the best score within any document's bound: a near tie may put another document first
      float best = Float.NEGATIVE_INFINITY;
      double tolerance = 0;
      for (int j = 0; j < expected[i].length; j++) {
        best = Math.max(best, expected[i][j]);
        tolerance = Math.max(tolerance, Oracle.tolerance(queries, i, documents, j));
      }
      assertEquals(best, top.scores()[i][0], tolerance, where + " top-1 of query " + i);
    }
    TrainingScores train = vector.scoresForTraining(queries, documents);
    TrainingScores exact = reference.scoresForTraining(queries, documents);
    int pairs = expected.length * expected[0].length;
    int same = 0;
    for (int pair = 0; pair < pairs; pair++) {
      for (int slot = 0; slot < queries.maxLength(); slot++) {
        same += train.argmax(pair, slot) == exact.argmax(pair, slot) ? 1 : 0;
      }
    }
    // ties of random doubles are rare, so the winning slot (into the stored row, masked slots skipped) agrees
    int all = pairs * queries.maxLength();
    assertTrue(same >= all - 1, where + ": argmax agrees at " + same + " of " + all);
  }

  private static float[] randomValues(SplittableRandom random, int n) {
    float[] v = new float[n];
    for (int i = 0; i < n; i++) {
      v[i] = (float) random.nextDouble(-1, 1);
    }
    return v;
  }
}
