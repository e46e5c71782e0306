package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.MaxSim;
import java.io.IOException;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TotalHits;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.junit.jupiter.api.Test;

/**
 * explain() of a document without the field says what rescore() gives it: 0 without the fallback, whatever its
 * first-pass score (an explain that returned the first-pass score there went unnoticed: mutation audit).
 */
class ExplainWithoutFieldTest {
  @Test
  void explainOfADocumentWithoutTheFieldIsZeroWithoutTheFallback() throws IOException {
    try (MaxSim maxSim = MaxSim.builder().backend("scalar").build(); Directory dir = new ByteBuffersDirectory()) {
      try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig())) {
        Document with = new Document();
        with.add(new LateInteractionField("f", new float[][] {{0.6f, 0.8f}}));
        w.addDocument(with);
        Document without = new Document();
        without.add(new StringField("id", "no tokens", StringField.Store.NO));
        w.addDocument(without);
      }
      try (DirectoryReader reader = DirectoryReader.open(dir)) {
        IndexSearcher searcher = new IndexSearcher(reader);
        TopDocs firstPass = new TopDocs(new TotalHits(2, TotalHits.Relation.EQUAL_TO),
            new ScoreDoc[] {new ScoreDoc(1, 7f), new ScoreDoc(0, 3f)});
        for (MaxSimRescorer.Scale scale : MaxSimRescorer.Scale.values()) {
          MaxSimRescorer rescorer = MaxSimRescorer.create("f", new float[][] {{1f, 0f}},
              VectorSimilarityFunction.DOT_PRODUCT, scale, maxSim);
          ScoreDoc[] hits = rescorer.rescore(searcher, firstPass, 2).scoreDocs;
          assertEquals(1, hits[1].doc, scale + ": the document without the field ranks last");
          assertEquals(0f, hits[1].score, scale + ": rescore gives it 0");
          assertEquals(0f, rescorer.explain(searcher, Explanation.match(7f, "first"), 1).getValue().floatValue(),
              scale + ": explain gives it 0 too, not its first-pass 7");
          MaxSimRescorer fallback = rescorer.withFallbackToFirstPassScore();
          assertEquals(7f, fallback.rescore(searcher, firstPass, 2).scoreDocs[0].score, scale + ": fallback");
          assertEquals(7f, fallback.explain(searcher, Explanation.match(7f, "first"), 1).getValue().floatValue(),
              scale + ": explain of the fallback");
        }
      }
    }
  }
}
