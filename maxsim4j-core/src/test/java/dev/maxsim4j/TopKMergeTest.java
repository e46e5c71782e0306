package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link TopK#merge}: per-part top-k merged equal the top-k of the whole corpus, ties and NaN included. */
class TopKMergeTest {

  @Test
  void mergedPartsEqualTheWholeCorpus() {
    RandomBatches r = new RandomBatches();
    TokenBatch q = r.padded(DType.FLOAT32, 3, 5, 8, 0);
    int nd = 23;
    float[] data = r.floats(nd * 4 * 8);
    data[5 * 4 * 8] = Float.NaN; // document 5 scores NaN: ranks first
    System.arraycopy(data, 0, data, 17 * 4 * 8, 4 * 8); // document 17 ties document 0
    try (MaxSim m = MaxSim.builder().backend("vector").threads(2).build()) {
      TokenBatch all = TokenBatch.ofFloats(data, nd, 4, 8);
      for (int k : new int[] {1, 4, 23, 40}) {
        TopK whole = m.topK(q, all, k);
        int[] cuts = {0, 0, 6, 17, 18, nd}; // an empty part, a one-document part
        List<TopK> parts = new ArrayList<>();
        int[] first = new int[cuts.length - 1];
        for (int p = 0; p + 1 < cuts.length; p++) {
          first[p] = cuts[p];
          int n = cuts[p + 1] - cuts[p];
          float[] slice = new float[n * 4 * 8];
          System.arraycopy(data, cuts[p] * 4 * 8, slice, 0, slice.length);
          parts.add(n == 0 ? new TopK(new float[3][0], new int[3][0])
              : m.topK(q, TokenBatch.ofFloats(slice, n, 4, 8), k));
        }
        TopK merged = TopK.merge(k, parts, first);
        for (int i = 0; i < 3; i++) {
          assertArrayEquals(whole.indices()[i], merged.indices()[i], r + " k=" + k + " query " + i);
          assertArrayEquals(whole.scores()[i], merged.scores()[i], 0f, r + " k=" + k + " query " + i);
        }
        assertEquals(5, merged.indices()[0][0], "NaN ranks first");
      }
    }
  }

