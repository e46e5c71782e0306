package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.FixedDimensionalEncoder;
import dev.maxsim4j.MaxSim;
import java.io.IOException;
import java.util.Random;
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
import org.junit.jupiter.api.function.Executable;

/**
 * A field of the other kind (a QuantizedLateInteractionField read as a LateInteractionField, or the reverse) is named
 * as what it is: its header read as the other layout was reported as tokens of a d in the hundreds of thousands, or as
 * layout version 8, which sent a user looking for corrupted bytes rather than the wrong rescorer.
 */
class HostileOtherFieldKindTest {
  private static final int DIM = 8;

  @Test
  void aFieldOfTheOtherKindIsNamedAsWhatItHolds() throws IOException {
    Random rnd = new Random(5);
    float[][] query = MaxSimRescorerTest.unitVectors(rnd, 2, false, DIM);
    // d = 1 and 257 make a float value's first byte 1, the quantized layout's version
    for (int d : new int[] {DIM, 1, 257}) {
      float[][] tokens = MaxSimRescorerTest.unitVectors(rnd, 3, false, d);
      float[][] q = d == DIM ? query : MaxSimRescorerTest.unitVectors(rnd, 2, false, d);
      for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
        try (Directory dir = new ByteBuffersDirectory(); MaxSim maxSim = MaxSim.create()) {
          try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig())) {
            Document doc = new Document();
            doc.add(new LateInteractionField("floats", tokens));
            doc.add(new QuantizedLateInteractionField("quantized", tokens, type));
            w.addDocument(doc);
          }
          try (DirectoryReader r = DirectoryReader.open(dir)) {
            IndexSearcher s = new IndexSearcher(r);
            TopDocs one = new TopDocs(new TotalHits(1, TotalHits.Relation.EQUAL_TO),
                new ScoreDoc[] {new ScoreDoc(0, 1)});
            MaxSimRescorer floats = MaxSimRescorer.create("quantized", q, VectorSimilarityFunction.DOT_PRODUCT,
                MaxSimRescorer.Scale.RAW, maxSim);
            String quantizedValue = "field quantized of doc 0: a QuantizedLateInteractionField value (3 " + type
                + " tokens of d = " + d + ")";
            assertMessage(() -> floats.rescore(s, one, 1), quantizedValue, "d=" + d + " " + type);
            assertMessage(() -> floats.explain(s, Explanation.match(1, "first"), 0), quantizedValue, d + " " + type);
            MaxSimRescorer quantized = MaxSimRescorer.createQuantized("floats", q, MaxSimRescorer.Scale.RAW, maxSim);
            String floatValue = "field floats of doc 0: a LateInteractionField value (3 float tokens of d = " + d + ")";
            assertMessage(() -> quantized.rescore(s, one, 1), floatValue, "d=" + d + " " + type);
            assertMessage(() -> quantized.explain(s, Explanation.match(1, "first"), 0), floatValue, d + " " + type);
            assertMessage(() -> QuantizedLateInteractionField.decode(LateInteractionField.encode(tokens)),
                "value: a LateInteractionField value (3 float tokens of d = " + d + ")", "d=" + d);
            LateInteractionRetriever retriever = new LateInteractionRetriever(FixedDimensionalEncoder.builder(d)
                .build(), "fde", "quantized", maxSim);
            assertMessage(() -> retriever.searchExact(s, q, 1), quantizedValue, "d=" + d + " " + type);
          }
        }
      }
    }
  }

  private static void assertMessage(Executable call, String part, String what) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call, what);
    assertTrue(e.getMessage().contains(part), what + ": message \"" + e.getMessage() + "\" lacks \"" + part + "\"");
  }
}
