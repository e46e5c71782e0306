package dev.maxsim4j;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.PriorityQueue;

/**
 * The best {@code k} documents of each query: {@code scores[i][r]} and {@code indices[i][r]} at rank
 * {@code r} (0 is best). Higher scores first; equal scores by the lower document index; a NaN score ranks
 * above every number so that a corrupt document is seen, not hidden. A query has {@code min(k, Nd)} entries.
 * Two results are equal when they hold the same scores (as {@link Float#equals}) and indices.
 */
public record TopK(float[][] scores, int[][] indices) {

  // a record compares and prints its arrays by identity: equal rankings were unequal, printed as [[F@1b6d3586
  @Override
  public boolean equals(Object o) {
    return o instanceof TopK t && Arrays.deepEquals(scores, t.scores) && Arrays.deepEquals(indices, t.indices);
  }

  @Override
  public int hashCode() {
    return 31 * Arrays.deepHashCode(scores) + Arrays.deepHashCode(indices);
  }

  @Override
  public String toString() {
    return "TopK[scores=" + ArrayText.of(scores) + ", indices=" + ArrayText.of(indices) + "]";
  }

  /**
   * The exact top {@code k} over a corpus scored in parts (shards, partitions, devices): part {@code p} holds
   * the top-k of the same queries over documents {@code firstDocuments[p] ..}, its indices local to the part.
   * The result indexes the whole corpus and orders entries as every top-k does; each part needs only its own
   * top {@code k} (a part's best k contain all of its entries in the global best k). A bounded merge: it reads
   * at most {@code k} entries per part and query.
   *
   * @throws IllegalArgumentException for a null or mismatched part, or one whose first {@code k} entries (the
   *     only ones read) are not in top-k order (each document once), which the merge would return out of order
   */
  public static TopK merge(int k, List<TopK> parts, int[] firstDocuments) {
    if (k < 1) {
      throw new IllegalArgumentException("k = " + k + "; expected k >= 1");
    }
    // the list and each part's best k as read once: the caller's could change between a check and the merge
    List<TopK> given = new ArrayList<>(Arguments.nonNull(parts, "parts"));
    int[] first = Arguments.nonNull(firstDocuments, "firstDocuments").clone();
    if (given.isEmpty()) {
      throw new IllegalArgumentException("parts is empty; expected at least one part's top-k");
    }
    if (first.length != given.size()) {
      throw new IllegalArgumentException("firstDocuments has " + first.length + " entries; expected "
          + given.size() + " (one per part)");
    }
    List<TopK> copies = new ArrayList<>(given.size());
    int queries = -1;
    for (int p = 0; p < given.size(); p++) {
      TopK original = given.get(p);
      float[][] givenScores = original == null ? null : original.scores;
      int[][] givenIndices = original == null ? null : original.indices;
      if (givenScores == null || givenIndices == null) {
        throw new IllegalArgumentException("parts[" + p + "] is null or has null arrays");
      }
      if (queries < 0) {
        queries = givenScores.length;
      }
      if (givenScores.length != queries || givenIndices.length != queries) {
        throw new IllegalArgumentException("parts[" + p + "] has " + givenScores.length + " rows of scores and "
            + givenIndices.length + " of indices; expected " + queries + " of each, one per query like parts[0]");
      }
      if (first[p] < 0) {
        throw new IllegalArgumentException("firstDocuments[" + p + "] = " + first[p] + "; expected >= 0");
      }
      TopK part = new TopK(new float[queries][], new int[queries][]);
      for (int i = 0; i < queries; i++) {
        float[] rowScores = givenScores[i];
        int[] rowIndices = givenIndices[i];
        if (rowScores == null || rowIndices == null) {
          throw new IllegalArgumentException("parts[" + p + "] query " + i + " has null "
              + (rowScores == null ? "scores" : "indices") + "; expected its top-k arrays");
        }
        if (rowScores.length != rowIndices.length) {
          throw new IllegalArgumentException("parts[" + p + "] query " + i + " has " + rowScores.length
              + " scores and " + rowIndices.length + " indices; expected as many of each");
        }
        part.scores[i] = Arrays.copyOf(rowScores, Math.min(k, rowScores.length)); // the merge reads no more
        part.indices[i] = Arrays.copyOf(rowIndices, part.scores[i].length);
        for (int r = 0; r < part.indices[i].length; r++) {
          int local = part.indices[i][r];
          if (local < 0 || (long) first[p] + local > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("parts[" + p + "] query " + i + " has document " + local
                + " at firstDocuments[" + p + "] = " + first[p] + "; expected 0 <= document and a"
                + " corpus index below 2^31");
          }
          // the merge reads each part from its best entry on: one out of order would be returned out of order
          if (r > 0 && ranksAbove(part.scores[i][r], local, part.scores[i][r - 1], part.indices[i][r - 1])) {
            throw new IllegalArgumentException("parts[" + p + "] query " + i + " ranks (" + part.scores[i][r]
                + ", document " + local + ") after (" + part.scores[i][r - 1] + ", document "
                + part.indices[i][r - 1] + "); expected a top-k: higher scores first, equal scores by the"
                + " lower document, each document once");
          }
        }
      }
      copies.add(part);
    }
    float[][] scores = new float[queries][];
    int[][] indices = new int[queries][];
    for (int i = 0; i < queries; i++) {
      mergeQuery(i, k, copies, first, scores, indices);
    }
    return new TopK(scores, indices);
  }

