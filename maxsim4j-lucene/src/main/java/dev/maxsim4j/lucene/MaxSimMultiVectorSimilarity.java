package dev.maxsim4j.lucene;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.MultiVectorSimilarity;

/**
 * Lucene's {@code SUM_MAX_SIM} for one (query, document) pair, computed by maxsim4j: for plugging into
 * {@code LateInteractionFloatValuesSource} where a {@code DoubleValuesSource} is needed (function queries,
 * sorting). Lucene decodes each document into {@code float[][]} before calling it, one document at a time;
 * to rescore many candidates use {@link MaxSimRescorer}, which scores them together in fused calls.
 *
 * <p>Values as {@link MaxSimRescorer.Scale#LUCENE}: {@code (n + S) / 2} for DOT_PRODUCT (unit vectors) and
 * COSINE; an empty document scores {@code Float.MIN_VALUE} as in Lucene.
 */
public final class MaxSimMultiVectorSimilarity implements MultiVectorSimilarity {
  private final MaxSim maxSim;

  /** Scores with the given instance (not closed by this object). */
  public MaxSimMultiVectorSimilarity(MaxSim maxSim) {
    this.maxSim = Arguments.nonNull(maxSim, "maxSim");
  }

  /** Scores with the JVM-wide default instance (see {@link MaxSimRescorer#create}). */
  public MaxSimMultiVectorSimilarity() {
    this(DefaultMaxSim.get());
  }

  @Override
  public float compare(float[][] queryVector, float[][] docVector, VectorSimilarityFunction similarity) {
    // the rows as read once (a row swapped meanwhile could pass the length check, then be scored): the outer arrays
    // alone, as only the rows' lengths are checked here, and Lucene calls this for every document it scores
    queryVector = Arguments.nonNull(queryVector, "queryVector").clone();
    docVector = Arguments.nonNull(docVector, "docVector").clone();
    if (similarity != VectorSimilarityFunction.DOT_PRODUCT && similarity != VectorSimilarityFunction.COSINE) {
      throw new IllegalArgumentException("similarity = " + similarity + "; expected DOT_PRODUCT or COSINE");
    }
    // each side's rows are checked even when the other is empty: a malformed array is refused, whatever it meets
    int queryDim = queryVector.length == 0 ? 0 : dim("queryVector", queryVector);
    int docDim = docVector.length == 0 ? 0 : dim("docVector", docVector);
    if (docVector.length == 0) {
      return Float.MIN_VALUE;
    }
    if (queryVector.length == 0) {
      return 0f; // a query with no token scores 0
    }
    if (queryDim != docDim) {
      throw new IllegalArgumentException("queryVector has dim " + queryDim + ", docVector dim " + docDim
          + "; expected equal");
    }
    TokenBatch q = TokenBatch.of(new float[][][] {queryVector});
    TokenBatch d = TokenBatch.of(new float[][][] {docVector});
    if (similarity == VectorSimilarityFunction.COSINE) {
      q = q.l2Normalized();
      d = d.l2Normalized();
    }
    float sum = maxSim.pairwise(q, d)[0];
    return LuceneScale.needsHalved(sum)
        ? LuceneScale.valueOfHalved(queryVector.length, maxSim.pairwise(LuceneScale.halved(q), d)[0])
        : LuceneScale.value(queryVector.length, sum);
  }

  /** The dim of every token of {@code vectors}, checked here so that errors name them, not the batch's rows. */
  private static int dim(String name, float[][] vectors) {
    int dim = vectors[0] == null ? 0 : vectors[0].length;
    for (int t = 0; t < vectors.length; t++) {
      if (vectors[t] == null || vectors[t].length != dim || dim == 0) {
        String seen = vectors[t] == null ? " is null" : " has length " + vectors[t].length;
        throw new IllegalArgumentException(name + "[" + t + "]" + seen + "; expected "
            + (dim == 0 ? "a vector of length >= 1" : "length " + dim + ", as " + name + "[0]"));
      }
    }
    return dim;
  }
}
