package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Arrays;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.junit.jupiter.api.Test;

/**
 * Many documents of one encoding (the passages of text a tokenizer reads as the same tokens) cut Lucene's HNSW graph
 * apart, and a graph search from the query then returned fewer than k of them and none of the others: candidates
 * that left out the nearest documents. CompleteKnnFloatVectorQuery, which the retriever searches with, searches such
 * a segment exactly.
 */
class HostileEqualEncodingsTest {
  private static final int DIM = 32;
  private static final int EQUAL = 2000;
  private static final int OTHERS = 200;

  /** Found by hostile tests, the timeout among them. */
  @Test
  void theNearestEncodingsAreFoundBesideManyEqualOnes() throws IOException {
    Random random = new Random(7);
    float[] blob = unit(random);
    float[][] others = units(random, OTHERS);
    float[] query = unit(random);
    try (Directory dir = new ByteBuffersDirectory()) {
      index(dir, blob, others);
      try (DirectoryReader r = DirectoryReader.open(dir)) {
        IndexSearcher s = new IndexSearcher(r);
        // k = 200: the graph search, trapped among the equal encodings, returns fewer than k
        int k = 200;
        ScoreDoc[] graph = s.search(new KnnFloatVectorQuery("fde", query, k), k).scoreDocs;
        assertTrue(graph.length < k, "the graph alone returned " + graph.length + " of " + k);
        Set<Integer> complete = docs(s.search(new CompleteKnnFloatVectorQuery("fde", query, k), k).scoreDocs);
        assertEquals(nearest(query, blob, others, k), complete);
        // with a filter Lucene searches exactly where the graph falls short: the same answer
        Set<Integer> filtered = docs(s.search(new CompleteKnnFloatVectorQuery("fde", query, k,
            new TermQuery(new Term("kind", "other"))), k).scoreDocs);
        assertEquals(nearest(query, null, others, k), filtered);
        // a searcher's timeout that has passed when the graph search stops short stops the exact search too, as it
        // stops Lucene's own exact fallback (it ran regardless: a scan of the whole segment after the deadline)
        s.setTimeout(() -> true);
        Query graphOnly = s.rewrite(new KnnFloatVectorQuery("fde", query, k)); // the searches run as they rewrite
        Query completeOnly = s.rewrite(new CompleteKnnFloatVectorQuery("fde", query, k));
        s.setTimeout(null);
        assertEquals(s.count(graphOnly), s.count(completeOnly));
        assertTrue(s.count(completeOnly) < k, s.count(completeOnly) + " hits");
      }
    }
  }

  /**
   * A filter over an index of many segments: Lucene accepts a filtered graph search that returns the segment's share
   * of k (here about 34 of 40 from 2,100 vectors, 2,000 of them equal), which the equal encodings trapped it in; a
   * filter every document matches must find what no filter finds. The retriever filters so where an encoding was
   * indexed without its tokens. Found by a hostile test.
   */
  @Test
  void aFilterOverManySegmentsFindsTheNearestBesideManyEqualOnes() throws IOException {
    Random random = new Random(7);
    float[] blob = unit(random);
    float[] query = unit(random);
    for (int i = 0; i < DIM; i++) {
      query[i] = -blob[i] + 0.3f * query[i]; // the equal encodings are the farthest
    }
    int segments = 20;
    int others = 100;
    float[][] all = new float[segments * (EQUAL + others)][];
    try (Directory dir = new ByteBuffersDirectory()) {
      try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig().setMergePolicy(NoMergePolicy.INSTANCE))) {
        for (int doc = 0; doc < all.length; doc++) {
          all[doc] = doc % (EQUAL + others) < EQUAL ? blob : unit(random);
          Document d = new Document();
          d.add(new KnnFloatVectorField("fde", all[doc], VectorSimilarityFunction.MAXIMUM_INNER_PRODUCT));
          d.add(new StringField("kind", "any", Field.Store.NO));
          w.addDocument(d);
          if ((doc + 1) % (EQUAL + others) == 0) {
            w.flush();
          }
        }
      }
      Integer[] order = new Integer[all.length];
      for (int i = 0; i < order.length; i++) {
        order[i] = i;
      }
      Arrays.sort(order, (a, b) -> Double.compare(dot(query, all[b]), dot(query, all[a])));
      int k = 40;
      Set<Integer> nearest = new TreeSet<>(Arrays.asList(order).subList(0, k));
      try (DirectoryReader r = DirectoryReader.open(dir)) {
        assertEquals(segments, r.leaves().size());
        IndexSearcher s = new IndexSearcher(r);
        assertEquals(nearest, docs(s.search(new CompleteKnnFloatVectorQuery("fde", query, k), k).scoreDocs));
        assertEquals(nearest, docs(s.search(new CompleteKnnFloatVectorQuery("fde", query, k,
            new TermQuery(new Term("kind", "any"))), k).scoreDocs), "a filter every document matches");
      }
    }
  }

  /** The equal encodings first, as one long file's passages are, then the others; two segments. */
  private static void index(Directory dir, float[] blob, float[][] others) throws IOException {
    try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig())) {
      for (int i = 0; i < EQUAL + OTHERS; i++) { // the equal encodings first, as one long file's passages are
        boolean equal = i < EQUAL;
        Document doc = new Document();
        doc.add(new KnnFloatVectorField("fde", equal ? blob : others[i - EQUAL],
            VectorSimilarityFunction.MAXIMUM_INNER_PRODUCT));
        doc.add(new StringField("kind", equal ? "equal" : "other", Field.Store.NO));
        w.addDocument(doc);
        if (i == EQUAL + OTHERS / 2) {
          w.commit(); // two segments, each searched for all k
        }
      }
    }
  }

  /** The k documents whose encodings have the largest inner products with the query, ties to the lower doc. */
  private static Set<Integer> nearest(float[] query, float[] blob, float[][] others, int k) {
    int n = (blob == null ? 0 : EQUAL) + OTHERS;
    Integer[] order = new Integer[n];
    double[] score = new double[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
      int doc = blob == null ? EQUAL + i : i;
      score[i] = dot(query, doc < EQUAL ? blob : others[doc - EQUAL]);
    }
    Arrays.sort(order, (a, b) -> score[a] != score[b] ? Double.compare(score[b], score[a]) : Integer.compare(a, b));
    Set<Integer> docs = new TreeSet<>();
    for (int i = 0; i < k; i++) {
      docs.add(blob == null ? EQUAL + order[i] : order[i]);
    }
    return docs;
  }

  private static Set<Integer> docs(ScoreDoc[] hits) {
    Set<Integer> docs = new TreeSet<>();
    for (ScoreDoc h : hits) {
      docs.add(h.doc);
    }
    return docs;
  }

  private static float[][] units(Random random, int n) {
    float[][] v = new float[n][];
    for (int i = 0; i < n; i++) {
      v[i] = unit(random);
    }
    return v;
  }

  private static float[] unit(Random random) {
    float[] v = new float[DIM];
    double norm = 0;
    for (int i = 0; i < DIM; i++) {
      v[i] = (float) random.nextGaussian();
      norm += v[i] * v[i];
    }
    for (int i = 0; i < DIM; i++) {
      v[i] /= (float) Math.sqrt(norm);
    }
    return v;
  }

  private static double dot(float[] a, float[] b) {
    double s = 0;
    for (int i = 0; i < a.length; i++) {
      s += a[i] * b[i];
    }
    return s;
  }
}
