package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.MaxSim;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.apache.lucene.document.BinaryDocValuesField;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.LateInteractionFloatValuesSource;
import org.apache.lucene.search.LateInteractionRescorer;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.Rescorer;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TotalHits;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.BytesRef;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * MaxSimRescorer against Lucene's own LateInteractionRescorer on a real on-disk index (FSDirectory, several
 * segments) of 3000 multi-vector documents with 1 to 80 tokens, one in eleven without the field. Scores
 * agree within float rounding (relative 1e-5: Lucene sums per-token scaled floats, we scale the fp32 sum);
 * the top-N lists agree document for document except where two scores are within that tolerance.
 */
class MaxSimRescorerTest {
  private static final String FIELD = "tokens";
  private static final int DOCS = 3000;
  private static final int DIM = 48;
  private static final long SEED = new Random().nextLong();

  @TempDir static Path folder;
  private static Directory directory;
  private static DirectoryReader reader;
  private static IndexSearcher searcher;
  private static MaxSim maxSim;

  @BeforeAll
  static void index() throws IOException {
    Random rnd = new Random(SEED);
    directory = FSDirectory.open(folder.resolve("index"));
    // several segments, never merged, so doc ids stay in insertion order
    IndexWriterConfig config = new IndexWriterConfig().setMaxBufferedDocs(700).setMergePolicy(NoMergePolicy.INSTANCE);
    try (IndexWriter writer = new IndexWriter(directory, config)) {
      for (int i = 0; i < DOCS; i++) {
        Document doc = new Document();
        doc.add(new StringField("id", Integer.toString(i), Field.Store.YES));
        if (i % 11 != 5) {
          doc.add(new LateInteractionField(FIELD, unitVectors(rnd, 1 + rnd.nextInt(80), rnd.nextBoolean())));
        }
        writer.addDocument(doc);
      }
    }
    reader = DirectoryReader.open(directory);
    searcher = new IndexSearcher(reader);
    maxSim = MaxSim.builder().backend("cpu").threads(2).build();
    assertTrue(reader.leaves().size() > 1, "the index has several segments");
  }

  @AfterAll
  static void close() throws IOException {
    maxSim.close();
    reader.close();
    directory.close();
  }

  /** Token vectors of unit length (or, when {@code raw}, random lengths: for COSINE). */
  static float[][] unitVectors(Random rnd, int tokens, boolean scaled) {
    return unitVectors(rnd, tokens, scaled, DIM);
  }

  /** As {@link #unitVectors(Random, int, boolean)} of {@code dim} dimensions. */
  static float[][] unitVectors(Random rnd, int tokens, boolean scaled, int dim) {
    float[][] v = new float[tokens][dim];
    for (float[] t : v) {
      double norm = 0;
      for (int k = 0; k < dim; k++) {
        t[k] = (float) rnd.nextGaussian();
        norm += t[k] * t[k];
      }
      float s = (float) ((scaled ? 0.5 + rnd.nextDouble() : 1.0) / Math.sqrt(norm));
      for (int k = 0; k < dim; k++) {
        t[k] *= s;
      }
    }
    return v;
  }

  private static float[][] unitQuery(Random rnd, int tokens) {
    float[][] q = unitVectors(rnd, tokens, false);
    return q;
  }

  @Test
  void dotProductMatchesLuceneOnTheWholeIndex() throws IOException {
    Random rnd = new Random(SEED + 1);
    TopDocs firstPass = searcher.search(MatchAllDocsQuery.INSTANCE, DOCS);
    for (int queryTokens : new int[] {1, 7, 32}) {
      float[][] q = unitQuery(rnd, queryTokens);
      // Lucene's DOT_PRODUCT needs unit vectors: only documents indexed at unit length are compared
      assertSameRanking(LateInteractionRescorer.create(FIELD, q, VectorSimilarityFunction.DOT_PRODUCT),
          MaxSimRescorer.create(FIELD, q, VectorSimilarityFunction.DOT_PRODUCT, MaxSimRescorer.Scale.LUCENE, maxSim),
          unitOnly(firstPass), 100, "DOT_PRODUCT Lq=" + queryTokens);
    }
  }

