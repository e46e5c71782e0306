package dev.maxsim4j.internal.cpu;

import dev.maxsim4j.internal.Tokens;

/**
 * The oracle: plain loops, every product and sum in float64, the contract spelled out line by line.
 * Slow on purpose; every other backend is tested against it.
 */
final class ReferenceKernel implements PairKernel {

  @Override
  public String name() {
    return "reference";
  }

  @Override
  public String description() {
    return "plain Java loops in float64";
  }

  @Override
  public Bound bind(Tokens queries, Tokens documents) {
    return () -> new Worker() {
      private int doc;

      @Override
      public void load(int doc) {
        this.doc = doc;
      }

      @Override
      public float score(int query, int[] argmax, int offset) {
        return (float) maxSim(queries, query, documents, doc, argmax, offset);
      }
    };
  }

  /** MaxSim of one pair in float64; -1e9 for a document with no valid token. */
  static double maxSim(Tokens q, int i, Tokens d, int j, int[] argmax, int offset) {
    if (d.validCount[j] == 0) {
      return dev.maxsim4j.internal.Backend.EMPTY_DOCUMENT_SCORE;
    }
    double sum = 0;
    for (int s = 0; s < q.rowLength[i]; s++) {
      if (!q.isValid(i, s)) {
        continue; // a masked query token leaves the sum
      }
      double best = Double.NEGATIVE_INFINITY;
      int bestSlot = -1;
      for (int t = 0; t < d.rowLength[j]; t++) {
        if (!d.isValid(j, t)) {
          continue; // a masked document token leaves the max
        }
        double dot = 0;
        for (int k = 0; k < q.dim; k++) {
          dot += q.value(q.rowStart[i] + s, k) * d.value(d.rowStart[j] + t, k);
        }
        if (bestSlot < 0 || (Double.isNaN(dot) && !Double.isNaN(best))) {
          best = dot; // NaN is never dropped
          bestSlot = t;
        } else if (dot > best) { // strict: ties keep the lowest slot
          best = dot;
          bestSlot = t;
        }
      }
      sum += best;
      if (argmax != null) {
        argmax[offset + s] = bestSlot;
      }
    }
    return sum;
  }
}
