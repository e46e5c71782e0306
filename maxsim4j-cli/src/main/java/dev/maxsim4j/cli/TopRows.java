package dev.maxsim4j.cli;

import dev.maxsim4j.TopK;

/**
 * The best {@code k} entries of each row of a score matrix, ordered as {@link TopK} orders documents: by score
 * (Float.compare, so a NaN is above every number and a corrupt score is seen), ties by the lower index. Each row is
 * read once into a heap of its best {@code k} so far, in memory of {@code k}, not of the row.
 */
final class TopRows {
  private TopRows() {}

  static TopK of(float[][] scores, int k) {
    float[][] best = new float[scores.length][];
    int[][] index = new int[scores.length][];
    for (int i = 0; i < scores.length; i++) {
      index[i] = best(scores[i], k);
      best[i] = new float[index[i].length];
      for (int r = 0; r < index[i].length; r++) {
        best[i][r] = scores[i][index[i][r]];
      }
    }
    return new TopK(best, index);
  }

  /** The indices of the {@code k} best entries of {@code row}, best first. */
  private static int[] best(float[] row, int k) {
    int n = Math.min(k, row.length);
    int[] heap = new int[n]; // heap[0] is the worst kept: each entry is ranked below its children
    for (int j = 0; j < row.length; j++) {
      if (j < n) {
        heap[j] = j;
        for (int c = j; c > 0 && above(row, heap[(c - 1) / 2], heap[c]); c = (c - 1) / 2) {
          swap(heap, c, (c - 1) / 2);
        }
      } else if (n > 0 && above(row, j, heap[0])) {
        heap[0] = j;
        siftDown(row, heap, n);
      }
    }
    for (int size = n - 1; size > 0; size--) { // the worst kept goes last, and so on
      swap(heap, 0, size);
      siftDown(row, heap, size);
    }
    return heap;
  }

  private static void siftDown(float[] row, int[] heap, int size) {
    for (int p = 0; ; ) {
      int worst = p;
      for (int c = 2 * p + 1; c <= 2 * p + 2 && c < size; c++) {
        if (above(row, heap[worst], heap[c])) {
          worst = c;
        }
      }
      if (worst == p) {
        return;
      }
      swap(heap, p, worst);
      p = worst;
    }
  }

  /** Whether entry {@code a} ranks above entry {@code b}. */
  private static boolean above(float[] row, int a, int b) {
    int c = Float.compare(row[a], row[b]);
    return c > 0 || c == 0 && a < b;
  }

  private static void swap(int[] a, int i, int j) {
    int t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}