  /**
   * Rescoring from inside a fork-join pool of several workers gives the scores rescoring from a plain thread gives:
   * a worker that steals another block while its own is being scored gathers into another buffer (a hostile
   * tester saw thousands of wrong scores once the gathering buffer was shared).
   */
  @Test
  void rescoringInsideAForkJoinPoolGivesTheSameScores() throws Exception {
    Random rnd = new Random(SEED + 7);
    TopDocs firstPass = searcher.search(MatchAllDocsQuery.INSTANCE, DOCS);
    try (java.util.concurrent.ForkJoinPool pool = new java.util.concurrent.ForkJoinPool(4)) {
      for (int query = 0; query < 4; query++) {
        MaxSimRescorer rescorer = MaxSimRescorer.create(FIELD, unitQuery(rnd, 5),
            VectorSimilarityFunction.DOT_PRODUCT, MaxSimRescorer.Scale.RAW, maxSim);
        Map<Integer, Float> expected = new HashMap<>();
        for (ScoreDoc d : rescorer.rescore(searcher, firstPass, DOCS).scoreDocs) {
          expected.put(d.doc, d.score);
        }
        java.util.List<java.util.concurrent.Future<TopDocs>> inPool = new java.util.ArrayList<>();
        for (int i = 0; i < 4; i++) {
          inPool.add(pool.submit(() -> rescorer.rescore(searcher, firstPass, DOCS)));
        }
        for (java.util.concurrent.Future<TopDocs> f : inPool) {
          for (ScoreDoc d : f.get().scoreDocs) {
            assertEquals(expected.get(d.doc), d.score, 0f, "query " + query + ", doc " + d.doc);
          }
        }
      }
    }
    // the pool's threads gave their buffers back to one pool for every thread, within its limit
    IdleBuffers idle = MaxSimRescorer.idleBuffers(false);
    assertTrue(idle.size() > 0 && idle.idleBytes() <= MaxSimRescorer.RETAINED_BYTES, idle.size() + " buffers");
  }

