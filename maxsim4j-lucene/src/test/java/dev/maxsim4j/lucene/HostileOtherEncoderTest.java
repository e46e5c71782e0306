package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.FixedDimensionalEncoder;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Random;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.store.FSDirectory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Encodings written by another encoder of the same dimension (another seed, or other parameters of the same length)
 * were searched as this retriever's: the nearest of them are candidates by another geometry, and recall fell without
 * a word. The retriever's fields record their encoder, and a search by another is refused, naming both.
 */
class HostileOtherEncoderTest {
  private static final int DIM = 8;
  @TempDir Path dir;

  private static FixedDimensionalEncoder.Builder encoder() {
    return FixedDimensionalEncoder.builder(DIM).simHashBits(2).repetitions(4);
  }

  private void index(FSDirectory directory, LateInteractionRetriever retriever, Random rnd, boolean merge)
      throws IOException {
    try (IndexWriter w = new IndexWriter(directory, new IndexWriterConfig().setCodec(retriever.codec()))) {
      for (int i = 0; i < 30; i++) {
        Document doc = new Document();
        retriever.documentFields(MaxSimRescorerTest.unitVectors(rnd, 1 + i % 3, false, DIM)).forEach(doc::add);
        w.addDocument(doc);
        if (i % 10 == 9) {
          w.commit();
        }
      }
      if (merge) {
        w.forceMerge(1);
      }
    }
  }

