package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.io.IOException;
import java.util.Arrays;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.LateInteractionFloatValuesSource;
import org.apache.lucene.search.LateInteractionRescorer;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TotalHits;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.junit.jupiter.api.Test;

/**
 * Lucene's scale where the raw sum S leaves fp32's range: (n + S) / 2 can be finite (Lucene sums halves), and must not
 * come out infinite and rank first; elsewhere it is computed from S itself, bit for bit, since halving a subnormal
 * query value rounds.
 */
class HostileLuceneScaleOverflowTest {
  private static final float[][] QUERY = {{1f}, {1f}};
  private static final float[][] DOCUMENT = {{2e38f}};  // each query token's best dot is 2e38: S = 4e38
  private static final float EXPECTED = (float) ((QUERY.length + 4e38) / 2);
  private static final float[][] HALVED_QUERY = {{1f, -0.5f}, {1f, -0.5f}, {1f, -0.5f}};
  private static final float[][] HALVED_DOCUMENT = {{2e38f, 0f}};

  private static TopDocs firstHit() {
    return new TopDocs(new TotalHits(1, TotalHits.Relation.EQUAL_TO), new ScoreDoc[] {new ScoreDoc(0, 1f)});
  }

  /** One document of {@code tokens}, as floats in field f and as int8 in field q. */
  private static ByteBuffersDirectory index(float[][] tokens) throws IOException {
    ByteBuffersDirectory dir = new ByteBuffersDirectory();
    try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig())) {
      Document d = new Document();
      d.add(new LateInteractionField("f", tokens));
      d.add(new QuantizedLateInteractionField("q", tokens, DType.INT8));
      w.addDocument(d);
    }
    return dir;
  }

  @Test
  void aSumPastFloatsRangeScoresWhatLuceneScores() throws Exception {
    try (MaxSim maxSim = MaxSim.builder().backend("vector").threads(1).build();
        ByteBuffersDirectory dir = index(DOCUMENT)) {
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
        // one token's dot product past fp32's range: Lucene's per-token arithmetic says infinity, the value is finite
        float[][] twice = {{2f}};
        float single = MaxSimRescorer.create("f", twice, VectorSimilarityFunction.DOT_PRODUCT,
            MaxSimRescorer.Scale.LUCENE, maxSim).rescore(searcher, firstHit(), 1).scoreDocs[0].score;
        assertEquals((float) ((1 + 4e38) / 2), single, 1e33f, "a single dot product of 4e38");
        float raw = MaxSimRescorer.create("f", QUERY, VectorSimilarityFunction.DOT_PRODUCT,
            MaxSimRescorer.Scale.RAW, maxSim).rescore(searcher, firstHit(), 1).scoreDocs[0].score;
        assertEquals(Float.POSITIVE_INFINITY, raw, "the raw fp32 sum overflows, as the contract says");
      }
      float similarity = new MaxSimMultiVectorSimilarity(maxSim).compare(QUERY, DOCUMENT,
          VectorSimilarityFunction.DOT_PRODUCT);
      assertEquals(EXPECTED, similarity, 1e33f, "MaxSimMultiVectorSimilarity");
    }
  }
  /**
   * withQueryType: a document scores MaxSim against the dequantized query on Lucene's scale also where its raw sum
   * passes fp32's range and the value comes from the halved query: that query is quantized too. A halved query left
   * unquantized scored such documents against the float query, unnoticed, since the query above quantizes exactly
   * (mutation audit). Binary: mean |x| = 0.75 with signs (+, -), each token dequantizes to (0.75, -0.75), 0.75 x 2e38
   * against the document.
   */
  @Test
  void anOverflowingSumScoresTheDequantizedQuery() throws IOException {
    float[] dequantized = TokenBatch.ofQuery(HALVED_QUERY).quantize(DType.BINARY).toFloatArray();
    double s = 0;
    for (int t = 0; t < HALVED_QUERY.length; t++) {
      s += (double) dequantized[2 * t] * HALVED_DOCUMENT[0][0]
          + (double) dequantized[2 * t + 1] * HALVED_DOCUMENT[0][1];
    }
    assertEquals(4.5e38, s, 1e33, "the raw sum against the dequantized query passes fp32's range");
    float expected = (float) ((HALVED_QUERY.length + s) / 2);
    try (MaxSim maxSim = MaxSim.builder().backend("scalar").build(); Directory dir = index(HALVED_DOCUMENT)) {
      try (DirectoryReader reader = DirectoryReader.open(dir)) {
        IndexSearcher searcher = new IndexSearcher(reader);
        TopDocs first = firstHit();
        MaxSimRescorer floats = MaxSimRescorer.create("f", HALVED_QUERY, VectorSimilarityFunction.DOT_PRODUCT,
            MaxSimRescorer.Scale.LUCENE, maxSim).withQueryType(DType.BINARY);
        MaxSimRescorer quantized = MaxSimRescorer.createQuantized("q", HALVED_QUERY, MaxSimRescorer.Scale.LUCENE,
            maxSim).withQueryType(DType.BINARY);
        for (MaxSimRescorer r : new MaxSimRescorer[] {floats, quantized}) {
          float score = r.rescore(searcher, first, 1).scoreDocs[0].score;
          assertEquals(expected, score, Math.abs(expected) * 1e-5f, r.toString());
          assertEquals(score, r.explain(searcher, Explanation.match(1f, "first"), 0).getValue().floatValue(),
              r.toString());
        }
      }
    }
  }

  private static float[][] filled(int d, float v) {
    float[] t = new float[d];
    Arrays.fill(t, v);
    return new float[][] {t};
  }

  /** 1024 dims of Float.MIN_VALUE against 2^127: S = 2^-12, which Float.MIN_VALUE / 2 = 0 would drop. */
  @Test
  void subnormalQueryValuesKeepTheirProducts() throws Exception {
    float[][] query = filled(1024, Float.MIN_VALUE);
    float expected = (float) ((1 + 0x1p-12) / 2);
    TopDocs hits = new TopDocs(new TotalHits(2, TotalHits.Relation.EQUAL_TO),
        new ScoreDoc[] {new ScoreDoc(0, 1f), new ScoreDoc(1, 1f)});
    try (MaxSim maxSim = MaxSim.builder().backend("vector").threads(1).build();
        ByteBuffersDirectory dir = new ByteBuffersDirectory()) {
      try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig())) {
        for (float[][] tokens : new float[][][] {filled(1024, 0f), filled(1024, 0x1p127f)}) {
          Document doc = new Document();
          doc.add(new LateInteractionField("f", tokens));
          w.addDocument(doc);
        }
      }
      try (DirectoryReader reader = DirectoryReader.open(dir)) {
        IndexSearcher searcher = new IndexSearcher(reader);
        TopDocs lucene = new LateInteractionRescorer(new LateInteractionFloatValuesSource("f", query,
            VectorSimilarityFunction.DOT_PRODUCT)).rescore(searcher, hits, 2);
        assertEquals(1, lucene.scoreDocs[0].doc, "Lucene ranks the document of S = 2^-12 first");
        assertEquals(expected, lucene.scoreDocs[0].score, "Lucene's own value");
        TopDocs ours = MaxSimRescorer.create("f", query, VectorSimilarityFunction.DOT_PRODUCT,
            MaxSimRescorer.Scale.LUCENE, maxSim).rescore(searcher, hits, 2);
        float similarity = new MaxSimMultiVectorSimilarity(maxSim).compare(query, filled(1024, 0x1p127f),
            VectorSimilarityFunction.DOT_PRODUCT);
        assertAll(
            () -> assertEquals(1, ours.scoreDocs[0].doc, "MaxSimRescorer, Scale.LUCENE ranks it first"),
            () -> assertEquals(expected, ours.scoreDocs[0].score, "MaxSimRescorer, Scale.LUCENE value"),
            () -> assertEquals(expected, similarity, "MaxSimMultiVectorSimilarity"));
      }
    }
  }
}

