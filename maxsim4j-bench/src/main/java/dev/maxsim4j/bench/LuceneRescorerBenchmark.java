package dev.maxsim4j.bench;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.lucene.MaxSimRescorer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.LateInteractionRescorer;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.Rescorer;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Rescoring 1,000 first-pass candidates of an on-disk index (FSDirectory in a temporary folder) by their
 * {@code LateInteractionField}: 32-token queries, 128-d, ~300 tokens per document (200-400), unit vectors,
 * DOT_PRODUCT. Lucene's {@code LateInteractionRescorer} (one thread: it scores hit by hit) against
 * {@link MaxSimRescorer} (the whole candidate set in one fused call on {@code threads} CPU threads). Both
 * read the stored bytes through the same doc values; each call returns the top 10.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 3)
@Measurement(iterations = 5, time = 3)
@Fork(value = 1,
    jvmArgsAppend = {"-Xmx6g", "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED"})
@State(Scope.Benchmark)
public class LuceneRescorerBenchmark {
  private static final String FIELD = "colbert";
  private static final int DOCS = 1000;
  private static final int DIM = 128;
  private static final int QUERY_TOKENS = 32;

  @Param({"2"})
  public int threads;

  private Path folder;
  private Directory directory;
  private DirectoryReader reader;
  private IndexSearcher searcher;
  private TopDocs firstPass;
  private MaxSim maxSim;
  private Rescorer lucene;
  private Rescorer ours;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    Random rnd = new Random(42);
    folder = Files.createTempDirectory("maxsim4j-rescorer-bench");
    directory = FSDirectory.open(folder);
    try (IndexWriter writer = new IndexWriter(directory, new IndexWriterConfig())) {
      for (int i = 0; i < DOCS; i++) {
        Document doc = new Document();
        doc.add(new LateInteractionField(FIELD, unitVectors(rnd, 200 + rnd.nextInt(201))));
        writer.addDocument(doc);
      }
    }
    reader = DirectoryReader.open(directory);
    searcher = new IndexSearcher(reader);
    firstPass = searcher.search(MatchAllDocsQuery.INSTANCE, DOCS);
    float[][] query = unitVectors(rnd, QUERY_TOKENS);
    maxSim = MaxSim.builder().backend("cpu").threads(threads).build();
    lucene = LateInteractionRescorer.create(FIELD, query, VectorSimilarityFunction.DOT_PRODUCT);
    ours = MaxSimRescorer.create(FIELD, query, VectorSimilarityFunction.DOT_PRODUCT, MaxSimRescorer.Scale.LUCENE,
        maxSim);
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    maxSim.close();
    reader.close();
    directory.close();
    try (Stream<Path> files = Files.walk(folder)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  static float[][] unitVectors(Random rnd, int tokens) {
    float[][] v = new float[tokens][DIM];
    for (float[] t : v) {
      double norm = 0;
      for (int k = 0; k < DIM; k++) {
        t[k] = (float) rnd.nextGaussian();
        norm += t[k] * t[k];
      }
      for (int k = 0; k < DIM; k++) {
        t[k] /= (float) Math.sqrt(norm);
      }
    }
    return v;
  }

  @Benchmark
  public TopDocs luceneLateInteractionRescorer() throws IOException {
    return lucene.rescore(searcher, firstPass, 10);
  }

  @Benchmark
  public TopDocs maxsim4jRescorer() throws IOException {
    return ours.rescore(searcher, firstPass, 10);
  }
}
