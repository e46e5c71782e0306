package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The device top-k's selection (maxsim_topk.cu) on the score distributions that make its radix select run every
 * round or stop early: a few distinct scores repeated across every segment, documents with no valid token (-1e9)
 * and fewer other documents than k, signed zeros, infinities and NaN; k on both sides of the switch from ranking
 * by counting to the bitonic sort (128, 129). Documents of two tokens of 4 dims, 300,000 of them: 147 segments of
 * 2,048 scores, then passes over their candidates until one segment is left (none for k = 1 and 7, three for 512).
 * Each result must equal sorting the backend's own scores (Float.compare's order, then the lower index).
 */
@GpuTest
class CudaTopKSelectionTest {
  private static final int DOCUMENTS = 300_000;
  private static final int LENGTH = 2;
  private static final int DIM = 4;
  private static final int[] KS = {1, 7, 100, 128, 129, 200, 512};
  private static MaxSim cuda;

  @BeforeAll
  static void open() {
    cuda = MaxSim.builder().backend("cuda").build();
  }

  @AfterAll
  static void close() {
    if (cuda != null) {
      cuda.close();
    }
  }

  @Test
  void aFewDistinctScoresRepeatedInEverySegment() {
    SplittableRandom random = new SplittableRandom(11);
    float[][] prototypes = {{1, 0, 0, 0}, {0.5f, 0.5f, 0, 0}, {0.25f, 0, 0, 0}};
    float[] docs = new float[DOCUMENTS * LENGTH * DIM];
    for (int j = 0; j < DOCUMENTS; j++) {
      float[] p = prototypes[random.nextInt(prototypes.length)];
      System.arraycopy(p, 0, docs, j * LENGTH * DIM, DIM);
      System.arraycopy(p, 0, docs, (j * LENGTH + 1) * DIM, DIM);
    }
    assertSelectionIsSorting(TokenBatch.ofFloats(docs, DOCUMENTS, LENGTH, DIM), "three distinct scores");
  }

  @Test
  void documentsWithoutValidTokensAndFewerOthersThanK() {
    SplittableRandom random = new SplittableRandom(12);
    float[] docs = randomValues(random);
    for (int others : new int[] {50, 30_000}) {
      int[] lengths = new int[DOCUMENTS];
      for (int i = 0; i < others; i++) {
        lengths[random.nextInt(DOCUMENTS)] = 1 + random.nextInt(LENGTH);
      }
      TokenBatch d = TokenBatch.ofFloats(docs, DOCUMENTS, LENGTH, DIM).withLengths(lengths);
      float[][] all = assertSelectionIsSorting(d, others + " documents with tokens");
      assertTrue(count(all[0], -1e9f) >= DOCUMENTS - others, "-1e9 scores");
    }
  }

  @Test
  void signedZerosInfinitiesAndNaN() {
    SplittableRandom random = new SplittableRandom(13);
    float[] docs = randomValues(random);
    float[][] specials = {{0, 0, 0, 0}, {-0f, -0f, -0f, -0f}, {3e38f, 3e38f, 3e38f, 3e38f},
        {-3e38f, -3e38f, -3e38f, -3e38f}, {Float.NaN, 0, 0, 0}};
    for (int j = 0; j < DOCUMENTS; j++) {
      if (random.nextInt(4) == 0) {
        float[] s = specials[random.nextInt(specials.length)];
        System.arraycopy(s, 0, docs, j * LENGTH * DIM, DIM);
        System.arraycopy(s, 0, docs, (j * LENGTH + 1) * DIM, DIM);
      }
    }
    float[][] all = assertSelectionIsSorting(TokenBatch.ofFloats(docs, DOCUMENTS, LENGTH, DIM), "specials");
    float[] row = all[0];
    assertTrue(hasScore(row, 0f) && hasScore(row, Float.POSITIVE_INFINITY) && hasScore(row, Float.NEGATIVE_INFINITY)
        && hasScore(row, Float.NaN), "every special score occurs");
  }

  /** Top-k for 1 and 3 queries of positive values equals sorting the scores, for each k; returns the scores. */
  private static float[][] assertSelectionIsSorting(TokenBatch documents, String where) {
    float[][] all = null;
    for (int nq : new int[] {1, 3}) {
      float[] q = new float[nq * DIM];
      Arrays.fill(q, 1f);
      TokenBatch queries = TokenBatch.ofFloats(q, nq, 1, DIM);
      all = cuda.scores(queries, documents);
      for (int k : KS) {
        TopK top = cuda.topK(queries, documents, k);
        ParityTest.assertTopKIsSortedScores(top, all, k, where + ", " + nq + " queries, k = " + k);
        assertEquals(Float.floatToRawIntBits(all[0][top.indices()[0][0]]),
            Float.floatToRawIntBits(top.scores()[0][0]), where + ": the score's bits come back as scored");
      }
    }
    return all;
  }

  private static float[] randomValues(SplittableRandom random) {
    float[] values = new float[DOCUMENTS * LENGTH * DIM];
    for (int i = 0; i < values.length; i++) {
      values[i] = (float) random.nextDouble(-1, 1);
    }
    return values;
  }

  private static boolean hasScore(float[] row, float score) {
    return count(row, score) > 0;
  }

  private static int count(float[] row, float score) {
    int n = 0;
    for (float s : row) {
      n += Float.floatToIntBits(s) == Float.floatToIntBits(score) ? 1 : 0;
    }
    return n;
  }
}
