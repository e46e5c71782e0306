package dev.maxsim4j.internal.cpu;

import dev.maxsim4j.internal.Tokens;
import java.math.BigDecimal;

/**
 * The oracle: plain loops, every product and sum in float64, the contract spelled out line by line; pairs of
 * products so large that float64's rounding could matter in fp32 exactly ({@link #maxSim}). Slow on purpose; every
 * other backend is tested against it.
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

  /** Nothing: it reads both sides where they lie. */
  @Override
  public WorkingMemory workingMemory(Tokens queries, Tokens documents) {
    return new WorkingMemory(0, 0);
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
        return ReferenceKernel.score(queries, query, documents, doc, argmax, offset);
      }
    };
  }

  /**
   * {@link #maxSim} rounded to fp32 as the contract returns it: a NaN as {@link Float#NaN}'s bits, a zero as +0 (a
   * sum of products too small for fp32 that are all negative is a tiny negative float64, which rounds to -0, where
   * the fp32 kernels' sums start from +0 and stay there; top-k orders +0 above -0).
   */
  static float score(Tokens q, int i, Tokens d, int j, int[] argmax, int offset) {
    float score = (float) maxSim(q, i, d, j, argmax, offset);
    return score != score ? Float.NaN : score + 0f;
  }

  /**
   * Pairs whose products reach this magnitude may be scored exactly ({@link #exactMaxSim}): float64's rounding of
   * their sums, up to about (d + Lq) x 2^-53 of it, could otherwise leave a remainder of any size up to past fp32's
   * largest value where the products cancel (2^250 + 2^130 - 2^250 - 2^130 sums to -2^130 in float64: -Infinity in
   * fp32, where the exact score is 0).
   */
  static final double EXACT_FROM = 0x1p64;

  /**
   * MaxSim of one pair in float64, rounded to fp32 by the caller; -1e9 for a document with no valid token. Where the
   * sum over query tokens of each one's largest sum of |products| (the magnitude) reaches {@link #EXACT_FROM}, every
   * product is finite, and float64's rounding of that magnitude could reach 2^-26 of the score (the products
   * cancel), the pair is scored exactly instead: its exact MaxSim rounded once to fp32, with the exact maxima's
   * argmax. Elsewhere float64 is within a fraction of an fp32 ulp, and its maxima and ties stand (products that all
   * pass fp32's range keep the first valid token, as the fp32 kernels do).
   */
  static double maxSim(Tokens q, int i, Tokens d, int j, int[] argmax, int offset) {
    if (d.validCount[j] == 0) {
      return dev.maxsim4j.internal.Backend.EMPTY_DOCUMENT_SCORE;
    }
    double sum = 0;
    double magnitude = 0; // sum over query tokens of the largest sum of |products|; NaN or infinite if one is
    int terms = q.dim;
    for (int s = 0; s < q.rowLength[i]; s++) {
      if (!q.isValid(i, s)) {
        continue; // a masked query token leaves the sum
      }
      terms++;
      double best = Double.NEGATIVE_INFINITY;
      int bestSlot = -1;
      double largest = 0;
      for (int t = 0; t < d.rowLength[j]; t++) {
        if (!d.isValid(j, t)) {
          continue; // a masked document token leaves the max
        }
        double dot = 0;
        double absolute = 0;
        for (int k = 0; k < q.dim; k++) {
          double product = q.value(q.rowStart[i] + s, k) * d.value(d.rowStart[j] + t, k);
          dot += product;
          absolute += Math.abs(product);
        }
        largest = absolute > largest || absolute != absolute ? absolute : largest;
        if (bestSlot < 0 || (Double.isNaN(dot) && !Double.isNaN(best))) {
          best = dot; // NaN is never dropped
          bestSlot = t;
        } else if (dot > best) { // strict: ties keep the lowest slot
          best = dot;
          bestSlot = t;
        }
      }
      sum += best;
      magnitude += largest;
      if (argmax != null) {
        argmax[offset + s] = bestSlot;
      }
    }
    boolean cancels = Double.isFinite(magnitude) && magnitude >= EXACT_FROM
        && (terms + 2) * 0x1p-52 * magnitude > 0x1p-26 * Math.abs(sum);
    return cancels ? exactMaxSim(q, i, d, j, argmax, offset) : sum;
  }

  /**
   * MaxSim of a pair of finite values exactly (every product, sum and comparison in BigDecimal), rounded once to fp32,
   * the argmax of the exact maxima (ties keep the lowest slot). Slow; only pairs of huge products come here. Values
   * are converted as each product meets them, so the pair holds a few BigDecimals at a time, not one per value (about
   * a hundred bytes each, where a 1-bit value takes one bit).
   */
  private static double exactMaxSim(Tokens q, int i, Tokens d, int j, int[] argmax, int offset) {
    BigDecimal sum = BigDecimal.ZERO;
    for (int s = 0; s < q.rowLength[i]; s++) {
      if (!q.isValid(i, s)) {
        continue;
      }
      int queryToken = q.rowStart[i] + s;
      BigDecimal best = null;
      int bestSlot = -1;
      for (int t = 0; t < d.rowLength[j]; t++) {
        if (!d.isValid(j, t)) {
          continue;
        }
        int documentToken = d.rowStart[j] + t;
        BigDecimal dot = BigDecimal.ZERO;
        for (int k = 0; k < q.dim; k++) {
          // exact: a float64 as a BigDecimal is its value (Tokens.value: a quantized one's scale x q, exact)
          dot = dot.add(new BigDecimal(q.value(queryToken, k)).multiply(new BigDecimal(d.value(documentToken, k))));
        }
        if (best == null || dot.compareTo(best) > 0) {
          best = dot;
          bestSlot = t;
        }
      }
      sum = sum.add(best);
      if (argmax != null) {
        argmax[offset + s] = bestSlot;
      }
    }
    return sum.floatValue(); // rounded once, to nearest
  }
}
