package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.FixedDimensionalEncoder;
import dev.maxsim4j.MaxSim;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.FSDirectory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The rescorer and the retriever on the CUDA backend (where every candidate is one fused call) against the same
 * searches on the CPU backend: on one on-disk index of several segments holding every document's tokens as a float
 * field and as int8, fp8 and 1-bit fields, each hit's score agrees to fp32 accuracy and the top 10 (planted near-copies
 * of the query) are the same documents. d = 128 is a width the tensor-core kernels take, d = 33 one they do not.
 */
@Tag("gpu")
@ExtendWith(CudaRescorerTest.RequiresCuda.class)
class CudaRescorerTest {
  private static final String FLOAT = "float";
  private static final Map<DType, String> FIELDS = Map.of(DType.INT8, "int8", DType.FLOAT8_E4M3, "fp8",
      DType.BINARY, "bits");
  private static final int DOCS = 3000;
  private static final int QUERY_TOKENS = 32;
  /** Fresh every run; a failure names it, and {@code -Dfuzz.seed} replays it. */
  private static final long SEED = Long.getLong("fuzz.seed", new Random().nextLong());
  /** fp32 accuracy: relative 1e-5 of the sum over query tokens of |q| x the largest |d| (unit vectors: at most 2). */
  private static final double TOLERANCE = 1e-5 * 2 * QUERY_TOKENS;

  @org.junit.jupiter.api.io.TempDir static Path folder;
  private static MaxSim cuda;
  private static MaxSim cpu;

  /** Enables the tests only where the CUDA backend can run (asked once), saying why not elsewhere. */
  static final class RequiresCuda implements ExecutionCondition {
    private static final ConditionEvaluationResult RESULT = probe();

