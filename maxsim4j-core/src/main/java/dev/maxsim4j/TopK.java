package dev.maxsim4j;

import dev.maxsim4j.internal.HeapLimit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.PriorityQueue;

/**
 * The best {@code k} documents of each query: {@code scores[i][r]} and {@code indices[i][r]} at rank
 * {@code r} (0 is best). Higher scores first; equal scores by the lower document index; a NaN score ranks
 * above every number so that a corrupt document is seen, not hidden. Scores compare as {@link Float#compare}
 * does: NaN highest, and +0 above -0 (which no backend returns: a score that rounds to zero is +0, but a part given
 * to {@link #merge} may hold one). A query has {@code min(k, Nd)} entries.
 * Two results are equal when they hold the same scores (as {@link Float#equals}) and indices. The arrays are the
 * result's own, not copies (a ranking is read far more often than it is kept): changing one changes the result, its
 * equality and its hash; a result nobody changes may be shared between threads.
 */
public record TopK(float[][] scores, int[][] indices) {

  /** A result of one row of scores and one of indices per query, each pair of rows of one length. */
  public TopK {
    Arguments.nonNull(scores, "scores");
    Arguments.nonNull(indices, "indices");
    if (scores.length != indices.length) {
      throw new IllegalArgumentException("scores has " + scores.length + " rows and indices " + indices.length
          + "; expected one row of each per query");
    }
    for (int i = 0; i < scores.length; i++) {
      Arguments.nonNull(scores[i], "scores[" + i + "]");
      Arguments.nonNull(indices[i], "indices[" + i + "]");
      if (scores[i].length != indices[i].length) {
        throw new IllegalArgumentException("scores[" + i + "] has length " + scores[i].length + " and indices[" + i
            + "] " + indices[i].length + "; expected a score per index");
      }
    }
  }

  // a record compares and prints its arrays by identity: equal rankings would be unequal and print as [[F@...
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
   * at most {@code k} entries per part and query, each once, and checks each as it reads it.
   *
   * @throws IllegalArgumentException for a null or mismatched part, one whose entries read are not in top-k
   *     order (each document once), which the merge would return out of order, or a result the heap has no room
   *     for beside the parts
   */
  public static TopK merge(int k, List<TopK> parts, int[] firstDocuments) {
    if (k < 1) {
      throw new IllegalArgumentException("k = " + k + "; expected k >= 1");
    }
    // the list, the offsets and every row read once: the caller's could change between a check and the merge
    List<TopK> given = new ArrayList<>(Arguments.nonNull(parts, "parts"));
    int[] first = Arguments.nonNull(firstDocuments, "firstDocuments").clone();
    if (given.isEmpty()) {
      throw new IllegalArgumentException("parts is empty; expected at least one part's top-k");
    }
    if (first.length != given.size()) {
      throw new IllegalArgumentException("firstDocuments has " + first.length + " entries; expected "
          + given.size() + " (one per part)");
    }
    float[][][] partScores = new float[given.size()][][];
    int[][][] partIndices = new int[given.size()][][];
    int queries = -1;
    for (int p = 0; p < given.size(); p++) {
      TopK original = given.get(p);
      float[][] rowsOfScores = original == null ? null : original.scores;
      int[][] rowsOfIndices = original == null ? null : original.indices;
      if (rowsOfScores == null || rowsOfIndices == null) {
        throw new IllegalArgumentException("parts[" + p + "] is null or has null arrays");
      }
      if (queries < 0) {
        queries = rowsOfScores.length;
      }
      if (rowsOfScores.length != queries || rowsOfIndices.length != queries) {
        throw new IllegalArgumentException("parts[" + p + "] has " + rowsOfScores.length + " rows of scores and "
            + rowsOfIndices.length + " of indices; expected " + queries + " of each, one per query like parts[0]");
      }
      if (first[p] < 0) {
        throw new IllegalArgumentException("firstDocuments[" + p + "] = " + first[p] + "; expected >= 0");
      }
      partScores[p] = rowsOfScores.clone();
      partIndices[p] = rowsOfIndices.clone();
      for (int i = 0; i < queries; i++) {
        float[] rowScores = partScores[p][i];
        int[] rowIndices = partIndices[p][i];
        if (rowScores == null || rowIndices == null) {
          throw new IllegalArgumentException("parts[" + p + "] query " + i + " has null "
              + (rowScores == null ? "scores" : "indices") + "; expected its top-k arrays");
        }
        if (rowScores.length != rowIndices.length) {
          throw new IllegalArgumentException("parts[" + p + "] query " + i + " has " + rowScores.length
              + " scores and " + rowIndices.length + " indices; expected as many of each");
        }
      }
    }
    requireHeap(k, queries, partScores);
    float[][] scores = new float[queries][];
    int[][] indices = new int[queries][];
    for (int i = 0; i < queries; i++) {
      mergeQuery(i, k, partScores, partIndices, first, scores, indices);
    }
    return new TopK(scores, indices);
  }

