package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.FixedDimensionalEncoder;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.FloatVectorValues;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.IndexableField;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.junit.jupiter.api.Test;

/**
 * A caller that fills one array with each document's encoding in turn, building each document's fields with
 * documentFields(tokens, encoding) and adding the documents afterwards (addDocuments): Lucene's vector field keeps
 * the array it is given, so every document was indexed with the last encoding written (and a value written after
 * the norm check, past it): candidates were chosen by encodings of other documents.
 */
class HostileEncodingReuseTest {
  private static final int DIM = 8;

  @Test
  void aReusedEncodingArrayIndexesEachDocumentsOwnEncoding() throws IOException {
    Random rnd = new Random(5);
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(DIM).simHashBits(2).repetitions(4).build();
    try (MaxSim maxSim = MaxSim.builder().backend("scalar").build(); Directory dir = new ByteBuffersDirectory()) {
      LateInteractionRetriever retriever = new LateInteractionRetriever(encoder, "fde", "tokens", maxSim);
      List<float[]> encodings = new ArrayList<>();
      List<List<IndexableField>> docs = new ArrayList<>();
      float[] reused = new float[encoder.dimension()];
      for (int i = 0; i < 4; i++) {
        float[][] t = MaxSimRescorerTest.unitVectors(rnd, 3, false, DIM);
        float[] encoding = encoder.encodeDocuments(TokenBatch.ofQuery(t))[0];
        System.arraycopy(encoding, 0, reused, 0, encoding.length); // the caller's buffer, refilled per document
        encodings.add(encoding);
        docs.add(retriever.documentFields(t, reused));
      }
      Arrays.fill(reused, Float.MAX_VALUE); // written after the check: a norm the check refuses
      for (int i = 0; i < docs.size(); i++) {
        assertArrayEquals(encodings.get(i), ((KnnFloatVectorField) docs.get(i).get(0)).vectorValue(),
            "document " + i + "'s encoding field after the caller's array was refilled");
      }
      try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig().setCodec(retriever.codec()))) {
        w.addDocuments(docs);
      }
      try (DirectoryReader r = DirectoryReader.open(dir)) {
        FloatVectorValues indexed = r.leaves().get(0).reader().getFloatVectorValues("fde");
        for (int ord = 0; ord < indexed.size(); ord++) {
          int doc = indexed.ordToDoc(ord);
          assertArrayEquals(encodings.get(doc), indexed.vectorValue(ord), "document " + doc + "'s indexed encoding");
        }
        assertEquals(docs.size(), indexed.size());
      }
    }
  }
}
