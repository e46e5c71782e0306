package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.FixedDimensionalEncoder;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * MUVERA candidates + exact rerank on an on-disk index of several segments, with encodings wider than
 * Lucene's default limit: exact when every document is a candidate, close to exact with a few.
 */
class LateInteractionRetrieverTest {
  private static final int D = 32;
  private static final int DOCS = 400;

  @TempDir
  Path dir;

  @Test
  void candidatesAndRerankFindTheExactTopDocuments() throws Exception {
    SplittableRandom rnd = new SplittableRandom(7);
    float[][] centers = new float[64][];
    for (int c = 0; c < centers.length; c++) {
      centers[c] = unit(gaussian(rnd, D));
    }
    float[][][] docs = new float[DOCS][][];
    for (int j = 0; j < DOCS; j++) {
      docs[j] = new float[3 + rnd.nextInt(20)][];
      for (int t = 0; t < docs[j].length; t++) {
        docs[j][t] = noisy(centers[rnd.nextInt(centers.length)], rnd);
      }
    }
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(D).simHashBits(4).repetitions(16)
        .projectionDim(8).build();
    assertEquals(2048, encoder.dimension(), "wider than Lucene's default 1024");
    try (MaxSim maxSim = MaxSim.builder().backend("vector").threads(2).build()) {
      LateInteractionRetriever retriever = new LateInteractionRetriever(encoder, "fde", "tokens", maxSim);
      Path path = Files.createDirectories(dir.resolve("index"));
      try (FSDirectory directory = FSDirectory.open(path)) {
        IndexWriterConfig config = new IndexWriterConfig().setCodec(retriever.codec())
            .setMergePolicy(NoMergePolicy.INSTANCE);
        try (IndexWriter writer = new IndexWriter(directory, config)) {
          for (int j = 0; j < DOCS; j++) {
            Document doc = new Document();
            retriever.documentFields(docs[j]).forEach(doc::add);
            doc.add(new StringField("id", Integer.toString(j), Field.Store.YES));
            doc.add(new StringField("parity", j % 2 == 0 ? "even" : "odd", Field.Store.NO));
            writer.addDocument(doc);
            if (j % 150 == 149) {
              writer.commit(); // several segments
            }
          }
        }
        try (DirectoryReader reader = DirectoryReader.open(directory)) { // the default codec reads it
          assertTrue(reader.leaves().size() >= 3, "several segments");
          IndexSearcher searcher = new IndexSearcher(reader);
          double recall = 0;
          int queries = 20;
          for (int i = 0; i < queries; i++) {
            float[][] source = docs[rnd.nextInt(DOCS)];
            float[][] query = new float[6][];
            for (int t = 0; t < query.length; t++) {
              query[t] = noisy(source[rnd.nextInt(source.length)], rnd);
            }
            TopDocs exact = retriever.searchExact(searcher, query, 10);
            TopDocs all = retriever.search(searcher, query, DOCS, 10);
            assertArrayEquals(ids(exact), ids(all), "every document a candidate: exact");
            if (i == 0) { // more candidates than documents are the documents, up to the largest int
              assertArrayEquals(ids(exact), ids(retriever.search(searcher, query, Integer.MAX_VALUE, 10)));
              float[][] huge = {query[0].clone()};
              java.util.Arrays.fill(huge[0], 3e38f);
              IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                  () -> retriever.search(searcher, huge, 10, 5));
              assertTrue(e.getMessage().startsWith("queryTokens' encoding has norm"), e.getMessage());
            }
            float[] direct = maxSim.scores(TokenBatch.ofQuery(query), TokenBatch.of(new float[][][] {
                docs[Integer.parseInt(searcher.storedFields().document(exact.scoreDocs[0].doc).get("id"))]}))[0];
            assertEquals(direct[0], exact.scoreDocs[0].score, 1e-5f * Math.abs(direct[0]), "raw MaxSim scores");
            recall += overlap(exact, retriever.search(searcher, query, 60, 10)) / 10.0;
            TopDocs even = retriever.search(searcher, query, new TermQuery(new Term("parity", "even")), 20, 10);
            assertTrue(even.scoreDocs.length == 10, "lexical hits join the candidates");
          }
          assertTrue(recall / queries >= 0.8, "recall@10 of 60 candidates out of 400: " + recall / queries);
        }
      }
      assertThrows(IllegalArgumentException.class, () -> new LateInteractionRetriever(encoder, "x", "x", maxSim));
      assertThrows(IllegalArgumentException.class, () -> retriever.documentFields(docs[0], new float[3]));
      // with an encoding computed beforehand, tokens of another shape are refused before they reach the index
      float[] encoding = encoder.encodeDocuments(TokenBatch.ofQuery(docs[0]))[0];
      int d = encoder.tokenDimension();
      for (float[][] bad : new float[][][] {null, new float[0][], {new float[d], null}, {new float[d + 1]},
          {new float[d], new float[d - 1]}}) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> retriever.documentFields(bad, encoding));
        assertTrue(e.getMessage().startsWith("tokens"), e.getMessage());
      }
      // a NaN or infinite value would score NaN, first in every ranking: refused for documents and queries alike
      for (float bad : new float[] {Float.NaN, Float.POSITIVE_INFINITY}) {
        float[][] tokens = {docs[0][0].clone()};
        tokens[0][1] = bad;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> retriever.documentFields(tokens, encoding));
        assertEquals("tokens[0][1] = " + bad + "; expected finite token values", e.getMessage());
        try (Directory empty = new ByteBuffersDirectory();
            IndexWriter w = new IndexWriter(empty, new IndexWriterConfig().setCodec(retriever.codec()))) {
          w.commit();
          try (DirectoryReader r = DirectoryReader.open(empty)) {
            IndexSearcher s = new IndexSearcher(r);
            e = assertThrows(IllegalArgumentException.class, () -> retriever.searchExact(s, tokens, 3));
            assertTrue(e.getMessage().startsWith("queryTokens[0][1] = " + bad), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> retriever.search(s, tokens, 10, 3));
            assertTrue(e.getMessage().startsWith("queryTokens[0][1] = " + bad), e.getMessage());
          }
        }
      }
    }
  }

  private static int[] ids(TopDocs top) {
    int[] ids = new int[top.scoreDocs.length];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = top.scoreDocs[i].doc;
    }
    return ids;
  }

  private static int overlap(TopDocs a, TopDocs b) {
    int n = 0;
    for (ScoreDoc x : a.scoreDocs) {
      for (ScoreDoc y : b.scoreDocs) {
        if (x.doc == y.doc) {
          n++;
        }
      }
    }
    return n;
  }

  private static float[] gaussian(SplittableRandom rnd, int d) {
    float[] v = new float[d];
    for (int k = 0; k < d; k++) {
      v[k] = (float) rnd.nextGaussian();
    }
    return v;
  }

  private static float[] noisy(float[] base, SplittableRandom rnd) {
    float[] v = base.clone();
    for (int k = 0; k < v.length; k++) {
      v[k] += (float) (0.3 * rnd.nextGaussian() / Math.sqrt(v.length));
    }
    return unit(v);
  }

  private static float[] unit(float[] v) {
    double sq = 0;
    for (float x : v) {
      sq += x * x;
    }
    for (int k = 0; k < v.length; k++) {
      v[k] /= (float) Math.sqrt(sq);
    }
    return v;
  }
}