  /** One query: a heap of the parts' next entries, best first. */
  private static void mergeQuery(int i, int k, List<TopK> parts, int[] first, float[][] scores, int[][] indices) {
    long available = 0; // parts may hold more than 2^31 entries together
    PriorityQueue<int[]> heads = new PriorityQueue<>((a, b) -> compare(parts, first, i, a, b));
    for (int p = 0; p < parts.size(); p++) {
      int n = parts.get(p).scores[i].length;
      available += Math.min(n, k);
      if (n > 0) {
        heads.add(new int[] {p, 0});
      }
    }
    int n = Arguments.arraySize(1, Math.min(k, available), "query " + i + "'s merged top-k",
        "ask for a smaller k");
    scores[i] = new float[n];
    indices[i] = new int[n];
    java.util.Map<Integer, Integer> partOf = new java.util.HashMap<>(); // a corpus document: the part it came from
    for (int r = 0; r < n; r++) {
      int[] head = heads.poll();
      TopK part = parts.get(head[0]);
      scores[i][r] = part.scores[i][head[1]];
      indices[i][r] = first[head[0]] + part.indices[i][head[1]];
      Integer earlier = partOf.putIfAbsent(indices[i][r], head[0]);
      if (earlier != null && earlier == head[0]) { // one part's entries passed the order check at different scores
        throw new IllegalArgumentException("parts[" + earlier + "] ranks document " + part.indices[i][head[1]]
            + " twice for query " + i + "; expected a top-k: each document once");
      }
      if (earlier != null) {
        throw new IllegalArgumentException("parts[" + earlier + "] and parts[" + head[0] + "] both rank document "
            + indices[i][r] + " for query " + i + " (firstDocuments " + first[earlier] + " and " + first[head[0]]
            + "); expected parts over disjoint ranges of documents");
      }
      if (++head[1] < part.scores[i].length) {
        heads.add(head);
      }
    }
  }

  /** Whether (score, document) must rank before (or is the same entry as) the entry before it. */
  private static boolean ranksAbove(float score, int document, float previousScore, int previousDocument) {
    int byScore = Float.compare(score, previousScore);
    return byScore > 0 || byScore == 0 && document <= previousDocument;
  }

  /** Negative when entry {@code a} ranks above {@code b}: the higher score, then the lower corpus index. */
  private static int compare(List<TopK> parts, int[] first, int i, int[] a, int[] b) {
    float sa = parts.get(a[0]).scores[i][a[1]];
    float sb = parts.get(b[0]).scores[i][b[1]];
    int byScore = Float.compare(sb, sa);
    if (byScore != 0) { // Float.compare, as every top-k orders: NaN highest, +0 above -0
      return byScore;
    }
    long da = (long) first[a[0]] + parts.get(a[0]).indices[i][a[1]];
    long db = (long) first[b[0]] + parts.get(b[0]).indices[i][b[1]];
    return Long.compare(da, db);
  }
}
