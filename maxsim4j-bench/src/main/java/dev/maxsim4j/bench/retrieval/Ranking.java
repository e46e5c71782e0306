package dev.maxsim4j.bench.retrieval;

import java.util.Arrays;

/**
 * Known-item quality of a method over a set of queries: Recall@1 and @10 and MRR@10 of each query's one
 * relevant document, and the overlap of its top 10 with exact MaxSim's top 10.
 */
final class Ranking {
  static final int TOP = 10;
  private int queries;
  private int at1;
  private int at10;
  private double reciprocal;
  private double overlap;

  /** Adds one query: the method's ranked documents (best first), the relevant one, exact MaxSim's top 10. */
  void add(int[] ranked, int relevant, int[] exactTop) {
    queries++;
    int n = Math.min(TOP, ranked.length);
    for (int r = 0; r < n; r++) {
      if (ranked[r] == relevant) {
        at1 += r == 0 ? 1 : 0;
        at10++;
        reciprocal += 1.0 / (r + 1);
        break;
      }
    }
    int shared = 0;
    for (int r = 0; r < n; r++) {
      for (int e : exactTop) {
        if (e == ranked[r]) {
          shared++;
          break;
        }
      }
    }
    overlap += exactTop.length == 0 ? 1 : shared / (double) exactTop.length;
  }

  double recallAt1() {
    return at1 / (double) queries;
  }

  double recallAt10() {
    return at10 / (double) queries;
  }

  double mrrAt10() {
    return reciprocal / queries;
  }

  double overlapAt10() {
    return overlap / queries;
  }

  /** Indices of the {@code k} highest scores, best first (ties: the lower index). */
  static int[] top(float[] scores, int k) {
    return top(scores, null, k);
  }

  /** As {@link #top(float[], int)} over only the indices {@code among} (all when null). */
  static int[] top(float[] scores, int[] among, int k) {
    int n = among == null ? scores.length : among.length;
    k = Math.min(k, n);
    // a min-heap of the best k seen, as (score, index) compared score first
    int[] heap = new int[k];
    int size = 0;
    for (int i = 0; i < n; i++) {
      int doc = among == null ? i : among[i];
      if (size < k) {
        heap[size++] = doc;
        for (int c = size - 1; c > 0 && worse(scores, heap[c], heap[(c - 1) / 2]); c = (c - 1) / 2) {
          swap(heap, c, (c - 1) / 2);
        }
      } else if (worse(scores, heap[0], doc)) {
        heap[0] = doc;
        for (int p = 0; ; ) {
          int l = 2 * p + 1;
          int r = l + 1;
          int m = p;
          if (l < k && worse(scores, heap[l], heap[m])) {
            m = l;
          }
          if (r < k && worse(scores, heap[r], heap[m])) {
            m = r;
          }
          if (m == p) {
            break;
          }
          swap(heap, p, m);
          p = m;
        }
      }
    }
    Integer[] order = new Integer[size];
    for (int i = 0; i < size; i++) {
      order[i] = heap[i];
    }
    Arrays.sort(order, (a, b) -> worse(scores, a, b) ? 1 : worse(scores, b, a) ? -1 : 0);
    return Arrays.stream(order).mapToInt(Integer::intValue).toArray();
  }

  /** Whether document {@code a} ranks below {@code b}: a lower score, or an equal one at a higher index. */
  private static boolean worse(float[] scores, int a, int b) {
    return scores[a] < scores[b] || (scores[a] == scores[b] && a > b);
  }

  private static void swap(int[] h, int i, int j) {
    int t = h[i];
    h[i] = h[j];
    h[j] = t;
  }
}
