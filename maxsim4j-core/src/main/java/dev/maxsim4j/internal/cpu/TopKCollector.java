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
      s[i] = score;
      d[i] = doc;
    }
  }

  void mergeFrom(TopKCollector other) {
    for (int q = 0; q < sizes.length; q++) {
      for (int r = 0; r < other.sizes[q]; r++) {
        offer(q, other.scores[q][r], other.docs[q][r]);
      }
    }
  }

  /** Sorted best-first. */
  public Backend.TopKResult result() {
    int queries = sizes.length;
    float[][] outS = new float[queries][];
    int[][] outD = new int[queries][];
    for (int q = 0; q < queries; q++) {
      int n = sizes[q];
      Integer[] order = new Integer[n];
      for (int i = 0; i < n; i++) {
        order[i] = i;
      }
      float[] s = scores[q];
      int[] d = docs[q];
      java.util.Arrays.sort(order,
          (a, b) -> worse(s[a], d[a], s[b], d[b]) ? 1 : worse(s[b], d[b], s[a], d[a]) ? -1 : 0);
      outS[q] = new float[n];
      outD[q] = new int[n];
      for (int r = 0; r < n; r++) {
        outS[q][r] = s[order[r]];
        outD[q][r] = d[order[r]];
      }
    }
    return new Backend.TopKResult(outS, outD);
  }
}
