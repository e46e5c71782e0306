package dev.maxsim4j.internal.cpu;

import dev.maxsim4j.internal.Backend;

/**
 * Per-query bounded selection of the best {@code k} documents. Order: higher score first (NaN ranks above
 * every number, as in {@link Float#compare}, so a corrupt document surfaces instead of hiding), equal
 * scores by the lower document index. Each query keeps a binary min-heap of its current best.
 */
public final class TopKCollector {
  private final int k;
  private final float[][] scores;
  private final int[][] docs;
  private final int[] sizes;
  private boolean spent;

  public TopKCollector(int queries, int k) {
    this.k = k;
    this.scores = new float[queries][k];
    this.docs = new int[queries][k];
    this.sizes = new int[queries];
  }

  /** True when (s1, d1) ranks below (s2, d2). */
  static boolean worse(float s1, int d1, float s2, int d2) {
    int c = Float.compare(s1, s2);
    return c < 0 || (c == 0 && d1 > d2);
  }

  public void offer(int query, float score, int doc) {
    float[] s = scores[query];
    int[] d = docs[query];
    int n = sizes[query];
    if (n < k) {
      int i = n++;
      sizes[query] = n;
      // sift up: the root holds the worst kept entry
      while (i > 0) {
        int parent = (i - 1) >>> 1;
        if (!worse(score, doc, s[parent], d[parent])) {
          break;
        }
        s[i] = s[parent];
        d[i] = d[parent];
        i = parent;
      }
      s[i] = score;
      d[i] = doc;
    } else if (worse(s[0], d[0], score, doc)) {
      siftDown(s, d, n, score, doc);
    }
  }

  void mergeFrom(TopKCollector other) {
    for (int q = 0; q < sizes.length; q++) {
      for (int r = 0; r < other.sizes[q]; r++) {
        offer(q, other.scores[q][r], other.docs[q][r]);
      }
    }
  }

  /**
   * Sorted best-first: each query's heap taken apart from its worst entry on (a heap sort in place, no boxed
   * indices beside k entries), so the collector is spent.
   */
  public Backend.TopKResult result() {
    if (spent) {
      throw new IllegalStateException("this collector's entries were taken by an earlier result()");
    }
    spent = true;
    int queries = sizes.length;
    float[][] outS = new float[queries][];
    int[][] outD = new int[queries][];
    for (int q = 0; q < queries; q++) {
      int n = sizes[q];
      float[] s = scores[q];
      int[] d = docs[q];
      outS[q] = new float[n];
      outD[q] = new int[n];
      for (int last = n - 1; last >= 0; last--) {
        outS[q][last] = s[0];
        outD[q][last] = d[0];
        siftDown(s, d, last, s[last], d[last]); // the last entry takes the root's place in a heap one smaller
      }
      sizes[q] = 0;
    }
    return new Backend.TopKResult(outS, outD);
  }

  /** Puts (score, doc) at the root of the first {@code n} entries' heap and sifts it down to its place. */
  private static void siftDown(float[] s, int[] d, int n, float score, int doc) {
    int i = 0;
    while (true) {
      int child = 2 * i + 1;
      if (child >= n) {
        break;
      }
      if (child + 1 < n && worse(s[child + 1], d[child + 1], s[child], d[child])) {
        child++;
      }
      if (!worse(s[child], d[child], score, doc)) {
        break;
      }
      s[i] = s[child];
      d[i] = d[child];
      i = child;
    }
    if (n > 0) {
      s[i] = score;
      d[i] = doc;
    }
  }
}
