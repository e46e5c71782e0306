package dev.maxsim4j.internal;

/**
 * Which (query, document) pairs one call scores, and where each pair's score lands in the flat output.
 *
 * <ul>
 *   <li>ALL_PAIRS: pair {@code p = i * Nd + j}, query {@code i}, document {@code j};
 *   <li>PAIRWISE: pair {@code p = b}, query {@code b}, document {@code b};
 *   <li>CANDIDATES: pair {@code p = b * K + c}, query {@code b}, document {@code b * K + c}.
 * </ul>
 * The saved argmax of pair {@code p} and query slot {@code s} is at {@code p * argmaxStride() + s};
 * {@code documentsPerQuery} is Nd, 1 or K.
 */
public record Problem(Kind kind, Tokens queries, Tokens documents, int documentsPerQuery) {

  public enum Kind { ALL_PAIRS, PAIRWISE, CANDIDATES }

  public static Problem allPairs(Tokens q, Tokens d) {
    return new Problem(Kind.ALL_PAIRS, q, d, d.rows);
  }

  public static Problem pairwise(Tokens q, Tokens d) {
    return new Problem(Kind.PAIRWISE, q, d, 1);
  }

  public static Problem candidates(Tokens q, Tokens d, int k) {
    return new Problem(Kind.CANDIDATES, q, d, k);
  }

  /** Number of scores: Nq*Nd, B, or B*K. */
  public int pairs() {
    return kind == Kind.ALL_PAIRS
        ? Math.multiplyExact(queries.rows, documents.rows)
        : kind == Kind.PAIRWISE ? queries.rows : Math.multiplyExact(queries.rows, documentsPerQuery);
  }

  /** The pair index of a query's c-th document. */
  public int pair(int query, int c) {
    return query * documentsPerQuery() + c;
  }

  /** The document of a query's c-th pair. */
  public int document(int query, int c) {
    return kind == Kind.ALL_PAIRS ? c : query * documentsPerQuery + c;
  }

  /** Queries that document {@code doc} is scored against: all of them, or its one owner. */
  public int firstQueryOf(int doc) {
    return kind == Kind.ALL_PAIRS ? 0 : doc / documentsPerQuery;
  }

  public int endQueryOf(int doc) {
    return kind == Kind.ALL_PAIRS ? queries.rows : doc / documentsPerQuery + 1;
  }

  /** Pair of (query, doc) when the two meet in this problem. */
  public int pairOf(int query, int doc) {
    return kind == Kind.ALL_PAIRS ? query * documents.rows + doc : doc;
  }

  public int argmaxStride() {
    return queries.maxRowLength;
  }
}
