package dev.maxsim4j.lucene;

import java.io.IOException;
import org.apache.lucene.index.FloatVectorValues;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.QueryTimeout;
import org.apache.lucene.search.AcceptDocs;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.TimeLimitingKnnCollectorManager;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.knn.KnnCollectorManager;
import org.apache.lucene.search.knn.TopKnnCollectorManager;

/**
 * A {@link KnnFloatVectorQuery} that finds each segment's {@code k} nearest vectors even where the segment's HNSW
 * graph does not reach them. HNSW graphs are not guaranteed to be connected, and many equal vectors (the encodings
 * of passages a tokenizer reads as the same tokens, such as text without spaces) cut them apart: a graph search then
 * returns a few dozen of those and none of the other documents. A segment whose graph search returns fewer than
 * {@code k} of its vectors (of those a filter accepts) is searched exactly instead, over the documents the query
 * accepts, as Lucene searches a restrictive filter. Each segment is asked for {@code k}, not the share of it
 * Lucene's optimistic search asks for, so that a short answer can be told from a fair one. A graph search that
 * returns {@code k} is taken as it is: where {@code k} or more equal vectors trap it, it can still miss nearer ones
 * (ask for more candidates than equal vectors a segment may hold, or index one vector per distinct value).
 */
public final class CompleteKnnFloatVectorQuery extends KnnFloatVectorQuery {
  /** The {@code k} nearest vectors of {@code field} to {@code target}, as {@link KnnFloatVectorQuery}. */
  public CompleteKnnFloatVectorQuery(String field, float[] target, int k) {
    super(Arguments.nonNull(field, "field"), Arguments.nonNull(target, "target"), k);
  }

  /** As above, among the documents {@code filter} matches (null: all). */
  public CompleteKnnFloatVectorQuery(String field, float[] target, int k, Query filter) {
    super(Arguments.nonNull(field, "field"), Arguments.nonNull(target, "target"), k, filter);
  }

  @Override
  protected KnnCollectorManager getKnnCollectorManager(int k, IndexSearcher searcher) {
    return new TopKnnCollectorManager(k, searcher) {
      @Override
      public boolean isOptimistic() {
        return false;
      }
    };
  }

  @Override
  protected TopDocs approximateSearch(LeafReaderContext context, AcceptDocs acceptDocs, int visitedLimit,
      KnnCollectorManager manager) throws IOException {
    TopDocs found = super.approximateSearch(context, acceptDocs, visitedLimit, manager);
    // a searcher's timeout that stopped the graph search stops here too, as Lucene's own exact fallback does
    QueryTimeout timeout =
        manager instanceof TimeLimitingKnnCollectorManager limited ? limited.getQueryTimeout() : null;
    if (timeout != null && timeout.shouldExit()) {
      return found;
    }
    FloatVectorValues vectors = context.reader().getFloatVectorValues(field);
    if (vectors == null) {
      return found;
    }
    // deleted documents count in size(): such a segment may be searched exactly where its graph was right, a pass
    // over the documents it accepts, never a vector missed. A filter's cost counts the live documents it accepts
    // that hold a vector, and is checked too: Lucene falls back to an exact search only where the graph returns
    // fewer than the segment's share of k, which equal vectors in a segment of many undercut
    long available = vectors.size();
    if (visitedLimit != Integer.MAX_VALUE) {
      available = Math.min(available, acceptDocs.cost());
    }
    return found.scoreDocs.length < Math.min(k, available) ? exactSearch(context, acceptDocs.iterator(), timeout)
        : found;
  }
}
