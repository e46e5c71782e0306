package dev.maxsim4j.lucene;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.PriorityQueue;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.Collector;
import org.apache.lucene.search.CollectorManager;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.LeafCollector;
import org.apache.lucene.search.Scorable;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TotalHits;

/**
 * What {@link LateInteractionRetriever#searchExact} collects, as an ordinary Lucene search of the documents with token
 * vectors: each slice's collector gathers them a chunk at a time and rescores each chunk into a running top k, a full
 * one as it fills and the rest as its segment (or part of one) ends, so a slice holds k hits, and a chunk only while
 * it runs; the manager merges the slices' tops in the rescorer's ranking. Being a search, it runs on the searcher's
 * executor and stops at its timeout as any search does (the searcher's {@code timedOut()}, and hits of the documents
 * collected before).
 */
final class ExactSearchCollector implements Collector {
  private final MaxSimRescorer rescorer;
  private final IndexSearcher searcher;
  private final int k;
  private final int chunk;
  /** The documents collected and not yet rescored: a chunk's room while a segment is collected, else null. */
  private ScoreDoc[] pending;
  private int pendingCount;
  private long collected;
  /** Worst of the best first, so the head is the one a better hit replaces. */
  private final PriorityQueue<ScoreDoc> best = new PriorityQueue<>(MaxSimRescorer.RANKING.reversed());

  private ExactSearchCollector(MaxSimRescorer rescorer, IndexSearcher searcher, int k, int chunk) {
    this.rescorer = rescorer;
    this.searcher = searcher;
    this.k = k;
    this.chunk = chunk;
  }

  /** Collectors of chunks of {@code chunk} documents, reduced to the best {@code k} of them all. */
  static CollectorManager<ExactSearchCollector, TopDocs> manager(MaxSimRescorer rescorer, IndexSearcher searcher,
      int k, int chunk) {
    return new CollectorManager<>() {
      @Override
      public ExactSearchCollector newCollector() {
        return new ExactSearchCollector(rescorer, searcher, k, chunk);
      }

      @Override
      public TopDocs reduce(Collection<ExactSearchCollector> collectors) throws IOException {
        List<ScoreDoc> hits = new ArrayList<>();
        long total = 0;
        for (ExactSearchCollector c : collectors) {
          c.rescorePending(); // what a segment the search stopped in (a timeout) may have left unfinished
          hits.addAll(c.best);
          total += c.collected;
        }
        ScoreDoc[] ranked = hits.toArray(new ScoreDoc[0]);
        Arrays.sort(ranked, MaxSimRescorer.RANKING);
        // what a FieldExistsQuery collecting maxDoc hits counts: every live document with token vectors, exactly
        return new TopDocs(new TotalHits(total, TotalHits.Relation.EQUAL_TO),
            Arrays.copyOf(ranked, Math.min(k, ranked.length)));
      }
    };
  }

  @Override
  public ScoreMode scoreMode() {
    return ScoreMode.COMPLETE_NO_SCORES;
  }

  @Override
  public LeafCollector getLeafCollector(LeafReaderContext context) {
    int docBase = context.docBase;
    int room = Math.max(1, Math.min(chunk, context.reader().maxDoc()));
    return new LeafCollector() {
      @Override
      public void setScorer(Scorable scorer) {}

      @Override
      public void collect(int doc) throws IOException {
        if (pending == null) {
          pending = new ScoreDoc[room];
        }
        pending[pendingCount++] = new ScoreDoc(docBase + doc, 0f);
        collected++;
        if (pendingCount == pending.length) {
          rescorePending();
        }
      }

      @Override
      public void finish() throws IOException {
        // Lucene builds every slice's collector before it searches: pending documents left until the reduction
        // would hold every slice's remainder at once, as many as the index's documents with many small slices
        rescorePending();
        pending = null;
      }
    };
  }

  /** Rescores the pending documents, keeping the best {@code k} of them and of those before. */
  private void rescorePending() throws IOException {
    if (pendingCount == 0) {
      return;
    }
    ScoreDoc[] docs = Arrays.copyOf(pending, pendingCount);
    pendingCount = 0;
    TopDocs hits = new TopDocs(new TotalHits(docs.length, TotalHits.Relation.EQUAL_TO), docs);
    for (ScoreDoc h : rescorer.rescore(searcher, hits, k).scoreDocs) {
      if (best.size() < k) {
        best.add(h);
      } else if (MaxSimRescorer.RANKING.compare(h, best.peek()) < 0) {
        best.poll();
        best.add(h);
      }
    }
  }
}