  /** Parts that rank the same corpus document (equal firstDocuments, or ranges that overlap) are refused. */
  @Test
  void overlappingPartsAreRefused() {
    TopK a = new TopK(new float[][] {{5f, 4f}}, new int[][] {{0, 1}});
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TopK.merge(4, List.of(a, a), new int[] {0, 0}));
    assertTrue(e.getMessage().contains("parts[0] and parts[1] both rank document 0 for query 0"), e.getMessage());
    TopK b = new TopK(new float[][] {{3f}}, new int[][] {{0}});
    e = assertThrows(IllegalArgumentException.class, () -> TopK.merge(3, List.of(a, b), new int[] {0, 1}));
    assertTrue(e.getMessage().contains("both rank document 1"), e.getMessage());
    assertArrayEquals(new int[] {0, 1, 2}, TopK.merge(3, List.of(a, b), new int[] {0, 2}).indices()[0]);
  }

  /** Each part needs only its top k: what it holds past them (padding, a longer list) is neither read nor checked. */
  @Test
  void entriesPastTheRanksTakenAreNotRead() {
    TopK padded = new TopK(new float[][] {{2f, Float.NEGATIVE_INFINITY}}, new int[][] {{0, -1}});
    assertArrayEquals(new int[] {0}, TopK.merge(1, List.of(padded), new int[] {0}).indices()[0]);
    TopK unordered = new TopK(new float[][] {{5f, 9f}}, new int[][] {{3, 4}});
    assertArrayEquals(new int[] {3}, TopK.merge(1, List.of(unordered), new int[] {0}).indices()[0]);
    TopK longer = new TopK(new float[][] {{5f, 4f, 100f}}, new int[][] {{0, 1, 2}});
    TopK other = new TopK(new float[][] {{1f}}, new int[][] {{0}});
    TopK merged = TopK.merge(2, List.of(longer, other), new int[] {0, 10});
    assertArrayEquals(new int[] {0, 1}, merged.indices()[0]);
    assertArrayEquals(new float[] {5f, 4f}, merged.scores()[0]);
    // within the ranks taken, an entry out of order is still refused
    assertMessage(() -> TopK.merge(2, List.of(unordered), new int[] {0}), "ranks (9.0, document 4) after");
  }

  /** A demanding user's finding: a result of null or mismatched arrays was accepted until something read it. */
  @Test
  void aResultOfMismatchedArraysIsRefusedWhereItIsMade() {
    assertMessage(() -> new TopK(null, new int[0][]), "scores is null");
    assertMessage(() -> new TopK(new float[0][], null), "indices is null");
    assertMessage(() -> new TopK(new float[1][0], new int[2][0]), "scores has 1 rows and indices 2");
    assertMessage(() -> new TopK(new float[][] {null}, new int[][] {{0}}), "scores[0] is null");
    assertMessage(() -> new TopK(new float[][] {{1f}}, new int[][] {null}), "indices[0] is null");
    assertMessage(() -> new TopK(new float[][] {{1f}}, new int[][] {{1, 2}}),
        "scores[0] has length 1 and indices[0] 2; expected a score per index");
  }

  @Test
  void badPartsAreNamed() {
    TopK one = new TopK(new float[][] {{1f}}, new int[][] {{0}});
    assertMessage(() -> TopK.merge(0, List.of(one), new int[] {0}), "k = 0");
    assertMessage(() -> TopK.merge(1, List.of(), new int[0]), "parts is empty");
    assertMessage(() -> TopK.merge(1, List.of(one), new int[] {0, 1}), "expected 1 (one per part)");
    assertMessage(() -> TopK.merge(1, List.of(one, new TopK(new float[2][0], new int[2][0])), new int[] {0, 1}),
        "parts[1] has 2 rows of scores and 2 of indices; expected 1 of each");
    assertMessage(() -> TopK.merge(1, List.of(new TopK(new float[][] {{1f}}, new int[][] {{1}})),
        new int[] {Integer.MAX_VALUE}), "below 2^31");
    // a result's arrays are its own, not copies: rows changed after it was made are checked where it is merged
    TopK shortIndices = new TopK(new float[][] {{1f}}, new int[][] {{0}});
    shortIndices.indices()[0] = new int[0];
    assertMessage(() -> TopK.merge(1, List.of(shortIndices), new int[] {0}), "1 scores and 0 indices");
    TopK nullScores = new TopK(new float[][] {{1f}}, new int[][] {{0}});
    nullScores.scores()[0] = null;
    assertMessage(() -> TopK.merge(1, List.of(nullScores), new int[] {0}), "parts[0] query 0 has null scores");
    TopK nullIndices = new TopK(new float[][] {{1f}}, new int[][] {{0}});
    nullIndices.indices()[0] = null;
    assertMessage(() -> TopK.merge(1, List.of(nullIndices), new int[] {0}), "parts[0] query 0 has null indices");
    // a part out of order (a lower score first, an equal score at a higher document, a document twice, NaN
    // second) would come back out of order or repeated: refused, naming the two entries
    assertMessage(() -> TopK.merge(2, List.of(new TopK(new float[][] {{1f, 3f}}, new int[][] {{0, 1}})),
        new int[] {0}), "ranks (3.0, document 1) after (1.0, document 0)");
    assertMessage(() -> TopK.merge(2, List.of(new TopK(new float[][] {{2f, 2f}}, new int[][] {{4, 3}})),
        new int[] {0}), "ranks (2.0, document 3) after (2.0, document 4)");
    assertMessage(() -> TopK.merge(2, List.of(new TopK(new float[][] {{2f, 2f}}, new int[][] {{4, 4}})),
        new int[] {0}), "ranks (2.0, document 4) after (2.0, document 4)");
    assertMessage(() -> TopK.merge(2, List.of(new TopK(new float[][] {{5f, 4f}}, new int[][] {{3, 3}})),
        new int[] {7}), "parts[0] ranks document 3 twice for query 0; expected a top-k: each document once");
    assertMessage(() -> TopK.merge(2, List.of(new TopK(new float[][] {{1f, Float.NaN}}, new int[][] {{0, 1}})),
        new int[] {0}), "ranks (NaN, document 1)");
    assertMessage(() -> TopK.merge(2, List.of(new TopK(new float[][] {{-0f, 0f}}, new int[][] {{0, 1}})),
        new int[] {0}), "ranks (0.0, document 1) after (-0.0, document 0); expected a top-k: higher scores first (as"
        + " Float.compare orders them: NaN highest, +0 above -0)");
  }

  private static void assertMessage(org.junit.jupiter.api.function.Executable call, String part) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    assertTrue(e.getMessage().contains(part), "message \"" + e.getMessage() + "\" lacks \"" + part + "\"");
  }
}
