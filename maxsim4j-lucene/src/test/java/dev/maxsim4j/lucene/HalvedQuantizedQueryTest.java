package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.io.IOException;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.LateInteractionField;
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
 * withQueryType: a document scores MaxSim against the dequantized query on Lucene's scale also where its raw sum
 * passes fp32's range and the value comes from the halved query: that query is quantized too. A halved query left
 * unquantized scored such documents against the float query, unnoticed, since the overflow test's query quantizes
 * exactly (mutation audit).
 */
class HalvedQuantizedQueryTest {
  // binary: mean |x| = 0.75 with signs (+, -): each token dequantizes to (0.75, -0.75), 0.75 x 2e38 against the
  // document
  private static final float[][] QUERY = {{1f, -0.5f}, {1f, -0.5f}, {1f, -0.5f}};
  private static final float[][] DOCUMENT = {{2e38f, 0f}};

  @Test
  void anOverflowingSumScoresTheDequantizedQuery() throws IOException {
    float[] dequantized = TokenBatch.ofQuery(QUERY).quantize(DType.BINARY).toFloatArray();
    double s = 0;
    for (int t = 0; t < QUERY.length; t++) {
      s += (double) dequantized[2 * t] * DOCUMENT[0][0] + (double) dequantized[2 * t + 1] * DOCUMENT[0][1];
    }
    assertEquals(4.5e38, s, 1e33, "the raw sum against the dequantized query passes fp32's range");
    float expected = (float) ((QUERY.length + s) / 2);
    try (MaxSim maxSim = MaxSim.builder().backend("scalar").build(); Directory dir = new ByteBuffersDirectory()) {
      try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig())) {
        Document d = new Document();
        d.add(new LateInteractionField("f", DOCUMENT));
        d.add(new QuantizedLateInteractionField("q", DOCUMENT, DType.INT8));
        w.addDocument(d);
      }
      try (DirectoryReader reader = DirectoryReader.open(dir)) {
        IndexSearcher searcher = new IndexSearcher(reader);
        TopDocs first = new TopDocs(new TotalHits(1, TotalHits.Relation.EQUAL_TO),
            new ScoreDoc[] {new ScoreDoc(0, 1f)});
        MaxSimRescorer floats = MaxSimRescorer.create("f", QUERY, VectorSimilarityFunction.DOT_PRODUCT,
            MaxSimRescorer.Scale.LUCENE, maxSim).withQueryType(DType.BINARY);
        MaxSimRescorer quantized = MaxSimRescorer.createQuantized("q", QUERY, MaxSimRescorer.Scale.LUCENE, maxSim)
            .withQueryType(DType.BINARY);
        for (MaxSimRescorer r : new MaxSimRescorer[] {floats, quantized}) {
          float score = r.rescore(searcher, first, 1).scoreDocs[0].score;
          assertEquals(expected, score, Math.abs(expected) * 1e-5f, r.toString());
          assertEquals(score, r.explain(searcher, Explanation.match(1f, "first"), 0).getValue().floatValue(),
              r.toString());
        }
      }
    }
  }
}
