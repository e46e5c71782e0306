package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.LateInteractionFloatValuesSource;
import org.apache.lucene.search.LateInteractionRescorer;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TotalHits;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.junit.jupiter.api.Test;

/**
 * A sum of best dot products past fp32's range whose Lucene value (n + S) / 2 is not: Lucene sums halves and reports
 * it; the rescorer and the similarity halved an infinity and ranked the document first. Found by a hostile tester.
 */
class HostileLuceneScaleOverflowTest {
  private static final float[][] QUERY = {{1f}, {1f}};
  private static final float[][] DOCUMENT = {{2e38f}};  // each query token's best dot is 2e38: S = 4e38
  private static final float EXPECTED = (float) ((QUERY.length + 4e38) / 2);

  private static TopDocs firstHit() {
    return new TopDocs(new TotalHits(1, TotalHits.Relation.EQUAL_TO), new ScoreDoc[] {new ScoreDoc(0, 1f)});
  }

  @Test
  void aSumPastFloatsRangeScoresWhatLuceneScores() throws Exception {
    try (MaxSim maxSim = MaxSim.builder().backend("vector").threads(1).build();
        ByteBuffersDirectory dir = new ByteBuffersDirectory()) {
      try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig())) {
        Document d = new Document();
        d.add(new LateInteractionField("f", DOCUMENT));
        d.add(new QuantizedLateInteractionField("q", DOCUMENT, DType.INT8));
        w.addDocument(d);
      }
      try (DirectoryReader reader = DirectoryReader.open(dir)) {
        IndexSearcher searcher = new IndexSearcher(reader);
        float lucene = new LateInteractionRescorer(new LateInteractionFloatValuesSource("f", QUERY,
            VectorSimilarityFunction.DOT_PRODUCT)).rescore(searcher, firstHit(), 1).scoreDocs[0].score;
        assertEquals(EXPECTED, lucene, 1e33f, "Lucene's own rescorer");
        float ours = MaxSimRescorer.create("f", QUERY, VectorSimilarityFunction.DOT_PRODUCT,
            MaxSimRescorer.Scale.LUCENE, maxSim).rescore(searcher, firstHit(), 1).scoreDocs[0].score;
        assertEquals(EXPECTED, ours, 1e33f, "MaxSimRescorer, Scale.LUCENE");
        // int8: 2e38 is 127 x its scale, exact within the int8 rounding of one value
        for (DType queryType : new DType[] {DType.FLOAT32, DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
          float quantized = MaxSimRescorer.createQuantized("q", QUERY, MaxSimRescorer.Scale.LUCENE, maxSim)
              .withQueryType(queryType).rescore(searcher, firstHit(), 1).scoreDocs[0].score;
          assertEquals(EXPECTED, quantized, 1e33f, "quantized field, query " + queryType);
        }
        float raw = MaxSimRescorer.create("f", QUERY, VectorSimilarityFunction.DOT_PRODUCT,
            MaxSimRescorer.Scale.RAW, maxSim).rescore(searcher, firstHit(), 1).scoreDocs[0].score;
        assertEquals(Float.POSITIVE_INFINITY, raw, "the raw fp32 sum overflows, as the contract says");
      }
      float similarity = new MaxSimMultiVectorSimilarity(maxSim).compare(QUERY, DOCUMENT,
          VectorSimilarityFunction.DOT_PRODUCT);
      assertEquals(EXPECTED, similarity, 1e33f, "MaxSimMultiVectorSimilarity");
    }
  }
}
