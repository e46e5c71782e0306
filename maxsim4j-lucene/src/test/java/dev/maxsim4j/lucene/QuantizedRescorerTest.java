package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.index.BinaryDocValues;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * MaxSimRescorer on quantized fields, on one on-disk index (FSDirectory, several segments) holding every
 * document's tokens four times: as a float LateInteractionField and as int8, fp8 and 1-bit
 * QuantizedLateInteractionFields. Each quantized score equals the float64 MaxSim of the query and the
 * document's dequantized tokens; the top 10 (ten documents that hold near-copies of the query's tokens among
 * random ones) is the float field's top 10 for every type.
 */
class QuantizedRescorerTest {
  private static final String FLOAT = "float";
  private static final Map<DType, String> FIELDS = Map.of(DType.INT8, "int8", DType.FLOAT8_E4M3, "fp8",
      DType.BINARY, "bits");
  private static final int DOCS = 2000;
  private static final int DIM = 33;
  private static final int QUERY_TOKENS = 8;
  private static final long SEED = new Random().nextLong();
  /**
   * fp32 accuracy: relative 1e-5 of the sum over query tokens of |q| x the largest |d|, here at most 2 per
   * query token (unit vectors; their int8, fp8 and 1-bit versions are within a few percent of unit length).
   */
  private static final double TOLERANCE = 1e-5 * 2 * QUERY_TOKENS;

  @TempDir static Path folder;
  private static Directory directory;
  private static DirectoryReader reader;
  private static IndexSearcher searcher;
  private static MaxSim maxSim;
  private static float[][] query;
  private static Set<Integer> planted;

  @BeforeAll
  static void index() throws IOException {
    Random rnd = new Random(SEED);
    query = MaxSimRescorerTest.unitVectors(rnd, QUERY_TOKENS, false, DIM);
    directory = FSDirectory.open(folder.resolve("index"));
    IndexWriterConfig config = new IndexWriterConfig().setMaxBufferedDocs(600).setMergePolicy(NoMergePolicy.INSTANCE);
    planted = new java.util.HashSet<>();
    try (IndexWriter writer = new IndexWriter(directory, config)) {
      for (int i = 0; i < DOCS; i++) {
        Document doc = new Document();
        if (!withoutField(i)) {
          boolean plant = i % 200 == 7;
          float[][] v = MaxSimRescorerTest.unitVectors(rnd, (plant ? QUERY_TOKENS : 1) + rnd.nextInt(60), false, DIM);
          if (plant) {
            plant(rnd, query, v);
            planted.add(i);
          }
          doc.add(new LateInteractionField(FLOAT, v));
          for (var e : FIELDS.entrySet()) {
            doc.add(new QuantizedLateInteractionField(e.getValue(), v, e.getKey()));
          }
        }
        writer.addDocument(doc);
      }
    }
    reader = DirectoryReader.open(directory);
    searcher = new IndexSearcher(reader);
    maxSim = MaxSim.builder().backend("cpu").threads(2).build();
    assertTrue(reader.leaves().size() > 1, "the index has several segments");
  }

  /** One document in 13 has none of the fields; the ten planted ones all have them. */
  private static boolean withoutField(int doc) {
    return doc % 13 == 4 && doc % 200 != 7;
  }

  /** Replaces the first tokens of {@code v} by the tokens of {@code query} plus a little noise (unit length again). */
  static void plant(Random rnd, float[][] query, float[][] v) {
    int dim = query[0].length;
    for (int i = 0; i < query.length; i++) {
      float[] t = new float[dim];
      double norm = 0;
      for (int k = 0; k < dim; k++) {
        t[k] = query[i][k] + (float) (0.05 * rnd.nextGaussian() / Math.sqrt(dim));
        norm += t[k] * t[k];
      }
      for (int k = 0; k < dim; k++) {
        t[k] /= (float) Math.sqrt(norm);
      }
      v[i] = t;
    }
  }

  @AfterAll
  static void close() throws IOException {
    maxSim.close();
    reader.close();
    directory.close();
  }

