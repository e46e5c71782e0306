package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import java.io.IOException;
import org.apache.lucene.document.BinaryDocValuesField;
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
import org.apache.lucene.util.BytesRef;
import org.junit.jupiter.api.Test;

/**
 * A stored value of no token (QuantizedLateInteractionField.encode stores one for 0 tokens; a float one can be written
 * by hand) under {@link MaxSimRescorer.Scale#LUCENE}: the rescorer promises Lucene's SUM_MAX_SIM, which gives such a
 * document {@code Float.MIN_VALUE}, as MaxSimMultiVectorSimilarity does; it reported {@code (n + -1e9) / 2}, about
 * -5e8, ranking the document below those without the field (0) and every negative similarity. RAW keeps -1e9.
 */
class HostileEmptyValueLuceneScaleTest {
  @Test
  void aValueOfNoTokenScoresAsLuceneScoresIt() throws IOException {
    float[][] q = {{1f, 0f}, {0f, 1f}};
    try (MaxSim maxSim = MaxSim.builder().backend("scalar").build(); Directory dir = new ByteBuffersDirectory()) {
      try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig())) {
        for (int i = 0; i < 3; i++) {
          Document doc = new Document();
          if (i == 0) {
            doc.add(new LateInteractionField("f", new float[][] {{-1f, 0f}}));
            doc.add(new QuantizedLateInteractionField("q", new float[][] {{-1f, 0f}}, DType.INT8));
          } else if (i == 1) {
            doc.add(new BinaryDocValuesField("f", new BytesRef(new byte[] {2, 0, 0, 0}))); // dim 2, no floats
            doc.add(new BinaryDocValuesField("q", QuantizedLateInteractionField.encode(DType.INT8, new byte[0], null,
                0, 2)));
          }
          w.addDocument(doc); // document 2 has neither field
        }
      }
      float lucene = new MaxSimMultiVectorSimilarity(maxSim).compare(q, new float[0][],
          VectorSimilarityFunction.DOT_PRODUCT);
      assertEquals(Float.MIN_VALUE, lucene);
      try (DirectoryReader r = DirectoryReader.open(dir)) {
        IndexSearcher s = new IndexSearcher(r);
        for (String field : new String[] {"f", "q"}) {
          MaxSimRescorer rescorer = field.equals("q") ? MaxSimRescorer.createQuantized(field, q,
              MaxSimRescorer.Scale.LUCENE, maxSim) : MaxSimRescorer.create(field, q,
                  VectorSimilarityFunction.DOT_PRODUCT, MaxSimRescorer.Scale.LUCENE, maxSim);
          ScoreDoc[] top = rescorer.rescore(s, s.search(MatchAllDocsQuery.INSTANCE, 3), 3).scoreDocs;
          // doc 0: (2 + (-1 + 0)) / 2; doc 1, no token: MIN_VALUE; doc 2, no field: 0
          assertEquals("0=0.5 1=1.4E-45 2=0.0 ", ranked(top), field);
          assertEquals(lucene, rescorer.explain(s, Explanation.match(0f, "first"), 1).getValue().floatValue(), field);
          MaxSimRescorer raw = field.equals("q") ? MaxSimRescorer.createQuantized(field, q, MaxSimRescorer.Scale.RAW,
              maxSim) : MaxSimRescorer.create(field, q, VectorSimilarityFunction.DOT_PRODUCT,
                  MaxSimRescorer.Scale.RAW, maxSim);
          assertEquals(-1e9f, raw.explain(s, Explanation.match(0f, "first"), 1).getValue().floatValue(), field);
        }
      }
    }
  }

  private static String ranked(ScoreDoc[] hits) {
    StringBuilder out = new StringBuilder();
    for (ScoreDoc h : hits) {
      out.append(h.doc).append('=').append(h.score).append(' ');
    }
    return out.toString();
  }
}
