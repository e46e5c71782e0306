package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import java.io.IOException;
import java.io.UncheckedIOException;
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
 * A document without the rescored field (doc 1, beside doc 0 with tokens): rescore() and explain() give it 0, or with
 * withFallbackToFirstPassScore() its first-pass score, and the rescorers derived after that (withScale,
 * withQueryType) keep the fallback. The mutation audit found an explain() that returned the first-pass score without
 * the fallback and derivations that dropped it, both unnoticed.
 */
class DocumentsWithoutTheFieldTest {
  /** Doc 0 with tokens in field f, doc 1 without the field. */
  private static Directory index() throws IOException {
    Directory dir = new ByteBuffersDirectory();
    try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig())) {
      Document with = new Document();
      with.add(new LateInteractionField("f", new float[][] {{0.6f, 0.8f}}));
      w.addDocument(with);
      Document without = new Document();
      without.add(new StringField("id", "no tokens", StringField.Store.NO));
      w.addDocument(without);
    }
    return dir;
  }

  @Test
  void explainOfADocumentWithoutTheFieldIsZeroWithoutTheFallback() throws IOException {
    try (MaxSim maxSim = MaxSim.builder().backend("scalar").build(); Directory dir = index()) {
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

  @Test
  void derivedRescorersKeepTheFallback() throws IOException {
    try (Directory dir = index()) {
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
            throw new UncheckedIOException(e);
          }
        });
      }
    }
  }
}
