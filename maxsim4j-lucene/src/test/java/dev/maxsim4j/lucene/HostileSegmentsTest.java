package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.FixedDimensionalEncoder;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.TopK;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The retriever and the rescorers on indexes of several segments, after deletions and merges, with a concurrent
 * searcher, reopened from disk: every ranking equals brute-force MaxSim over the live documents' vectors.
 */
class HostileSegmentsTest {
  private static final int D = 16;
  private static final int DOCS = 120;
  private static MaxSim maxSim;
  private static ExecutorService executor;
  private static FixedDimensionalEncoder encoder;
  private static float[][][] docs;
  private static float[][][] queries;

  @TempDir
  Path dir;

  @BeforeAll
  static void setUp() {
    maxSim = MaxSim.builder().backend("vector").threads(2).build();
    executor = Executors.newFixedThreadPool(3);
    encoder = FixedDimensionalEncoder.builder(D).simHashBits(3).repetitions(4).build();
    SplittableRandom rnd = new SplittableRandom(11);
    docs = new float[DOCS][][];
    for (int j = 0; j < DOCS; j++) {
      // every fifth document repeats the one before it: equal scores, which must rank by doc id
      docs[j] = j % 5 == 4 ? docs[j - 1] : random(rnd, 1 + rnd.nextInt(9));
    }
    queries = new float[6][][];
    for (int i = 0; i < queries.length; i++) {
      queries[i] = random(rnd, 1 + rnd.nextInt(5));
    }
  }

  @AfterAll
  static void tearDown() {
    maxSim.close();
    executor.shutdown();
  }

  private static float[][] random(SplittableRandom rnd, int tokens) {
    float[][] t = new float[tokens][D];
    for (float[] v : t) {
      double norm = 0;
      for (int k = 0; k < D; k++) {
        v[k] = (float) rnd.nextGaussian();
        norm += v[k] * v[k];
      }
      for (int k = 0; k < D; k++) {
        v[k] /= (float) Math.sqrt(norm);
      }
    }
    return t;
  }

  /** Writes every document in small commits, deletes every seventh and merges when asked; ids are "j". */
  private static void build(Directory directory, LateInteractionRetriever retriever, boolean merge)
      throws IOException {
    IndexWriterConfig config = new IndexWriterConfig().setCodec(retriever.codec());
    if (!merge) {
      config.setMergePolicy(NoMergePolicy.INSTANCE);
    }
    try (IndexWriter writer = new IndexWriter(directory, config)) {
      for (int j = 0; j < DOCS; j++) {
        Document doc = new Document();
        retriever.documentFields(docs[j]).forEach(doc::add);
        doc.add(new QuantizedLateInteractionField("int8", docs[j], DType.INT8));
        doc.add(new StringField("id", Integer.toString(j), Field.Store.YES));
        writer.addDocument(doc);
        if (j % 17 == 16) {
          writer.commit();
        }
      }
      for (int j = 0; j < DOCS; j += 7) {
        writer.deleteDocuments(new Term("id", Integer.toString(j)));
      }
      if (merge) {
        writer.forceMerge(1);
      }
    }
  }

  /** The live documents' ids, best first by brute-force MaxSim on {@code type}'s tokens, and their scores. */
  private static List<float[]> bruteForce(float[][] query, DType type) {
    List<Integer> live = new ArrayList<>();
    for (int j = 0; j < DOCS; j++) {
      if (j % 7 != 0) {
        live.add(j);
      }
    }
    float[][][] rows = live.stream().map(j -> docs[j]).toArray(float[][][]::new);
    TokenBatch batch = TokenBatch.of(rows);
    TopK top = maxSim.topK(TokenBatch.ofQuery(query), type == DType.FLOAT32 ? batch : batch.quantize(type),
        live.size());
    List<float[]> ranked = new ArrayList<>();
    for (int i = 0; i < top.indices()[0].length; i++) {
      ranked.add(new float[] {live.get(top.indices()[0][i]), top.scores()[0][i]});
    }
    return ranked;
  }

  private static void assertRanking(List<float[]> expected, IndexSearcher searcher, TopDocs got, int k, String what)
      throws IOException {
    assertEquals(Math.min(k, expected.size()), got.scoreDocs.length, what + ": hits");
    int[] lastDoc = {-1};
    for (int i = 0; i < got.scoreDocs.length; i++) {
      ScoreDoc h = got.scoreDocs[i];
      int id = Integer.parseInt(searcher.storedFields().document(h.doc).get("id"));
      float want = expected.get(i)[1];
      assertEquals(want, h.score, 1e-5f * Math.max(1, Math.abs(want)), what + ": score at rank " + i);
      // equal scores are the repeated documents: the copy indexed first ranks first
      boolean tie = i > 0 && got.scoreDocs[i - 1].score == h.score;
      if (!tie) {
        assertEquals((int) expected.get(i)[0], id, what + ": document at rank " + i);
      } else {
        assertTrue(h.doc > lastDoc[0], what + ": ties by doc id at rank " + i);
      }
      lastDoc[0] = h.doc;
    }
  }