  /**
   * A default instance that cannot be created (here: a bad maxsim4j.threads) is refused by MaxSim's own
   * IllegalArgumentException on every try, and made once the property is fixed: not an
   * ExceptionInInitializerError, then NoClassDefFoundError for the life of the JVM.
   */
  @Test
  void aDefaultInstanceThatCannotBeMadeIsNamedAndTriedAgain() throws Exception {
    java.lang.reflect.Field field = DefaultMaxSim.class.getDeclaredField("instance");
    field.setAccessible(true);
    MaxSim kept;
    synchronized (DefaultMaxSim.class) {
      kept = (MaxSim) field.get(null);
      field.set(null, null);
    }
    String property = System.getProperty("maxsim4j.threads");
    float[][] q = unitQuery(new Random(SEED), 3);
    try {
      System.setProperty("maxsim4j.threads", "many");
      for (int attempt = 0; attempt < 2; attempt++) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> MaxSimRescorer.create(FIELD, q, VectorSimilarityFunction.DOT_PRODUCT));
        assertTrue(e.getMessage().contains("maxsim4j.threads = 'many'"), e.getMessage());
      }
      System.setProperty("maxsim4j.threads", "1");
      TopDocs top = MaxSimRescorer.create(FIELD, q, VectorSimilarityFunction.DOT_PRODUCT)
          .rescore(searcher, searcher.search(MatchAllDocsQuery.INSTANCE, 50), 5);
      assertEquals(5, top.scoreDocs.length);
      assertEquals(1, DefaultMaxSim.get().threads());
    } finally {
      if (property == null) {
        System.clearProperty("maxsim4j.threads");
      } else {
        System.setProperty("maxsim4j.threads", property);
      }
      synchronized (DefaultMaxSim.class) {
        MaxSim made = (MaxSim) field.get(null);
        if (made != null) {
          made.close();
        }
        field.set(null, kept);
      }
    }
  }

  /**
   * The GPU's path (the whole candidate set in one fused call, or in several where its tokens pass one array), run
   * on the CPU: the same bits as blocks.
   */
  @Test
  void oneCallForAllCandidatesEqualsBlocks() throws IOException {
    Random rnd = new Random(SEED + 6);
    float[][] q = unitQuery(rnd, 12);
    TopDocs firstPass = randomFirstPass(rnd, 1500);
    MaxSimRescorer blocks = MaxSimRescorer.create(FIELD, q, VectorSimilarityFunction.DOT_PRODUCT,
        MaxSimRescorer.Scale.LUCENE, maxSim);
    assertEquals(64, blocks.blockSize(1500), "cpu: blocks of 64");
    TopDocs expected = blocks.rescore(searcher, firstPass, 1500);
    TopDocs oneCall = blocks.withBlockSize(1500).rescore(searcher, firstPass, 1500);
    // a block past what one gathering array takes (the GPU's, over 2^31 floats) is scored in several calls
    TopDocs cut = blocks.withBlockSize(1500).withGatherLimit(20_000).rescore(searcher, firstPass, 1500);
    for (int i = 0; i < expected.scoreDocs.length; i++) {
      assertEquals(expected.scoreDocs[i].doc, oneCall.scoreDocs[i].doc, "rank " + i);
      assertEquals(expected.scoreDocs[i].score, oneCall.scoreDocs[i].score, 0f, "rank " + i);
      assertEquals(expected.scoreDocs[i].doc, cut.scoreDocs[i].doc, "cut, rank " + i);
      assertEquals(expected.scoreDocs[i].score, cut.scoreDocs[i].score, 0f, "cut, rank " + i);
    }
  }

  @Test
  void cosineMatchesLuceneAndMissingFieldsFallBack() throws IOException {
    Random rnd = new Random(SEED + 2);
    float[][] q = unitVectors(rnd, 16, true);
    TopDocs firstPass = randomFirstPass(rnd, 1000);
    assertSameRanking(LateInteractionRescorer.create(FIELD, q, VectorSimilarityFunction.COSINE),
        MaxSimRescorer.create(FIELD, q, VectorSimilarityFunction.COSINE, MaxSimRescorer.Scale.LUCENE, maxSim),
        firstPass, 50, "COSINE");
    assertSameRanking(LateInteractionRescorer.withFallbackToFirstPassScore(FIELD, q, VectorSimilarityFunction.COSINE),
        MaxSimRescorer.create(FIELD, q, VectorSimilarityFunction.COSINE, MaxSimRescorer.Scale.LUCENE, maxSim)
            .withFallbackToFirstPassScore(),
        firstPass, 1000, "COSINE, fallback to first pass");
  }

  @Test
  void rawScaleIsTheMaxSimSum() throws IOException {
    Random rnd = new Random(SEED + 3);
    float[][] q = unitQuery(rnd, 5);
    TopDocs firstPass = randomFirstPass(rnd, 200);
    TopDocs lucene = MaxSimRescorer.create(FIELD, q, VectorSimilarityFunction.DOT_PRODUCT,
        MaxSimRescorer.Scale.LUCENE, maxSim).rescore(searcher, firstPass, 200);
    TopDocs raw = MaxSimRescorer.create(FIELD, q, VectorSimilarityFunction.DOT_PRODUCT, MaxSimRescorer.Scale.RAW,
        maxSim).rescore(searcher, firstPass, 200);
    Map<Integer, Float> rawByDoc = byDoc(raw);
    for (ScoreDoc hit : lucene.scoreDocs) {
      float s = rawByDoc.get(hit.doc);
      float expected = hit.score == 0f ? 0f : (float) ((5 + (double) s) / 2);
      assertEquals(expected, hit.score, "doc " + hit.doc + ": the raw sum's value, bit for bit");
    }
    // the scale chosen on the JVM-wide default instance (a user's finding: RAW needed an instance of one's own)
    TopDocs rawOnDefault = MaxSimRescorer.create(FIELD, q, VectorSimilarityFunction.DOT_PRODUCT)
        .withScale(MaxSimRescorer.Scale.RAW).rescore(searcher, firstPass, 200);
    assertEquals(rawByDoc, byDoc(rawOnDefault));
  }

  /** The per-document similarity inside Lucene's own values source gives Lucene's values. */
  @Test
  void multiVectorSimilarityMatchesSumMaxSim() {
    Random rnd = new Random(SEED + 5);
    MaxSimMultiVectorSimilarity ours = new MaxSimMultiVectorSimilarity(maxSim);
    for (int i = 0; i < 50; i++) {
      float[][] q = unitVectors(rnd, 1 + rnd.nextInt(40), false);
      float[][] d = unitVectors(rnd, 1 + rnd.nextInt(90), i % 2 == 1);
      VectorSimilarityFunction f = i % 2 == 0 ? VectorSimilarityFunction.DOT_PRODUCT : VectorSimilarityFunction.COSINE;
      float expected = LateInteractionFloatValuesSource.ScoreFunction.SUM_MAX_SIM.compare(q, d, f);
      assertEquals(expected, ours.compare(q, d, f), 1e-5f * Math.max(1f, expected), f + " case " + i);
    }
    assertEquals(Float.MIN_VALUE, ours.compare(unitQuery(rnd, 2), new float[0][], VectorSimilarityFunction.DOT_PRODUCT));
    // a ragged or null token is named by the argument that holds it, not by the batch built from it
    float[][] q = unitQuery(rnd, 2);
    float[][][] bad = {{q[0], new float[DIM - 1]}, {q[0], null}, {new float[0]}};
    for (float[][] b : bad) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> ours.compare(q, b, VectorSimilarityFunction.DOT_PRODUCT));
      assertTrue(e.getMessage().startsWith("docVector["), e.getMessage());
      e = assertThrows(IllegalArgumentException.class, () -> ours.compare(b, q, VectorSimilarityFunction.COSINE));
      assertTrue(e.getMessage().startsWith("queryVector["), e.getMessage());
      // against an empty other side too: the malformed array is refused, not scored as if the other were all
      float[][] none = new float[0][];
      e = assertThrows(IllegalArgumentException.class,
          () -> ours.compare(none, b, VectorSimilarityFunction.DOT_PRODUCT));
      assertTrue(e.getMessage().startsWith("docVector["), e.getMessage());
      e = assertThrows(IllegalArgumentException.class, () -> ours.compare(b, none, VectorSimilarityFunction.COSINE));
      assertTrue(e.getMessage().startsWith("queryVector["), e.getMessage());
    }
  }

  @Test
  void theFirstPassIsLeftAsItWas() throws IOException {
    TopDocs firstPass = randomFirstPass(new Random(SEED + 4), 300);
    TopDocs before = copy(firstPass);
    MaxSimRescorer.create(FIELD, unitQuery(new Random(SEED), 4), VectorSimilarityFunction.DOT_PRODUCT,
        MaxSimRescorer.Scale.LUCENE, maxSim).rescore(searcher, firstPass, 10);
    for (int i = 0; i < before.scoreDocs.length; i++) {
      assertEquals(before.scoreDocs[i].doc, firstPass.scoreDocs[i].doc);
      assertEquals(before.scoreDocs[i].score, firstPass.scoreDocs[i].score);
    }
  }

  @Test
  void badArgumentsNameWhatIsWrong() {
    float[][] q = unitQuery(new Random(SEED), 3);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> MaxSimRescorer.create(FIELD, q, VectorSimilarityFunction.EUCLIDEAN, MaxSimRescorer.Scale.LUCENE, maxSim));
    assertTrue(e.getMessage().contains("EUCLIDEAN"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> MaxSimRescorer.create(FIELD, new float[0][], VectorSimilarityFunction.DOT_PRODUCT));
    assertTrue(e.getMessage().contains("queryVectors"), e.getMessage());
    float[][] wrongDim = unitVectors(new Random(1), 2, false);
    float[][] shortRow = {wrongDim[0], new float[DIM - 1]};
    e = assertThrows(IllegalArgumentException.class,
        () -> MaxSimRescorer.create(FIELD, shortRow, VectorSimilarityFunction.DOT_PRODUCT));
    assertTrue(e.getMessage().contains("queryVectors[1]"), e.getMessage());
    float[][] otherDim = {new float[DIM + 1]};
    otherDim[0][0] = 1;
    e = assertThrows(IllegalArgumentException.class, () -> MaxSimRescorer.create(FIELD, otherDim,
        VectorSimilarityFunction.DOT_PRODUCT, MaxSimRescorer.Scale.LUCENE, maxSim).rescore(searcher,
            searcher.search(MatchAllDocsQuery.INSTANCE, 10), 5));
    assertTrue(e.getMessage().contains("dim " + DIM) && e.getMessage().contains("expected dim " + (DIM + 1)),
        e.getMessage());
    // thrown in a block scored on another thread, it reaches the caller as thrown, not wrapped in its own name
    assertFalse(e.getMessage().startsWith("java.lang."), e.getMessage());
  }

  /**
   * A NaN score ranks first, as TopK ranks it (ties to the lower doc), whatever topN: a sort that is total on NaN,
   * not ScoreDoc.COMPARATOR's, which threw or mis-ranked. A negative doc id is refused, naming the hit.
   */
  @Test
  void nanScoresRankFirstAndBadDocIdsAreNamed(@TempDir Path folder) throws IOException {
    try (Directory dir = FSDirectory.open(folder.resolve("nan"))) {
      try (IndexWriter writer = new IndexWriter(dir, new IndexWriterConfig())) {
        for (int i = 0; i < 200; i++) {
          Document doc = new Document();
          doc.add(new LateInteractionField(FIELD, new float[][] {{i % 40 == 7 ? Float.NaN : i * 0.01f, 1f}}));
          writer.addDocument(doc);
        }
      }
      try (DirectoryReader r = DirectoryReader.open(dir)) {
        IndexSearcher s = new IndexSearcher(r);
        MaxSimRescorer rescorer = MaxSimRescorer.create(FIELD, new float[][] {{1f, 1f}},
            VectorSimilarityFunction.DOT_PRODUCT, MaxSimRescorer.Scale.RAW, maxSim);
        for (int topN : new int[] {200, 10}) {
          ScoreDoc[] top = rescorer.rescore(s, s.search(MatchAllDocsQuery.INSTANCE, 200), topN).scoreDocs;
          int[] nanDocs = {7, 47, 87, 127, 167};
          for (int i = 0; i < nanDocs.length; i++) {
            assertEquals(nanDocs[i], top[i].doc, "topN " + topN + ": NaN documents first, in doc order");
            assertTrue(Float.isNaN(top[i].score));
          }
          for (int i = nanDocs.length + 1; i < top.length; i++) {
            assertTrue(top[i - 1].score >= top[i].score, "topN " + topN + ": descending after the NaNs");
          }
        }
        TopDocs bad = new TopDocs(new TotalHits(1, TotalHits.Relation.EQUAL_TO), new ScoreDoc[] {new ScoreDoc(-1, 1f)});
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> rescorer.rescore(s, bad, 1));
        assertTrue(e.getMessage().contains("scoreDocs[0].doc = -1"), e.getMessage());
        TopDocs hole = new TopDocs(new TotalHits(2, TotalHits.Relation.EQUAL_TO), new ScoreDoc[] {new ScoreDoc(0, 1f), null});
        e = assertThrows(IllegalArgumentException.class, () -> rescorer.rescore(s, hole, 1));
        assertTrue(e.getMessage().contains("scoreDocs[1] is null"), e.getMessage());
      }
    }
  }

  /** Lucene's order and ours: equal scores per document, the same top-N up to swaps of near-equal scores. */
  private static void assertSameRanking(Rescorer lucene, Rescorer ours, TopDocs firstPass, int topN, String what)
      throws IOException {
    String where = what + " (seed " + SEED + "L)";
    // Lucene's rescorer overwrites the first pass's scores: each call gets its own copy
    TopDocs expected = lucene.rescore(searcher, copy(firstPass), topN);
    TopDocs actual = ours.rescore(searcher, firstPass, topN);
    assertEquals(expected.scoreDocs.length, actual.scoreDocs.length, where);
    TopDocs all = ours.rescore(searcher, firstPass, firstPass.scoreDocs.length);
    Map<Integer, Float> oursByDoc = byDoc(all);
    for (int i = 0; i < expected.scoreDocs.length; i++) {
      ScoreDoc e = expected.scoreDocs[i];
      ScoreDoc a = actual.scoreDocs[i];
      float tolerance = 1e-5f * Math.max(1f, Math.abs(e.score));
      assertEquals(e.score, oursByDoc.get(e.doc), tolerance, where + ": score of doc " + e.doc);
      if (e.doc != a.doc) {
        assertEquals(e.score, a.score, 2 * tolerance, where + ": rank " + i + " holds doc " + a.doc + ", Lucene "
            + e.doc + "; only near-equal scores may swap");
      }
    }
    assertTrue(explains(ours, expected.scoreDocs[0]), where + ": explain gives the rescored value");
  }

  private static TopDocs copy(TopDocs docs) {
    ScoreDoc[] hits = new ScoreDoc[docs.scoreDocs.length];
    for (int i = 0; i < hits.length; i++) {
      hits[i] = new ScoreDoc(docs.scoreDocs[i].doc, docs.scoreDocs[i].score);
    }
    return new TopDocs(docs.totalHits, hits);
  }

  private static boolean explains(Rescorer ours, ScoreDoc top) throws IOException {
    var first = org.apache.lucene.search.Explanation.match(1f, "first");
    return Math.abs(ours.explain(searcher, first, top.doc).getValue().floatValue() - top.score)
        <= 1e-5f * Math.max(1f, Math.abs(top.score));
  }

  private static Map<Integer, Float> byDoc(TopDocs docs) {
    Map<Integer, Float> m = new HashMap<>();
    for (ScoreDoc s : docs.scoreDocs) {
      m.put(s.doc, s.score);
    }
    return m;
  }

  /** {@code n} distinct random documents with random first-pass scores. */
  private static TopDocs randomFirstPass(Random rnd, int n) {
    int[] perm = rnd.ints(0, DOCS).distinct().limit(n).toArray();
    ScoreDoc[] hits = new ScoreDoc[n];
    for (int i = 0; i < n; i++) {
      hits[i] = new ScoreDoc(perm[i], rnd.nextFloat() * 10);
    }
    return new TopDocs(new TotalHits(n, TotalHits.Relation.EQUAL_TO), hits);
  }

  /** The hits whose documents were indexed with unit-length vectors (or without the field). */
  private static TopDocs unitOnly(TopDocs firstPass) {
    Random rnd = new Random(SEED);
    boolean[] unit = new boolean[DOCS];
    for (int i = 0; i < DOCS; i++) {
      if (i % 11 != 5) {
        int tokens = 1 + rnd.nextInt(80);
        boolean scaled = rnd.nextBoolean();
        unitVectors(rnd, tokens, scaled); // replay the generator
        unit[i] = !scaled;
      } else {
        unit[i] = true;
      }
    }
    ScoreDoc[] kept = java.util.Arrays.stream(firstPass.scoreDocs).filter(h -> unit[h.doc]).toArray(ScoreDoc[]::new);
    return new TopDocs(new TotalHits(kept.length, TotalHits.Relation.EQUAL_TO), kept);
  }

  /**
   * A float value of no token (written by hand: LateInteractionField refuses one) scores -1e9 raw, whatever its
   * block holds, including a block of only such values; explain agrees.
   */
  @Test
  void handWrittenValuesOfNoTokenScoreMinusOneE9(@TempDir Path folder) throws IOException {
    try (Directory dir = FSDirectory.open(folder.resolve("empty"))) {
      try (IndexWriter writer = new IndexWriter(dir, new IndexWriterConfig())) {
        for (int i = 0; i < 3; i++) {
          Document doc = new Document();
          doc.add(i == 1 ? new LateInteractionField(FIELD, new float[][] {{1f, 1f}})
              : new BinaryDocValuesField(FIELD, new BytesRef(new byte[] {2, 0, 0, 0}))); // dim 2, no floats
          writer.addDocument(doc);
        }
      }
      try (DirectoryReader r = DirectoryReader.open(dir)) {
        IndexSearcher s = new IndexSearcher(r);
        float[][] q = {{1f, 0f}, {0f, 1f}};
        MaxSimRescorer raw = MaxSimRescorer.create(FIELD, q, VectorSimilarityFunction.DOT_PRODUCT,
            MaxSimRescorer.Scale.RAW, maxSim);
        for (int block : new int[] {1, 64}) {
          ScoreDoc[] top = raw.withBlockSize(block).rescore(s, s.search(MatchAllDocsQuery.INSTANCE, 3), 3).scoreDocs;
          assertEquals(1, top[0].doc);
          assertEquals(2f, top[0].score);
          assertEquals(-1e9f, top[1].score);
          assertEquals(-1e9f, top[2].score);
        }
        assertEquals(-1e9f, raw.explain(s, Explanation.match(0f, "first"), 2).getValue().floatValue());
      }
    }
  }

  /**
   * Gathering buffers are kept idle up to RETAINED_BYTES for all threads together: a huge block's is left to the
   * collector, and so is any past the limit. Kept per thread, they grew with every thread that had rescored (a
   * hostile tester's pool of 64 threads held 640 MB after its last rescore).
   */
  @Test
  void idleGatheringBuffersStayWithinOneLimitForAllThreads() throws Exception {
    IdleBuffers idle = new IdleBuffers(MaxSimRescorer.RETAINED_BYTES);
    StoredTokens small = new LateInteractionBytes().reset("f", 4);
    small.add(LateInteractionField.encode(new float[][] {{1, 2, 3, 4}}), 0);
    idle.giveBack(small);
    assertEquals(1, idle.size(), "a small buffer is kept for the next block");
    int dim = 1024;
    StoredTokens huge = new LateInteractionBytes().reset("f", dim);
    huge.add(LateInteractionField.encode(new float[(int) (MaxSimRescorer.RETAINED_BYTES / Float.BYTES / dim) + 1][dim]),
        0);
    assertTrue(huge.capacityBytes() > MaxSimRescorer.RETAINED_BYTES);
    idle.giveBack(huge);
    assertEquals(1, idle.size(), "a buffer over " + MaxSimRescorer.RETAINED_BYTES + " bytes is not kept");
    assertEquals(small, idle.take());
    assertEquals(0, idle.idleBytes());

    // the largest idle buffer is taken first, and a larger one given back displaces smaller ones past the limit
    StoredTokens[] buffers = new StoredTokens[3];
    for (int i = 0; i < 3; i++) {
      buffers[i] = new LateInteractionBytes().reset("f", 4);
      buffers[i].add(LateInteractionField.encode(new float[(i + 1) * 64][4]), 0);
    }
    assertTrue(buffers[0].capacityBytes() < buffers[1].capacityBytes()
        && buffers[1].capacityBytes() < buffers[2].capacityBytes(), "three sizes");
    long limit = buffers[1].capacityBytes() + buffers[2].capacityBytes();
    IdleBuffers sized = new IdleBuffers(limit);
    sized.giveBack(buffers[0]);
    sized.giveBack(buffers[1]);
    sized.giveBack(buffers[2]); // past the limit with both: the smallest goes
    assertEquals(limit, sized.idleBytes());
    assertEquals(buffers[2], sized.take());
    assertEquals(buffers[1], sized.take());
    assertEquals(null, sized.take());

    // many threads give back a buffer each: what stays idle is within the one limit
    int threads = 32;
    java.util.concurrent.CyclicBarrier together = new java.util.concurrent.CyclicBarrier(threads);
    java.util.List<Thread> started = new java.util.ArrayList<>();
    float[][] tokens = new float[(int) (MaxSimRescorer.RETAINED_BYTES / 8 / Float.BYTES / dim)][dim];
    for (int t = 0; t < threads; t++) {
      started.add(Thread.ofPlatform().start(() -> {
        StoredTokens mine = idle.take();
        mine = (mine == null ? new LateInteractionBytes() : mine).reset("f", dim);
        mine.add(LateInteractionField.encode(tokens), 0);
        try {
          together.await();
        } catch (Exception e) {
          throw new AssertionError(e);
        }
        idle.giveBack(mine);
      }));
    }
    for (Thread t : started) {
      t.join();
    }
    assertTrue(idle.idleBytes() <= MaxSimRescorer.RETAINED_BYTES && idle.size() < threads,
        idle.size() + " buffers, " + idle.idleBytes() + " bytes idle");
  }
}
