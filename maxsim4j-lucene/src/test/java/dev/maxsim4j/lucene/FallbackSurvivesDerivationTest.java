package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import java.io.IOException;
import java.util.Map;
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
 * withFallbackToFirstPassScore() survives the rescorers derived after it (withScale, withQueryType): a derivation
 * that rebuilt the rescorer without it scored documents without the field 0 again, unnoticed (mutation audit).
 */
class FallbackSurvivesDerivationTest {
  @Test
  void derivedRescorersKeepTheFallback() throws IOException {
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
            new ScoreDoc[] {new ScoreDoc(1, 5f), new ScoreDoc(0, 3f)});
        MaxSimRescorer fallback = MaxSimRescorer.create("f", new float[][] {{1f, 0f}},
            VectorSimilarityFunction.DOT_PRODUCT).withFallbackToFirstPassScore();
        Map<String, MaxSimRescorer> derived = Map.of(
            "withScale(RAW)", fallback.withScale(MaxSimRescorer.Scale.RAW),
            "withScale(LUCENE)", fallback.withScale(MaxSimRescorer.Scale.LUCENE),
            "withQueryType(INT8)", fallback.withQueryType(DType.INT8),
            "withQueryType(FLOAT32)", fallback.withQueryType(DType.FLOAT32),
            "withScale(RAW).withQueryType(BINARY)",
                fallback.withScale(MaxSimRescorer.Scale.RAW).withQueryType(DType.BINARY));
        derived.forEach((name, r) -> {
          try {
            ScoreDoc top = r.rescore(searcher, firstPass, 2).scoreDocs[0];
            assertEquals(1, top.doc, name + ": the document without the field keeps its first-pass 5, ranked first");
            assertEquals(5f, top.score, name);
            assertEquals(5f, r.explain(searcher, Explanation.match(5f, "first"), 1).getValue().floatValue(), name);
          } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        });
      }
    }
  }
}