  @Test
  void aSearchByAnotherEncoderIsRefusedNamingBoth() throws IOException {
    for (boolean merge : new boolean[] {false, true}) {
      Random rnd = new Random(11);
      try (FSDirectory directory = FSDirectory.open(dir.resolve("merge-" + merge));
          MaxSim maxSim = MaxSim.builder().backend("cpu").threads(2).build()) {
        LateInteractionRetriever written = new LateInteractionRetriever(encoder().build(), "fde", "tokens", maxSim);
        index(directory, written, rnd, merge);
        float[][] query = MaxSimRescorerTest.unitVectors(rnd, 2, false, DIM);
        try (DirectoryReader r = DirectoryReader.open(directory)) {
          IndexSearcher s = new IndexSearcher(r);
          assertEquals(5, written.search(s, query, 10, 5).scoreDocs.length);
          LateInteractionRetriever same = new LateInteractionRetriever(encoder().build(), "fde", "tokens", maxSim);
          assertEquals(5, same.search(s, query, 10, 5).scoreDocs.length, "an equal encoder, another instance");
          for (FixedDimensionalEncoder other : new FixedDimensionalEncoder[] {encoder().seed(1).build(),
              encoder().fillEmptyPartitions(false).build(),
              FixedDimensionalEncoder.builder(DIM).simHashBits(3).repetitions(2).build()}) {
            assertEquals(written.encoder().dimension(), other.dimension());
            LateInteractionRetriever reader = new LateInteractionRetriever(other, "fde", "tokens", maxSim);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> reader.search(s, query, 10, 5), other.toString());
            assertTrue(e.getMessage().startsWith("field fde of segment ")
                && e.getMessage().contains("written by " + written.encoder())
                && e.getMessage().contains("expected encodings of this retriever's " + other), e.getMessage());
            assertEquals(5, reader.searchExact(s, query, 5).scoreDocs.length, "exact search reads no encoding");
          }
        }
      }
    }
  }

  /**
   * A hostile tester's finding: with one SimHash bit the fingerprint's probe fills both partitions, so an encoder
   * that differs only in fillEmptyPartitions hashed alike and searched encodings it does not compute. The recorded
   * parameters are compared too.
   */
  @Test
  void anEncoderThatDiffersOnlyInFillingEmptyPartitionsIsRefused() throws IOException {
    FixedDimensionalEncoder.Builder oneBit = FixedDimensionalEncoder.builder(DIM).simHashBits(1).repetitions(1)
        .projectionDim(DIM).seed(1);
    try (FSDirectory directory = FSDirectory.open(dir);
        MaxSim maxSim = MaxSim.builder().backend("cpu").threads(2).build()) {
      LateInteractionRetriever written = new LateInteractionRetriever(oneBit.build(), "fde", "tokens", maxSim);
      index(directory, written, new Random(13), false);
      LateInteractionRetriever reader = new LateInteractionRetriever(oneBit.fillEmptyPartitions(false).build(), "fde",
          "tokens", maxSim);
      try (DirectoryReader r = DirectoryReader.open(directory)) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> reader.search(new IndexSearcher(r), MaxSimRescorerTest.unitVectors(new Random(14), 2, false, DIM),
                10, 5));
        assertTrue(e.getMessage().contains("written by " + written.encoder()), e.getMessage());
      }
    }
  }

  /**
   * A reviewer's finding: segments of two encoders merged into one kept the newest segment's single fingerprint
   * attribute, and a search by that encoder no longer saw the other's encodings. Each fingerprint is now an attribute
   * of its own name, which a merge keeps beside the other's; the single attribute of earlier builds is read too, and
   * survives a merge with this build's segments, which no longer write it.
   */
  @Test
  void segmentsOfTwoEncodersMergedIntoOneAreRefused() throws IOException {
    Random rnd = new Random(5);
    try (MaxSim maxSim = MaxSim.builder().backend("cpu").threads(2).build()) {
      LateInteractionRetriever first = new LateInteractionRetriever(encoder().seed(1).build(), "fde", "tokens",
          maxSim);
      LateInteractionRetriever second = new LateInteractionRetriever(encoder().seed(2).build(), "fde", "tokens",
          maxSim);
      float[][] query = MaxSimRescorerTest.unitVectors(rnd, 2, false, DIM);
      try (FSDirectory directory = FSDirectory.open(dir.resolve("two-encoders"))) {
        index(directory, first, rnd, false);
        index(directory, second, rnd, true);
        try (DirectoryReader r = DirectoryReader.open(directory)) {
          assertEquals(1, r.leaves().size(), "merged");
          for (LateInteractionRetriever searching : new LateInteractionRetriever[] {first, second}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> searching.search(new IndexSearcher(r), query, 10, 5));
            assertTrue(e.getMessage().contains("holds the encodings of several encoders or releases, merged")
                && e.getMessage().contains(first.encoder().fingerprint())
                && e.getMessage().contains(second.encoder().fingerprint()), e.getMessage());
          }
        }
      }
      // as an earlier build wrote its fields: the encoder's description and one fingerprint attribute
      try (FSDirectory directory = FSDirectory.open(dir.resolve("earlier-build"))) {
        FieldType earlier = new FieldType(KnnFloatVectorField.createFieldType(first.encoder().dimension(),
            VectorSimilarityFunction.MAXIMUM_INNER_PRODUCT));
        earlier.putAttribute(LateInteractionRetriever.ENCODER_ATTRIBUTE, first.encoder().toString());
        earlier.putAttribute(LateInteractionRetriever.EARLIER_FINGERPRINT_ATTRIBUTE, "0123456789abcdef");
        earlier.freeze();
        try (IndexWriter w = new IndexWriter(directory, new IndexWriterConfig().setCodec(first.codec()))) {
          for (int i = 0; i < 10; i++) {
            float[][] tokens = MaxSimRescorerTest.unitVectors(rnd, 2, false, DIM);
            Document doc = new Document();
            doc.add(new KnnFloatVectorField("fde", first.encoder().encodeDocuments(TokenBatch.ofQuery(tokens))[0],
                earlier));
            doc.add(new LateInteractionField("tokens", tokens));
            w.addDocument(doc);
          }
        }
        index(directory, first, rnd, true);
        try (DirectoryReader r = DirectoryReader.open(directory)) {
          assertEquals(1, r.leaves().size(), "merged");
          IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
              () -> first.search(new IndexSearcher(r), query, 10, 5));
          assertTrue(e.getMessage().contains("several encoders or releases")
              && e.getMessage().contains("0123456789abcdef"), e.getMessage());
        }
      }
    }
  }

  /** Encodings indexed by hand (no record of an encoder) cannot be told apart: they are searched as before. */
  @Test
  void encodingsIndexedByHandAreSearched() throws IOException {
    Random rnd = new Random(12);
    try (FSDirectory directory = FSDirectory.open(dir);
        MaxSim maxSim = MaxSim.builder().backend("cpu").threads(2).build()) {
      LateInteractionRetriever retriever = new LateInteractionRetriever(encoder().build(), "fde", "tokens", maxSim);
      try (IndexWriter w = new IndexWriter(directory, new IndexWriterConfig())) {
        for (int i = 0; i < 10; i++) {
          float[][] tokens = MaxSimRescorerTest.unitVectors(rnd, 2, false, DIM);
          Document doc = new Document();
          if (i % 2 == 0) {
            retriever.documentFields(tokens).forEach(doc::add); // both kinds in one segment
          } else {
            doc.add(new KnnFloatVectorField("fde", encoder().seed(3).build().encodeDocuments(
                dev.maxsim4j.TokenBatch.ofQuery(tokens))[0], VectorSimilarityFunction.MAXIMUM_INNER_PRODUCT));
            doc.add(new LateInteractionField("tokens", tokens));
          }
          w.addDocument(doc);
        }
      }
      try (DirectoryReader r = DirectoryReader.open(directory)) {
        float[][] query = MaxSimRescorerTest.unitVectors(rnd, 2, false, DIM);
        assertEquals(3, retriever.search(new IndexSearcher(r), query, 10, 3).scoreDocs.length);
      }
    }
  }
}
