package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.FixedDimensionalEncoder;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.io.IOException;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.junit.jupiter.api.Test;

/**
 * Encodings indexed by hand with another similarity than maximum inner product (KnnFloatVectorField's two-argument
 * constructor takes EUCLIDEAN) were searched by it: the nearest by L2 distance or angle, not the encodings that
 * approximate MaxSim, so the best document could be left out of the candidates, silently. Such a segment is refused,
 * naming the field, its similarity and the one expected.
 */
class HostileEncodingSimilarityTest {
  @Test
  void encodingsOfAnotherSimilarityAreRefusedByName() throws IOException {
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(4).simHashBits(1).repetitions(2).build();
    float[][] query = {{1, 0, 0, 0}, {0, 1, 0, 0}};
    float[][] negated = {{-1, 0, 0, 0}, {0, -1, 0, 0}};
    float[] q = encoder.encodeQueries(TokenBatch.ofQuery(query))[0];
    try (MaxSim maxSim = MaxSim.builder().backend("scalar").build()) {
      LateInteractionRetriever retriever = new LateInteractionRetriever(encoder, "fde", "tokens", maxSim);
      for (VectorSimilarityFunction f : new VectorSimilarityFunction[] {VectorSimilarityFunction.EUCLIDEAN,
          VectorSimilarityFunction.COSINE}) {
        try (Directory dir = new ByteBuffersDirectory()) {
          try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig())) {
            // doc 0: the query's own tokens, an encoding of the largest inner product (10 q) but far in L2 distance
            // doc 1: the negated tokens, an encoding near q in L2 distance (0.9 q) and at an angle (q + a little)
            float[][] encodings = {scaled(q, 10f), scaled(q, 0.9f)};
            if (f == VectorSimilarityFunction.COSINE) {
              encodings[0] = scaled(q, 10f);
              encodings[0][0] += 3f;
              encodings[1] = scaled(q, 0.1f);
            }
            for (int i = 0; i < 2; i++) {
              Document doc = new Document();
              doc.add(new KnnFloatVectorField("fde", encodings[i], f));
              doc.add(new LateInteractionField("tokens", i == 0 ? query : negated));
              w.addDocument(doc);
            }
          }
          try (DirectoryReader r = DirectoryReader.open(dir)) {
            IndexSearcher s = new IndexSearcher(r);
            assertEquals(0, retriever.searchExact(s, query, 1).scoreDocs[0].doc);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> retriever.search(s, query, 1, 1), f + ": searched by it");
            assertTrue(e.getMessage().startsWith("field fde of segment ") && e.getMessage().contains(f.toString())
                && e.getMessage().contains("MAXIMUM_INNER_PRODUCT"), e.getMessage());
          }
        }
      }
    }
  }

  private static float[] scaled(float[] v, float by) {
    float[] out = v.clone();
    for (int i = 0; i < out.length; i++) {
      out[i] *= by;
    }
    return out;
  }
}