  private void checkAll(Directory directory, LateInteractionRetriever retriever, String what) throws IOException {
    try (DirectoryReader reader = DirectoryReader.open(directory)) {
      for (IndexSearcher searcher : List.of(new IndexSearcher(reader), new IndexSearcher(reader, executor))) {
        String how = what + (searcher.getTaskExecutor() == null ? "" : ", concurrent");
        for (float[][] q : queries) {
          List<float[]> exact = bruteForce(q, DType.FLOAT32);
          assertRanking(exact, searcher, retriever.searchExact(searcher, q, 10), 10, how + ", exact");
          assertRanking(exact, searcher, retriever.search(searcher, q, DOCS, 10), 10, how + ", all candidates");
          assertRanking(exact, searcher, retriever.search(searcher, q, 5000, 500), 500, how + ", k past the index");
          TopDocs all = searcher.search(new MatchAllDocsQuery(), DOCS);
          assertRanking(bruteForce(q, DType.INT8), searcher, MaxSimRescorer.createQuantized("int8", q,
              MaxSimRescorer.Scale.RAW, maxSim).rescore(searcher, all, 10), 10, how + ", int8 rescorer");
          TopDocs top = retriever.search(searcher, q, DOCS, 3);
          MaxSimRescorer rescorer = MaxSimRescorer.create("tokens", q,
              org.apache.lucene.index.VectorSimilarityFunction.DOT_PRODUCT, MaxSimRescorer.Scale.RAW, maxSim);
          for (ScoreDoc h : top.scoreDocs) {
            float explained = rescorer.explain(searcher, searcher.explain(new MatchAllDocsQuery(), h.doc), h.doc)
                .getValue().floatValue();
            assertEquals(h.score, explained, 1e-5f * Math.max(1, Math.abs(h.score)), how + ": explain");
          }
        }
      }
    }
  }

  @Test
  void segmentsWithDeletionsRankAsBruteForce() throws IOException {
    LateInteractionRetriever retriever = new LateInteractionRetriever(encoder, "fde", "tokens", maxSim);
    try (Directory directory = new ByteBuffersDirectory()) {
      build(directory, retriever, false);
      try (DirectoryReader reader = DirectoryReader.open(directory)) {
        assertTrue(reader.leaves().size() > 3 && reader.hasDeletions(), "segments with deletions");
      }
      checkAll(directory, retriever, "segments");
    }
  }

  @Test
  void aMergedIndexReopenedFromDiskRanksAsBruteForce() throws IOException {
    LateInteractionRetriever retriever = new LateInteractionRetriever(encoder, "fde", "tokens", maxSim);
    try (Directory directory = FSDirectory.open(dir)) {
      build(directory, retriever, true);
    }
    try (Directory directory = FSDirectory.open(dir)) {
      try (DirectoryReader reader = DirectoryReader.open(directory)) {
        assertEquals(1, reader.leaves().size(), "merged");
      }
      checkAll(directory, retriever, "merged, reopened");
    }
  }

  @Test
  void anEmptyIndexHasNoHits() throws IOException {
    LateInteractionRetriever retriever = new LateInteractionRetriever(encoder, "fde", "tokens", maxSim);
    try (Directory directory = new ByteBuffersDirectory()) {
      new IndexWriter(directory, new IndexWriterConfig()).close();
      try (DirectoryReader reader = DirectoryReader.open(directory)) {
        IndexSearcher searcher = new IndexSearcher(reader, executor);
        assertEquals(0, retriever.search(searcher, queries[0], 10, 10).scoreDocs.length);
        assertEquals(0, retriever.searchExact(searcher, queries[0], 10).scoreDocs.length);
        TopDocs none = searcher.search(new MatchAllDocsQuery(), 1);
        assertArrayEquals(new ScoreDoc[0], MaxSimRescorer.create("tokens", queries[0],
            org.apache.lucene.index.VectorSimilarityFunction.DOT_PRODUCT).rescore(searcher, none, 5).scoreDocs);
      }
    }
  }

  @Test
  void aHitGivenTwiceScoresTwiceInASparseField() throws IOException {
    try (Directory directory = new ByteBuffersDirectory()) {
      try (IndexWriter writer = new IndexWriter(directory, new IndexWriterConfig())) {
        for (int j = 0; j < 10; j++) {
          Document doc = new Document();
          if (j % 3 == 0) { // sparse: most documents lack the field
            doc.add(new QuantizedLateInteractionField("int8", docs[j], DType.INT8));
            doc.add(new org.apache.lucene.document.LateInteractionField("tokens", docs[j]));
          }
          writer.addDocument(doc);
        }
      }
      try (DirectoryReader reader = DirectoryReader.open(directory)) {
        IndexSearcher searcher = new IndexSearcher(reader);
        ScoreDoc[] twice = {new ScoreDoc(3, 1), new ScoreDoc(3, 1), new ScoreDoc(6, 1), new ScoreDoc(6, 1)};
        TopDocs first = new TopDocs(new org.apache.lucene.search.TotalHits(4,
            org.apache.lucene.search.TotalHits.Relation.EQUAL_TO), twice);
        for (MaxSimRescorer r : List.of(MaxSimRescorer.createQuantized("int8", queries[0], MaxSimRescorer.Scale.RAW,
            maxSim), MaxSimRescorer.create("tokens", queries[0],
                org.apache.lucene.index.VectorSimilarityFunction.DOT_PRODUCT, MaxSimRescorer.Scale.RAW, maxSim))) {
          TopDocs got = r.rescore(searcher, first, 4);
          float[] scores = new float[4];
          for (int i = 0; i < 4; i++) {
            scores[i] = got.scoreDocs[i].score;
          }
          assertEquals(scores[0], scores[1], r + ": one document given twice");
          assertEquals(scores[2], scores[3], r + ": one document given twice");
          assertTrue(Arrays.stream(got.scoreDocs).allMatch(h -> h.score != 0), r + ": every copy scored");
        }
      }
    }
  }
}
