package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.MaxSim;
import java.io.IOException;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.junit.jupiter.api.Test;

/**
 * Scale.RAW with COSINE reports the plain sum of best cosines (Scale's javadoc: "cosines for COSINE"), not Lucene's
 * (n + S) / 2: the values differ though the order does not, so only a value check tells them apart (mutation audit).
 */
class CosineRawScaleTest {
  private static final float[][] QUERY = {{3f, 4f}, {-2f, 0.5f}, {0f, -7f}};
  private static final float[][][] DOCS = {{{1f, 0f}, {0.5f, 2f}}, {{-4f, 1f}, {0f, -0.25f}, {6f, 6f}}};

  private static double cosine(float[] a, float[] b) {
    double dot = 0;
    double na = 0;
    double nb = 0;
    for (int i = 0; i < a.length; i++) {
      dot += (double) a[i] * b[i];
      na += (double) a[i] * a[i];
      nb += (double) b[i] * b[i];
    }
    return dot / Math.sqrt(na * nb);
  }

  private static double rawCosineSum(float[][] query, float[][] doc) {
    double sum = 0;
    for (float[] q : query) {
      double best = Double.NEGATIVE_INFINITY;
      for (float[] d : doc) {
        best = Math.max(best, cosine(q, d));
      }
      sum += best;
    }
    return sum;
  }

  @Test
  void rawScaleOfCosineIsThePlainSumOfBestCosines() throws IOException {
    try (MaxSim maxSim = MaxSim.builder().backend("scalar").build(); Directory dir = new ByteBuffersDirectory()) {
      try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig())) {
        for (float[][] tokens : DOCS) {
          Document d = new Document();
          d.add(new LateInteractionField("f", tokens));
          w.addDocument(d);
        }
      }
      try (DirectoryReader reader = DirectoryReader.open(dir)) {
        IndexSearcher searcher = new IndexSearcher(reader);
        MaxSimRescorer raw = MaxSimRescorer.create("f", QUERY, VectorSimilarityFunction.COSINE,
            MaxSimRescorer.Scale.RAW, maxSim);
        MaxSimRescorer lucene = raw.withScale(MaxSimRescorer.Scale.LUCENE);
        ScoreDoc[] rawHits = raw.rescore(searcher, searcher.search(MatchAllDocsQuery.INSTANCE, 2), 2).scoreDocs;
        ScoreDoc[] luceneHits =
            lucene.rescore(searcher, searcher.search(MatchAllDocsQuery.INSTANCE, 2), 2).scoreDocs;
        assertEquals(2, rawHits.length);
        for (ScoreDoc h : rawHits) {
          double expected = rawCosineSum(QUERY, DOCS[h.doc]);
          assertEquals(expected, h.score, 1e-5, "RAW cosine sum of doc " + h.doc);
          assertEquals(h.score, raw.explain(searcher, Explanation.match(1f, "first"), h.doc).getValue().floatValue(),
              1e-6f, "explain agrees with rescore, doc " + h.doc);
        }
        for (ScoreDoc h : luceneHits) {
          double expected = (QUERY.length + rawCosineSum(QUERY, DOCS[h.doc])) / 2;
          assertEquals(expected, h.score, 1e-5, "LUCENE value of doc " + h.doc);
        }
      }
    }
  }
}
