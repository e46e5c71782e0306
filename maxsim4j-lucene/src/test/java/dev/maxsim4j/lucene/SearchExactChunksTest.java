package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.FixedDimensionalEncoder;
import dev.maxsim4j.MaxSim;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.FieldExistsQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TotalHits;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.junit.jupiter.api.Test;

/**
 * searchExact rescores the documents a chunk at a time into a running top k: its hits equal, bit for bit, those of
 * every document collected as one first pass (FieldExistsQuery over maxDoc) and rescored to k, on indexes of several
 * segments with deletions, documents without token vectors, duplicates (equal scores), zero tokens (scores of 0)
 * and hand-indexed NaN tokens (NaN scores), and on an empty index, for chunks that cut the documents anywhere.
 */
class SearchExactChunksTest {
  private static final int D = 3;

  @Test
  void chunkedSearchEqualsOneFirstPassOfEveryDocument() throws IOException {
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(D).simHashBits(2).repetitions(2).build();
    ExecutorService executor = Executors.newFixedThreadPool(2);
    try (MaxSim maxSim = MaxSim.builder().backend("vector").threads(2).build()) {
      LateInteractionRetriever retriever = new LateInteractionRetriever(encoder, "fde", "tokens", maxSim);
      for (int seed = 0; seed < 8; seed++) {
        SplittableRandom rnd = new SplittableRandom(seed);
        try (Directory directory = new ByteBuffersDirectory()) {
          build(directory, retriever, rnd, seed == 7);
          try (DirectoryReader reader = DirectoryReader.open(directory)) {
            // every document deleted, Lucene drops every segment
            assertTrue(seed == 7 ? reader.maxDoc() == 0 : reader.leaves().size() >= 3,
                "seed " + seed + ": several segments");
            int maxDoc = reader.maxDoc();
            for (IndexSearcher searcher : List.of(new IndexSearcher(reader), new IndexSearcher(reader, executor))) {
              for (int q = 0; q < 3; q++) {
                float[][] query = gaussian(rnd, 1 + rnd.nextInt(4));
                for (int k : new int[] {1, 3, Math.max(1, maxDoc), maxDoc + 5}) {
                  TopDocs expected = oneFirstPass(searcher, query, k, maxSim);
                  for (int chunk : new int[] {1, 3, 7, LateInteractionRetriever.EXACT_CHUNK}) {
                    String how = "seed " + seed + ", query " + q + ", k " + k + ", chunk " + chunk;
                    assertSame(expected, retriever.searchExact(searcher, query, k, chunk), how);
                  }
                  assertSame(expected, retriever.searchExact(searcher, query, k), "seed " + seed + ", k " + k);
                }
              }
            }
          }
        }
      }
    } finally {
      executor.shutdown();
    }
  }

  /**
   * searchExact is a search of the searcher's: its timeout stops it as any search, timedOut() then true, and the hits
   * are the best of the documents collected before it (their count the total), ranked as one first pass of those.
   */
  @Test
  void aSearchersTimeoutStopsItWithTheBestOfWhatItCollected() throws IOException {
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(D).simHashBits(2).repetitions(2).build();
    try (MaxSim maxSim = MaxSim.builder().backend("vector").threads(2).build();
        Directory directory = new ByteBuffersDirectory()) {
      LateInteractionRetriever retriever = new LateInteractionRetriever(encoder, "fde", "tokens", maxSim);
      SplittableRandom rnd = new SplittableRandom(11);
      build(directory, retriever, rnd, false);
      try (DirectoryReader reader = DirectoryReader.open(directory)) {
        IndexSearcher searcher = new IndexSearcher(reader);
        // every live document with token vectors, in doc order (a constant score ranks them so)
        ScoreDoc[] all = searcher.search(new FieldExistsQuery("tokens"), reader.maxDoc()).scoreDocs;
        float[][] query = gaussian(rnd, 3);
        for (int asksBeforeExit : new int[] {0, 1, 2, 4}) {
          int[] asked = {0};
          searcher.setTimeout(() -> asked[0]++ >= asksBeforeExit);
          TopDocs got = retriever.searchExact(searcher, query, 4, 3);
          assertTrue(searcher.timedOut(), asksBeforeExit + " asks: timed out");
          int collected = Math.toIntExact(got.totalHits.value());
          assertTrue(collected < all.length, asksBeforeExit + " asks: " + collected + " of " + all.length);
          TopDocs firstCollected = new TopDocs(new TotalHits(collected, TotalHits.Relation.EQUAL_TO),
              Arrays.copyOf(all, collected));
          TopDocs best = MaxSimRescorer.create("tokens", query, VectorSimilarityFunction.DOT_PRODUCT,
              MaxSimRescorer.Scale.RAW, maxSim).rescore(searcher, firstCollected, 4);
          assertSame(new TopDocs(got.totalHits, best.scoreDocs), got, asksBeforeExit + " asks");
        }
        // Lucene leaves a searcher's timedOut() set once a search timed out: a fresh one
        IndexSearcher patient = new IndexSearcher(reader);
        patient.setTimeout(() -> false);
        assertSame(oneFirstPass(patient, query, 4, maxSim), retriever.searchExact(patient, query, 4, 3),
            "a timeout that never says exit");
        assertFalse(patient.timedOut(), "not timed out");
      }
    }
  }

