package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.MaxSim;
import java.io.IOException;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.junit.jupiter.api.Test;

/**
 * A hostile tester's finding: a first pass sorted by a field leaves its hits' scores NaN, and with
 * withFallbackToFirstPassScore the documents without the token field kept that NaN, which ranks above every rescored
 * document: the best match (doc 0) was left out of the top 2. Such a fallback is refused, naming the document; without
 * the fallback, or where every hit has the field, the sorted first pass is rescored as any other.
 */
class HostileSortedFirstPassFallbackTest {
  @Test
  void aNaNFirstPassScoreToFallBackToIsRefusedNamingTheDocument() throws IOException {
    try (MaxSim maxSim = MaxSim.builder().backend("scalar").build(); Directory dir = new ByteBuffersDirectory()) {
      try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig())) {
        for (int i = 0; i < 6; i++) {
          Document d = new Document();
          d.add(new NumericDocValuesField("date", 100 - i));
          if (i % 2 == 0) { // docs 1, 3 and 5 have no token vectors
            d.add(new LateInteractionField("f", new float[][] {{(float) Math.cos(i), (float) Math.sin(i)}}));
          }
          w.addDocument(d);
        }
      }
      try (DirectoryReader reader = DirectoryReader.open(dir)) {
        IndexSearcher searcher = new IndexSearcher(reader);
        TopDocs sorted = searcher.search(MatchAllDocsQuery.INSTANCE, 6, new Sort(new SortField("date",
            SortField.Type.LONG)));
        MaxSimRescorer rescorer = MaxSimRescorer.create("f", new float[][] {{1, 0}},
            VectorSimilarityFunction.DOT_PRODUCT, MaxSimRescorer.Scale.RAW, maxSim);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> rescorer.withFallbackToFirstPassScore().rescore(searcher, sorted, 2));
        assertEquals("doc 1 has no f value, and its first-pass score to fall back to is NaN (a search sorted by a"
            + " field leaves its hits' scores NaN); expected scored first-pass hits, or a rescorer without"
            + " withFallbackToFirstPassScore", e.getMessage());
        // explain says what rescore does
        e = assertThrows(IllegalArgumentException.class, () -> rescorer.withFallbackToFirstPassScore()
            .explain(searcher, Explanation.match(Float.NaN, "a sorted first pass"), 1));
        assertTrue(e.getMessage().startsWith("doc 1 has no f value, and its first-pass score"), e.getMessage());
        // without the fallback the documents without the field score 0, below doc 0's cos(0) = 1
        assertEquals(0, rescorer.rescore(searcher, sorted, 2).scoreDocs[0].doc);
        // with it, a sorted first pass of documents that all have the field needs nothing to fall back to
        TopDocs withField = new TopDocs(sorted.totalHits, new ScoreDoc[] {new ScoreDoc(2, Float.NaN),
            new ScoreDoc(0, Float.NaN)});
        assertEquals(0, rescorer.withFallbackToFirstPassScore().rescore(searcher, withField, 1).scoreDocs[0].doc);
      }
    }
  }
}