  /**
   * The merged result beside the parts, which stay reachable while it is made, and one query's working arrays:
   * refused by name where the heap cannot hold them, not as an OutOfMemoryError part way through.
   */
  private static void requireHeap(int k, int queries, float[][][] partScores) {
    long merged = 0;
    long read = 0; // the parts' entries, each row once however many parts share it
    long widest = 0;
    java.util.Set<float[]> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    for (int i = 0; i < queries; i++) {
      long available = 0;
      for (float[][] part : partScores) {
        available += Math.min(part[i].length, k);
        read += seen.add(part[i]) ? part[i].length : 0;
      }
      Arguments.arraySize(1, Math.min(k, available), "query " + i + "'s merged top-k", "ask for a smaller k");
      merged += Math.min(available, k);
      widest = Math.max(widest, Math.min(available, k));
    }
    long rows = 2L * queries * HeapLimit.ARRAY_OVERHEAD;
    HeapLimit.requireBytes((merged + read + widest) * (Float.BYTES + Integer.BYTES) + rows * (partScores.length + 1),
        "TopK.merge's " + merged + " entries beside the parts' " + read + " (a score and an index each)",
        "merge with a smaller k, or fewer queries at a time");
  }

  /** A part's entry as read: its position in the part, score and local document. */
  private record Entry(int part, int rank, float score, int local, long document) {}

  /** One query: a heap of the parts' next entries, best first, each entry read once and checked as read. */
  private static void mergeQuery(int i, int k, float[][][] partScores, int[][][] partIndices, int[] first,
      float[][] scores, int[][] indices) {
    long available = 0; // parts may hold more than 2^31 entries together
    PriorityQueue<Entry> heads = new PriorityQueue<>((a, b) -> {
      int byScore = Float.compare(b.score(), a.score()); // as every top-k orders: NaN highest, +0 above -0
      return byScore != 0 ? byScore : Long.compare(a.document(), b.document());
    });
    for (int p = 0; p < partScores.length; p++) {
      int n = partScores[p][i].length;
      available += Math.min(n, k);
      if (n > 0) {
        heads.add(read(i, p, 0, null, partScores, partIndices, first));
      }
    }
    int n = (int) Math.min(k, available); // within one array: requireHeap checked it
    scores[i] = new float[n];
    indices[i] = new int[n];
    int[] partAt = new int[n];
    for (int r = 0; r < n; r++) {
      Entry head = heads.poll();
      scores[i][r] = head.score();
      indices[i][r] = (int) head.document();
      partAt[r] = head.part();
      // a part gives at most k entries, and none is read that no later rank needs: what lies past them is unchecked
      if (r + 1 < n && head.rank() + 1 < Math.min(partScores[head.part()][i].length, k)) {
        heads.add(read(i, head.part(), head.rank() + 1, head, partScores, partIndices, first));
      }
    }
    requireEachDocumentOnce(i, indices[i], partAt, first);
  }

  /**
   * Refuses a document merged twice for query {@code i}: one part's entries that passed the order check at different
   * scores, or parts over overlapping ranges. Found by sorting a copy of the indices (no boxed set beside them).
   */
  private static void requireEachDocumentOnce(int i, int[] merged, int[] partAt, int[] first) {
    int[] sorted = merged.clone();
    Arrays.sort(sorted);
    for (int j = 1; j < sorted.length; j++) {
      if (sorted[j] != sorted[j - 1]) {
        continue;
      }
      int document = sorted[j];
      int earlier = -1;
      for (int r = 0; r < merged.length; r++) {
        if (merged[r] != document) {
          continue;
        }
        if (earlier < 0) {
          earlier = r;
        } else if (partAt[earlier] == partAt[r]) {
          throw new IllegalArgumentException("parts[" + partAt[r] + "] ranks document " + (document - first[partAt[r]])
              + " twice for query " + i + "; expected a top-k: each document once");
        } else {
          throw new IllegalArgumentException("parts[" + partAt[earlier] + "] and parts[" + partAt[r] + "] both rank"
              + " document " + document + " for query " + i + " (firstDocuments " + first[partAt[earlier]] + " and "
              + first[partAt[r]] + "); expected parts over disjoint ranges of documents");
        }
      }
    }
  }

  /** Part {@code p}'s entry at {@code rank} for query {@code i}, checked against the one before it. */
  private static Entry read(int i, int p, int rank, Entry previous, float[][][] partScores, int[][][] partIndices,
      int[] first) {
    float score = partScores[p][i][rank];
    int local = partIndices[p][i][rank];
    if (local < 0 || (long) first[p] + local > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("parts[" + p + "] query " + i + " has document " + local
          + " at firstDocuments[" + p + "] = " + first[p] + "; expected 0 <= document and a"
          + " corpus index below 2^31");
    }
    // the merge reads each part from its best entry on: one out of order would be returned out of order
    if (previous != null && ranksAbove(score, local, previous.score(), previous.local())) {
      throw new IllegalArgumentException("parts[" + p + "] query " + i + " ranks (" + score + ", document " + local
          + ") after (" + previous.score() + ", document " + previous.local() + "); expected a top-k: higher"
          + " scores first (as Float.compare orders them: NaN highest, +0 above -0), equal scores by the lower"
          + " document, each document once");
    }
    return new Entry(p, rank, score, local, (long) first[p] + local);
  }

  /** Whether (score, document) must rank before (or is the same entry as) the entry before it. */
  private static boolean ranksAbove(float score, int document, float previousScore, int previousDocument) {
    int byScore = Float.compare(score, previousScore);
    return byScore > 0 || byScore == 0 && document <= previousDocument;
  }
}
