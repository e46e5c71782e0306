package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import java.io.IOException;
import java.util.Arrays;
import java.util.Random;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.junit.jupiter.api.Test;

/**
 * A caller that reuses its query array for the next query (refilling it, or dropping its rows) after creating a
 * rescorer: the rescorer and those derived from it (withFallbackToFirstPassScore, withQueryType) still score the
 * query it was created with, not whatever the array holds when they are derived.
 */
class HostileQueryReuseTest {
  private static final int DIM = 8;

  @Test
  void derivedRescorersScoreTheQueryTheRescorerWasCreatedWith() throws IOException {
    Random rnd = new Random(11);
    try (MaxSim maxSim = MaxSim.builder().backend("scalar").build(); Directory dir = new ByteBuffersDirectory()) {
      try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig())) {
        for (int i = 0; i < 6; i++) {
          Document doc = new Document();
          doc.add(new LateInteractionField("f", MaxSimRescorerTest.unitVectors(rnd, 1 + i, false, DIM)));
          doc.add(new QuantizedLateInteractionField("q", MaxSimRescorerTest.unitVectors(rnd, 1 + i, false, DIM),
              DType.INT8));
          w.addDocument(doc);
        }
      }
      try (DirectoryReader r = DirectoryReader.open(dir)) {
        IndexSearcher s = new IndexSearcher(r);
        TopDocs all = s.search(MatchAllDocsQuery.INSTANCE, 6);
        for (boolean quantized : new boolean[] {false, true}) {
          float[][] query = MaxSimRescorerTest.unitVectors(rnd, 3, false, DIM);
          MaxSimRescorer created = quantized ? MaxSimRescorer.createQuantized("q", query, MaxSimRescorer.Scale.RAW,
              maxSim) : MaxSimRescorer.create("f", query, VectorSimilarityFunction.DOT_PRODUCT,
                  MaxSimRescorer.Scale.RAW, maxSim);
          String expected = ranked(created.rescore(s, all, 6));
          float[][] next = MaxSimRescorerTest.unitVectors(rnd, 3, false, DIM);
          for (int t = 0; t < query.length; t++) {
            System.arraycopy(next[t], 0, query[t], 0, DIM); // the caller's buffer now holds its next query
          }
          assertEquals(expected, ranked(created.withFallbackToFirstPassScore().rescore(s, all, 6)),
              "withFallbackToFirstPassScore after the query array was refilled");
          assertEquals(expected, ranked(created.withQueryType(DType.FLOAT32).rescore(s, all, 6)),
              "withQueryType(FLOAT32) after the query array was refilled");
          query[1] = null; // and then dropped a row
          assertEquals(expected, ranked(created.withFallbackToFirstPassScore().rescore(s, all, 6)),
              "withFallbackToFirstPassScore after a row of the query array was set to null");
        }
      }
    }
  }

  private static String ranked(TopDocs top) {
    StringBuilder out = new StringBuilder();
    for (ScoreDoc h : top.scoreDocs) {
      out.append(h.doc).append('=').append(h.score).append(' ');
    }
    return out.toString();
  }
}
