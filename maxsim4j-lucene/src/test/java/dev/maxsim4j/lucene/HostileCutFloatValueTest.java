package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.MaxSim;
import java.io.IOException;
import java.util.Arrays;
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
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.apache.lucene.util.BytesRef;
import org.junit.jupiter.api.Test;

/**
 * A LateInteractionField value cut short or over-long by a few bytes, its d still the query's, was refused as
 * "token vectors of dim 3 (15 bytes), expected dim 3 like the query vectors": a d that contradicts itself, nothing
 * about the length that is wrong. It is now named by its length and the whole tokens expected.
 */
class HostileCutFloatValueTest {
  @Test
  void aValueOfPartTokensIsNamedByItsLength() throws IOException {
    byte[] good = BytesRef.deepCopyOf(LateInteractionField.encode(new float[][] {{1, 0, 0}, {0, 1, 0}})).bytes;
    try (MaxSim maxSim = MaxSim.builder().backend("scalar").build(); Directory dir = new ByteBuffersDirectory()) {
      try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig())) {
        for (int length : new int[] {good.length - 1, good.length - 9, good.length + 3}) {
          Document doc = new Document();
          doc.add(new BinaryDocValuesField("f", new BytesRef(Arrays.copyOf(good, length))));
          w.addDocument(doc);
        }
      }
      try (DirectoryReader r = DirectoryReader.open(dir)) {
        IndexSearcher s = new IndexSearcher(r);
        MaxSimRescorer rescorer = MaxSimRescorer.create("f", new float[][] {{1, 0, 0}},
            VectorSimilarityFunction.DOT_PRODUCT, MaxSimRescorer.Scale.RAW, maxSim);
        int[] lengths = {good.length - 1, good.length - 9, good.length + 3};
        for (int doc = 0; doc < 3; doc++) {
          int d = doc;
          for (boolean explain : new boolean[] {false, true}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> {
              if (explain) {
                rescorer.explain(s, Explanation.match(1f, "first"), d);
              } else {
                rescorer.rescore(s, new org.apache.lucene.search.TopDocs(null,
                    new org.apache.lucene.search.ScoreDoc[] {new org.apache.lucene.search.ScoreDoc(d, 1)}), 1);
              }
            });
            String m = e.getMessage();
            assertTrue(m.startsWith("field f of doc " + doc + ": " + lengths[doc] + " bytes"), m);
            assertTrue(m.contains("whole number of tokens"), m);
            assertFalse(m.contains("expected dim 3"), m);
          }
        }
        assertTrue(s.search(MatchAllDocsQuery.INSTANCE, 3).scoreDocs.length == 3);
      }
    }
  }
}