  @Test
  void everyTypeScoresItsDequantizedTokensAndKeepsTheFloatTopTen() throws IOException {
    TopDocs all = searcher.search(MatchAllDocsQuery.INSTANCE, DOCS);
    TopDocs floatTop = MaxSimRescorer.create(FLOAT, query, VectorSimilarityFunction.DOT_PRODUCT,
        MaxSimRescorer.Scale.RAW, maxSim).rescore(searcher, all, 10);
    Set<Integer> expectedTop = docs(floatTop);
    for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
      for (DType queryType : type == DType.BINARY ? new DType[] {DType.FLOAT32, DType.BINARY}
          : new DType[] {DType.FLOAT32}) {
        String what = type + " documents, " + queryType + " queries (seed " + SEED + "L)";
        MaxSimRescorer rescorer = MaxSimRescorer.createQuantized(FIELDS.get(type), query, MaxSimRescorer.Scale.RAW,
            maxSim).withQueryType(queryType);
        TopDocs rescored = rescorer.rescore(searcher, all, DOCS);
        Map<Integer, Double> reference = reference(FIELDS.get(type), queryType);
        for (ScoreDoc hit : rescored.scoreDocs) {
          Double expected = reference.get(hit.doc);
          if (expected == null) {
            assertEquals(0f, hit.score, what + ": doc " + hit.doc + " has no field");
          } else {
            assertEquals(expected, hit.score, TOLERANCE, what + ": doc " + hit.doc);
          }
        }
        Set<Integer> top = docs(new TopDocs(rescored.totalHits, Arrays.copyOf(rescored.scoreDocs, 10)));
        assertEquals(expectedTop, top, what + ": the float field's top 10");
        assertEquals(planted, top, what);
        // one fused call for every candidate (the GPU's path) gives the same scores as blocks
        TopDocs oneCall = rescorer.withBlockSize(DOCS).rescore(searcher, all, DOCS);
        // and so does that block cut into several calls where its tokens pass what a gathering array takes
        TopDocs cut = rescorer.withBlockSize(DOCS).withGatherLimit(5000).rescore(searcher, all, DOCS);
        for (int i = 0; i < DOCS; i++) {
          assertEquals(rescored.scoreDocs[i].score, oneCall.scoreDocs[i].score, 0f, what + ": rank " + i);
          assertEquals(rescored.scoreDocs[i].doc, cut.scoreDocs[i].doc, what + ": cut, rank " + i);
          assertEquals(rescored.scoreDocs[i].score, cut.scoreDocs[i].score, 0f, what + ": cut, rank " + i);
        }
        ScoreDoc best = rescored.scoreDocs[0];
        assertEquals(best.score, rescorer.explain(searcher, org.apache.lucene.search.Explanation.match(1f, "first"),
            best.doc).getValue().floatValue(), 1e-5f * Math.abs(best.score), what + ": explain");
      }
    }
  }

  /** Awkward widths, one-token and empty documents, one-token queries, ragged lengths: each type against the reference. */
  @Test
  void awkwardShapesScoreTheirDequantizedTokens() throws IOException {
    Random rnd = new Random(SEED + 7);
    for (int d : new int[] {1, 3, 8, 127, 513}) {
      try (Directory small = new org.apache.lucene.store.ByteBuffersDirectory()) {
        int docs = 40;
        try (IndexWriter writer = new IndexWriter(small, new IndexWriterConfig())) {
          for (int i = 0; i < docs; i++) {
            float[][] v = QuantizedLateInteractionFieldTest.gaussian(rnd, i % 4 == 0 ? 1 : 1 + rnd.nextInt(30), d);
            Document doc = new Document();
            for (var e : FIELDS.entrySet()) {
              // document 1 stores no tokens
              doc.add(i == 1 ? new org.apache.lucene.document.BinaryDocValuesField(e.getValue(),
                  QuantizedLateInteractionField.encode(e.getKey(), new byte[0], null, 0, d))
                  : new QuantizedLateInteractionField(e.getValue(), v, e.getKey()));
            }
            writer.addDocument(doc);
          }
        }
        try (DirectoryReader r = DirectoryReader.open(small)) {
          IndexSearcher s = new IndexSearcher(r);
          TopDocs all = s.search(MatchAllDocsQuery.INSTANCE, docs);
          for (int lq : new int[] {1, 5}) {
            float[][] q = QuantizedLateInteractionFieldTest.gaussian(rnd, lq, d);
            for (DType type : FIELDS.keySet()) {
              String what = type + " d=" + d + " Lq=" + lq + " (seed " + SEED + "L)";
              TopDocs rescored = MaxSimRescorer.createQuantized(FIELDS.get(type), q, MaxSimRescorer.Scale.RAW, maxSim)
                  .rescore(s, all, docs);
              for (ScoreDoc hit : rescored.scoreDocs) {
                BinaryDocValues values = r.leaves().get(0).reader().getBinaryDocValues(FIELDS.get(type));
                values.advanceExact(hit.doc);
                TokenBatch stored = QuantizedLateInteractionField.decode(values.binaryValue());
                if (stored.validTokens(0) == 0) {
                  assertEquals(-1e9f, hit.score, what + ": an empty document");
                  continue;
                }
                double[] ref = maxSimAndMagnitude(q, stored);
                assertEquals(ref[0], hit.score, 1e-5 * ref[1] + 1e-6, what + ": doc " + hit.doc);
              }
            }
          }
        }
      }
    }
  }

  /** The float64 MaxSim of {@code q} and one row of dequantized tokens, and the sum of |q_i| x max |d_t|. */
  private static double[] maxSimAndMagnitude(float[][] q, TokenBatch doc) {
    double sum = 0;
    double magnitude = 0;
    double largest = 0;
    for (int t = 0; t < doc.validTokens(0); t++) {
      double norm = 0;
      for (int k = 0; k < doc.dim(); k++) {
        norm += (double) doc.get(0, t, k) * doc.get(0, t, k);
      }
      largest = Math.max(largest, Math.sqrt(norm));
    }
    for (float[] token : q) {
      double best = Double.NEGATIVE_INFINITY;
      double norm = 0;
      for (float x : token) {
        norm += (double) x * x;
      }
      for (int t = 0; t < doc.validTokens(0); t++) {
        double dot = 0;
        for (int k = 0; k < doc.dim(); k++) {
          dot += (double) token[k] * doc.get(0, t, k);
        }
        best = Math.max(best, dot);
      }
      sum += best;
      magnitude += Math.sqrt(norm) * largest;
    }
    return new double[] {sum, magnitude};
  }

  @Test
  void luceneScaleAndFallbackWorkAsForFloatFields() throws IOException {
    TopDocs all = searcher.search(MatchAllDocsQuery.INSTANCE, DOCS);
    for (DType queryType : new DType[] {DType.FLOAT32, DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
      TopDocs raw = MaxSimRescorer.createQuantized("int8", query, MaxSimRescorer.Scale.RAW, maxSim)
          .withQueryType(queryType).rescore(searcher, all, DOCS);
      TopDocs lucene = MaxSimRescorer.createQuantized("int8", query, MaxSimRescorer.Scale.LUCENE, maxSim)
          .withQueryType(queryType).withFallbackToFirstPassScore().rescore(searcher, all, DOCS);
      Map<Integer, Float> rawByDoc = new HashMap<>();
      for (ScoreDoc h : raw.scoreDocs) {
        rawByDoc.put(h.doc, h.score);
      }
      for (ScoreDoc h : lucene.scoreDocs) {
        float expected = withoutField(h.doc) ? 1f : (float) ((QUERY_TOKENS + (double) rawByDoc.get(h.doc)) / 2);
        // bit for bit: the value of the raw sum (first pass: 1)
        assertEquals(expected, h.score, queryType + ": doc " + h.doc);
      }
    }
  }

  @Test
  void badFieldsAndArgumentsNameWhatIsWrong() throws IOException {
    TopDocs all = searcher.search(MatchAllDocsQuery.INSTANCE, DOCS);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MaxSimRescorer
        .createQuantized(FLOAT, query, MaxSimRescorer.Scale.RAW, maxSim).rescore(searcher, all, 10));
    assertTrue(e.getMessage().contains("field float of doc"), e.getMessage());
    float[][] wider = MaxSimRescorerTest.unitVectors(new Random(1), 2, false, DIM + 1);
    e = assertThrows(IllegalArgumentException.class, () -> MaxSimRescorer
        .createQuantized("bits", wider, MaxSimRescorer.Scale.RAW, maxSim).rescore(searcher, all, 10));
    assertTrue(e.getMessage().contains("dim " + DIM) && e.getMessage().contains("expected dim " + (DIM + 1)),
        e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> MaxSimRescorer.createQuantized("int8", query)
        .withQueryType(DType.FLOAT16));
    assertTrue(e.getMessage().contains("FLOAT16"), e.getMessage());
  }

  /**
   * A field whose values differ in type from document to document: each document scores MaxSim on its own
   * dequantized tokens, the same whether its block holds one type or several (blocks of 1, 7 and 64 hits).
   */
  @Test
  void mixedTypesInOneField() throws IOException {
    DType[] types = {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY};
    Random rnd = new Random(SEED + 1);
    try (Directory mixed = FSDirectory.open(folder.resolve("mixed"))) {
      try (IndexWriter writer = new IndexWriter(mixed, new IndexWriterConfig().setMaxBufferedDocs(40)
          .setMergePolicy(NoMergePolicy.INSTANCE))) {
        for (int i = 0; i < 100; i++) {
          Document doc = new Document();
          float[][] v = MaxSimRescorerTest.unitVectors(rnd, 1 + rnd.nextInt(20), false, DIM);
          doc.add(new QuantizedLateInteractionField("v", v, types[(i * 7 + i / 5) % 3]));
          writer.addDocument(doc);
        }
      }
      try (DirectoryReader r = DirectoryReader.open(mixed)) {
        IndexSearcher s = new IndexSearcher(r);
        Map<Integer, Double> expected = reference(r, "v", DType.FLOAT32);
        TopDocs all = s.search(MatchAllDocsQuery.INSTANCE, 100);
        for (int block : new int[] {1, 7, 64}) {
          TopDocs top = MaxSimRescorer.createQuantized("v", query, MaxSimRescorer.Scale.RAW, maxSim)
              .withBlockSize(block).rescore(s, all, 100);
          assertEquals(100, top.scoreDocs.length);
          for (ScoreDoc h : top.scoreDocs) {
            assertEquals(expected.get(h.doc), h.score, TOLERANCE, "doc " + h.doc + ", blocks of " + block);
          }
        }
      }
    }
  }

  /** The float64 MaxSim of the (dequantized) query and each document's dequantized stored tokens. */
  private static Map<Integer, Double> reference(String field, DType queryType) throws IOException {
    return reference(reader, field, queryType);
  }

  private static Map<Integer, Double> reference(DirectoryReader reader, String field, DType queryType)
      throws IOException {
    TokenBatch q = TokenBatch.of(new float[][][] {query});
    if (queryType != DType.FLOAT32) {
      q = q.quantize(queryType);
    }
    Map<Integer, Double> scores = new HashMap<>();
    for (LeafReaderContext leaf : reader.leaves()) {
      BinaryDocValues values = leaf.reader().getBinaryDocValues(field);
      for (int doc = values.nextDoc(); doc != BinaryDocValues.NO_MORE_DOCS; doc = values.nextDoc()) {
        TokenBatch d = QuantizedLateInteractionField.decode(values.binaryValue());
        double sum = 0;
        for (int i = 0; i < QUERY_TOKENS; i++) {
          double best = Double.NEGATIVE_INFINITY;
          for (int t = 0; t < d.validTokens(0); t++) {
            double dot = 0;
            for (int k = 0; k < DIM; k++) {
              dot += (double) q.get(0, i, k) * d.get(0, t, k);
            }
            best = Math.max(best, dot);
          }
          sum += best;
        }
        scores.put(leaf.docBase + doc, sum);
      }
    }
    return scores;
  }

  private static Set<Integer> docs(TopDocs top) {
    return Arrays.stream(top.scoreDocs).map(h -> h.doc).collect(Collectors.toSet());
  }
}
