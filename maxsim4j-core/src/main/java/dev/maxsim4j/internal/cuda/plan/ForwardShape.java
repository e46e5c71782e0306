package dev.maxsim4j.internal.cuda.plan;

import dev.maxsim4j.DType;

/**
 * One forward launch as the rules see it: how its pairs are laid out (all pairs: every query against {@code perQuery}
 * documents from {@code docOffset}; or listed), the longest query and document, d, the storage types, whether
 * the argmax is saved (in int16 where {@code argmax16}), and the documents' stored tokens.
 */
public record ForwardShape(PairLayout layout, int queries, int perQuery, int docOffset, int pairs, int maxQueryLength,
    int maxDocumentLength, int dim, DType queryType, DType documentType, boolean argmax, boolean argmax16,
    long documentTokens) {

  /** A launch whose documents' stored tokens are counted at the longest document's length. */
  public ForwardShape(PairLayout layout, int queries, int perQuery, int docOffset, int pairs, int maxQueryLength,
      int maxDocumentLength, int dim, DType queryType, DType documentType, boolean argmax, boolean argmax16) {
    this(layout, queries, perQuery, docOffset, pairs, maxQueryLength, maxDocumentLength, dim, queryType, documentType,
        argmax, argmax16, (long) maxDocumentLength * (layout == PairLayout.ALL_PAIRS ? docOffset + perQuery : pairs));
  }

  /** The same launch with documents of {@code type}. */
  ForwardShape withDocumentType(DType type) {
    return new ForwardShape(layout, queries, perQuery, docOffset, pairs, maxQueryLength, maxDocumentLength, dim,
        queryType, type, argmax, argmax16, documentTokens);
  }

  /** 32-wide chunks of d: the unit the tensor-core kernels stage query fragments in. */
  int chunks() {
    return Math.ceilDiv(dim, 32); // not (dim + 31) / 32, which wraps for d near 2^31
  }

  /** Whether several pairs share a query, so a warp kept on one query reuses its fragments. */
  boolean queriesShared() {
    return perQuery > 1 && pairs > perQuery;
  }
}
