package dev.maxsim4j.internal.cpu;

import dev.maxsim4j.internal.Tokens;

/**
 * The portable fast path for JVMs without {@code jdk.incubator.vector}: fp32 arithmetic, each document
 * widened once into a compact scratch buffer (valid tokens only), four independent partial sums per dot
 * product so the JIT can keep the FMA pipes busy. Quantized tokens are staged as their stored values and each
 * dot product multiplied by {@code queryScale x documentScale}, as the vector kernel does (expanding first
 * overflows single elements of huge scales into infinities, and NaN, where the exact score is not); a float
 * token whose products with stored values could pass fp32's range is divided by a power of two first
 * ({@link Headroom}).
 */
final class ScalarKernel implements PairKernel {

  @Override
  public String name() {
    return "scalar";
  }

  @Override
  public String description() {
    return "plain Java loops in fp32";
  }

  @Override
  public WorkingMemory workingMemory(Tokens queries, Tokens documents) {
    // a worker's document: its valid tokens widened to fp32, their slots and scales
    return new WorkingMemory(PairKernel.stagedQueryBytes(queries, 1),
        PairKernel.workerBytes(documents, (long) documents.dim * Float.BYTES + 2 * Integer.BYTES, 0));
  }

  @Override
  public Bound bind(Tokens queries, Tokens documents) {
    int dim = queries.dim;
    boolean qQuantized = queries.dtype.isQuantized();
    boolean dQuantized = documents.dtype.isQuantized();
    // queries widened and compacted once: valid tokens only, with their slot numbers
    float[][] qData = new float[queries.rows][];
    float[][] qScale = new float[queries.rows][];
    int[][] qSlots = new int[queries.rows][];
    boolean[] qExact = new boolean[queries.rows]; // a token the headroom sends to the exact path (Headroom.divide)
    for (int i = 0; i < queries.rows; i++) {
      qData[i] = new float[queries.validCount[i] * dim];
      qSlots[i] = new int[queries.validCount[i]];
      queries.gatherValid(i, qData[i], qSlots[i], qQuantized ? queries::copyStored : queries::copyTokens);
      qScale[i] = new float[qSlots[i].length];
      for (int s = 0; s < qSlots[i].length; s++) {
        qScale[i][s] = queries.scale(queries.rowStart[i] + qSlots[i][s]);
        if (dQuantized && !qQuantized) { // float tokens against stored values
          float divisor = Headroom.divisor(qData[i], s * dim, dim, 1, Headroom.largestStored(documents.dtype));
          qExact[i] |= Headroom.divide(qData[i], s * dim, dim, 1, divisor, Headroom.exactFrom(documents.dtype));
          qScale[i][s] = divisor;
        }
      }
    }
    boolean scaled = qQuantized || dQuantized;
    double largestQuery = qQuantized && !dQuantized ? Headroom.largestStored(queries.dtype) : 0;
    // unscaled pairs whose partial sums may pass fp32's range are scored exactly (Headroom.mayOverflow)
    double[] qAbsSum = new double[queries.rows];
    double anyQuery = 0;
    for (int i = 0; i < queries.rows && !scaled; i++) {
      qAbsSum[i] = Headroom.largestAbsSum(qData[i], qSlots[i].length, dim);
      anyQuery = qAbsSum[i] > anyQuery ? qAbsSum[i] : anyQuery; // a NaN row scores NaN: it must not hide the others
    }
    float largestFinite = (float) Headroom.largestFinite(documents.dtype);
    boolean scanDocuments = Headroom.mayOverflow(anyQuery, largestFinite);
    return () -> new Worker() {
      private final float[] doc = new float[documents.maxValidCount * dim];
      private final int[] docSlots = new int[documents.maxValidCount];
      private final float[] docScale = new float[documents.maxValidCount];
      private int docTokens;
      private int docIndex;
      /** Whether a loaded token's pairs are scored exactly (Headroom.divide). */
      private boolean docExact;
      /** The loaded document's largest |value|, where a query's partial sums may overflow with it, else 0. */
      private float docLargest;

      @Override
      public void load(int j) {
        docIndex = j;
        docExact = false;
        docTokens = documents.gatherValid(j, doc, docSlots,
            dQuantized ? documents::copyStored : documents::copyTokens);
        for (int t = 0; t < docTokens; t++) {
          docScale[t] = documents.scale(documents.rowStart[j] + docSlots[t]);
          if (largestQuery > 0) { // float tokens against stored query values
            docScale[t] = Headroom.divisor(doc, t * dim, dim, 1, largestQuery);
            docExact |= Headroom.divide(doc, t * dim, dim, 1, docScale[t], Headroom.exactFrom(queries.dtype));
          }
        }
        docLargest = 0;
        for (int e = 0; scanDocuments && e < docTokens * dim; e++) {
          docLargest = Math.max(docLargest, Math.abs(doc[e]));
        }
        // an infinity counts as the largest finite value: a pair's path must not depend on the call's other queries
        docLargest = Math.min(docLargest, largestFinite);
      }

      /**
       * The pair's dot product times both scales, as the vector kernel takes them ({@link ScaleRange#scaled}); a
       * zero dot product stays 0.
       */
      private float value(float[] q, int qo, float qs, int t) {
        float dot = dot(q, qo, doc, t * dim, dim);
        return !scaled || dot == 0 ? dot : ScaleRange.scaled(dot, qs, docScale[t]);
      }

      @Override
      public float score(int query, int[] argmax, int offset) {
        if (qExact[query] || docExact || Headroom.mayOverflow(qAbsSum[query], docLargest)) {
          return ReferenceKernel.score(queries, query, documents, docIndex, argmax, offset);
        }
        float[] q = qData[query];
        int[] slots = qSlots[query];
        double sum = 0;
        for (int s = 0; s < slots.length; s++) {
          int qo = s * dim;
          float qs = qScale[query][s];
          float best = value(q, qo, qs, 0);
          int bestToken = 0;
          for (int t = 1; t < docTokens; t++) {
            float dot = value(q, qo, qs, t);
            if (dot > best || (dot != dot && best == best)) {
              best = dot;
              bestToken = t;
            }
          }
          sum += best;
          if (argmax != null) {
            argmax[offset + slots[s]] = docSlots[bestToken];
          }
        }
        return (float) sum;
      }
    };
  }

  private static float dot(float[] a, int ao, float[] b, int bo, int dim) {
    float s0 = 0;
    float s1 = 0;
    float s2 = 0;
    float s3 = 0;
    int k = 0;
    for (; k + 4 <= dim; k += 4) {
      s0 = Math.fma(a[ao + k], b[bo + k], s0);
      s1 = Math.fma(a[ao + k + 1], b[bo + k + 1], s1);
      s2 = Math.fma(a[ao + k + 2], b[bo + k + 2], s2);
      s3 = Math.fma(a[ao + k + 3], b[bo + k + 3], s3);
    }
    for (; k < dim; k++) {
      s0 = Math.fma(a[ao + k], b[bo + k], s0);
    }
    return (s0 + s1) + (s2 + s3);
  }
}