    private static ConditionEvaluationResult probe() {
      try (MaxSim cuda = MaxSim.builder().backend("cuda").build()) {
        return ConditionEvaluationResult.enabled("a CUDA device is present: " + cuda.backendInfo());
      } catch (IllegalStateException e) {
        return ConditionEvaluationResult.disabled("GPU test skipped: " + e.getMessage());
      }
    }

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
      return RESULT;
    }
  }

  @BeforeAll
  static void open() {
    cuda = MaxSim.builder().backend("cuda").build();
    cpu = MaxSim.builder().backend("cpu").build();
  }

  @AfterAll
  static void close() {
    if (cuda != null) {
      cuda.close();
    }
    if (cpu != null) {
      cpu.close();
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {33, 128})
  void everyFieldRescoresAsOnTheCpu(int dim) throws IOException {
    Random rnd = new Random(SEED + dim);
    float[][] query = MaxSimRescorerTest.unitVectors(rnd, QUERY_TOKENS, false, dim);
    Set<Integer> planted = new HashSet<>();
    try (FSDirectory directory = FSDirectory.open(folder.resolve("rescore-" + dim))) {
      IndexWriterConfig config = new IndexWriterConfig().setMaxBufferedDocs(700)
          .setMergePolicy(NoMergePolicy.INSTANCE);
      try (IndexWriter writer = new IndexWriter(directory, config)) {
        for (int i = 0; i < DOCS; i++) {
          Document doc = new Document();
          boolean plant = i % 300 == 11;
          if (plant || i % 17 != 5) { // some documents hold no tokens
            float[][] v = MaxSimRescorerTest.unitVectors(rnd, (plant ? QUERY_TOKENS : 1) + rnd.nextInt(80), false,
                dim);
            if (plant) {
              QuantizedRescorerTest.plant(rnd, query, v);
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
      try (DirectoryReader reader = DirectoryReader.open(directory)) {
        assertTrue(reader.leaves().size() > 1, "several segments");
        IndexSearcher searcher = new IndexSearcher(reader);
        TopDocs all = searcher.search(MatchAllDocsQuery.INSTANCE, DOCS);
        String what = "d=" + dim + " (seed " + SEED + "L): float field";
        assertSameRescoring(what, planted, searcher, all,
            MaxSimRescorer.create(FLOAT, query, VectorSimilarityFunction.DOT_PRODUCT, MaxSimRescorer.Scale.RAW, cpu),
            MaxSimRescorer.create(FLOAT, query, VectorSimilarityFunction.DOT_PRODUCT, MaxSimRescorer.Scale.RAW, cuda));
        for (DType type : FIELDS.keySet()) {
          for (DType queryType : new DType[] {DType.FLOAT32, type}) {
            String field = FIELDS.get(type);
            assertSameRescoring("d=" + dim + " (seed " + SEED + "L): " + type + " documents, " + queryType
                + " queries", planted, searcher, all,
                MaxSimRescorer.createQuantized(field, query, MaxSimRescorer.Scale.RAW, cpu).withQueryType(queryType),
                MaxSimRescorer.createQuantized(field, query, MaxSimRescorer.Scale.RAW, cuda).withQueryType(queryType));
          }
        }
      }
    }
  }

  /**
   * Every hit of {@code gpu} scores as on {@code cpu} (and as on the GPU in several smaller calls), and the top 10
   * is the planted documents on both.
   */
  private static void assertSameRescoring(String what, Set<Integer> planted, IndexSearcher searcher, TopDocs all,
      MaxSimRescorer onCpu, MaxSimRescorer onGpu) throws IOException {
    TopDocs expected = onCpu.rescore(searcher, all, DOCS);
    TopDocs oneCall = onGpu.rescore(searcher, all, DOCS);
    TopDocs cut = onGpu.withGatherLimit(20_000).rescore(searcher, all, DOCS);
    Map<Integer, Float> reference = new java.util.HashMap<>();
    for (ScoreDoc hit : expected.scoreDocs) {
      reference.put(hit.doc, hit.score);
    }
    for (TopDocs gpu : new TopDocs[] {oneCall, cut}) {
      String call = what + (gpu == oneCall ? ", one call" : ", several calls");
      assertEquals(DOCS, gpu.scoreDocs.length, call);
      for (ScoreDoc hit : gpu.scoreDocs) {
        assertEquals(reference.get(hit.doc), hit.score, TOLERANCE, call + ": doc " + hit.doc);
      }
      assertEquals(planted, topTen(gpu), call + ": the top 10 are the planted documents");
    }
    assertEquals(planted, topTen(expected), what + ": on the CPU");
  }

  @ParameterizedTest
  @ValueSource(ints = {32, 128})
  void theRetrieverFindsWhatItFindsOnTheCpu(int dim) throws IOException {
    Random rnd = new Random(SEED - dim);
    float[][] query = MaxSimRescorerTest.unitVectors(rnd, QUERY_TOKENS, false, dim);
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(dim).simHashBits(4).repetitions(8)
        .projectionDim(8).build();
    LateInteractionRetriever onCpu = new LateInteractionRetriever(encoder, "fde", "tokens", cpu);
    LateInteractionRetriever onGpu = new LateInteractionRetriever(encoder, "fde", "tokens", cuda);
    Set<Integer> planted = new HashSet<>();
    try (FSDirectory directory = FSDirectory.open(folder.resolve("retrieve-" + dim))) {
      IndexWriterConfig config = new IndexWriterConfig().setCodec(onGpu.codec()).setMaxBufferedDocs(700)
          .setMergePolicy(NoMergePolicy.INSTANCE);
      try (IndexWriter writer = new IndexWriter(directory, config)) {
        for (int i = 0; i < DOCS; i++) {
          boolean plant = i % 300 == 11;
          float[][] v = MaxSimRescorerTest.unitVectors(rnd, (plant ? QUERY_TOKENS : 1) + rnd.nextInt(80), false, dim);
          if (plant) {
            QuantizedRescorerTest.plant(rnd, query, v);
            planted.add(i);
          }
          Document doc = new Document();
          onGpu.documentFields(v).forEach(doc::add);
          writer.addDocument(doc);
        }
      }
      try (DirectoryReader reader = DirectoryReader.open(directory)) {
        IndexSearcher searcher = new IndexSearcher(reader);
        String what = "d=" + dim + " (seed " + SEED + "L)";
        assertSameHits(what + ": exact", onCpu.searchExact(searcher, query, 50),
            onGpu.searchExact(searcher, query, 50));
        assertSameHits(what + ": candidates", onCpu.search(searcher, query, 500, 50),
            onGpu.search(searcher, query, 500, 50));
        assertEquals(planted, topTen(onGpu.searchExact(searcher, query, 10)), what);
      }
    }
  }

  /** The same documents in the same order (scores within fp32 accuracy, so near-ties may swap: checked by score). */
  private static void assertSameHits(String what, TopDocs expected, TopDocs actual) {
    assertEquals(expected.scoreDocs.length, actual.scoreDocs.length, what);
    for (int i = 0; i < expected.scoreDocs.length; i++) {
      assertEquals(expected.scoreDocs[i].score, actual.scoreDocs[i].score, TOLERANCE, what + ": rank " + i);
    }
    assertEquals(topTen(expected), topTen(actual), what + ": the top 10");
  }

  private static Set<Integer> topTen(TopDocs hits) {
    Set<Integer> docs = new HashSet<>();
    for (int i = 0; i < Math.min(10, hits.scoreDocs.length); i++) {
      docs.add(hits.scoreDocs[i].doc);
    }
    return docs;
  }
}