  /** searchExact as it was: every document with token vectors as one first pass, rescored to k. */
  private static TopDocs oneFirstPass(IndexSearcher searcher, float[][] query, int k, MaxSim maxSim)
      throws IOException {
    TopDocs all = searcher.search(new FieldExistsQuery("tokens"), Math.max(1, searcher.getIndexReader().maxDoc()));
    return MaxSimRescorer.create("tokens", query, VectorSimilarityFunction.DOT_PRODUCT, MaxSimRescorer.Scale.RAW,
        maxSim).rescore(searcher, all, k);
  }

  private static void assertSame(TopDocs expected, TopDocs actual, String how) {
    assertEquals(expected.totalHits, actual.totalHits, how);
    assertEquals(expected.scoreDocs.length, actual.scoreDocs.length, how);
    for (int i = 0; i < expected.scoreDocs.length; i++) {
      assertEquals(expected.scoreDocs[i].doc, actual.scoreDocs[i].doc, how + ", hit " + i);
      assertEquals(Float.floatToRawIntBits(expected.scoreDocs[i].score),
          Float.floatToRawIntBits(actual.scoreDocs[i].score), how + ", hit " + i);
      assertEquals(expected.scoreDocs[i].shardIndex, actual.scoreDocs[i].shardIndex, how + ", hit " + i);
    }
  }

  /**
   * Segments of a few random documents (one segment without token vectors), some deleted; where {@code deleteAll},
   * every document.
   */
  private static void build(Directory directory, LateInteractionRetriever retriever, SplittableRandom rnd,
      boolean deleteAll) throws IOException {
    IndexWriterConfig config = new IndexWriterConfig().setCodec(retriever.codec())
        .setMergePolicy(NoMergePolicy.INSTANCE);
    try (IndexWriter writer = new IndexWriter(directory, config)) {
      int docs = 20 + rnd.nextInt(50);
      List<float[][]> written = new ArrayList<>();
      for (int j = 0; j < docs; j++) {
        Document doc = new Document();
        doc.add(new StringField("id", Integer.toString(j), Field.Store.NO));
        double kind = rnd.nextDouble();
        if (j < 3 || kind < 0.15) {
          // no token vectors (the first three alone in a segment)
        } else if (kind < 0.3 && !written.isEmpty()) {
          retriever.documentFields(written.get(rnd.nextInt(written.size()))).forEach(doc::add); // equal scores
        } else if (kind < 0.35) {
          doc.add(new LateInteractionField("tokens", new float[][] {new float[D]})); // a score of 0
        } else if (kind < 0.38) {
          doc.add(new LateInteractionField("tokens", new float[][] {{Float.NaN, 1, 0}})); // NaN, above all
        } else {
          float[][] tokens = gaussian(rnd, 1 + rnd.nextInt(5));
          written.add(tokens);
          retriever.documentFields(tokens).forEach(doc::add);
        }
        writer.addDocument(doc);
        if (j == 2 || j % 5 == 4 || rnd.nextInt(8) == 0) {
          writer.commit();
        }
      }
      for (int j = 0; j < docs; j++) {
        if (deleteAll || rnd.nextInt(6) == 0) {
          writer.deleteDocuments(new Term("id", Integer.toString(j)));
        }
      }
    }
  }

  private static float[][] gaussian(SplittableRandom rnd, int tokens) {
    float[][] t = new float[tokens][D];
    for (float[] v : t) {
      for (int i = 0; i < D; i++) {
        v[i] = (float) rnd.nextGaussian();
      }
    }
    return t;
  }
}
