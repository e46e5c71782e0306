package dev.maxsim4j.bench;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.lucene.MaxSimRescorer;
import dev.maxsim4j.lucene.QuantizedLateInteractionField;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Locale;
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
 * {@link MaxSimRescorer} on 1,000 first-pass candidates of an on-disk index whose one field holds the
 * documents' tokens as {@code type}: fp32 ({@code LateInteractionField}), or int8, fp8 or 1-bit
 * ({@code QuantizedLateInteractionField}; binary-sym: 1-bit queries too). The documents of
 * {@link LuceneRescorerBenchmark} (~300 tokens of 128-d unit vectors each, 32-token queries, DOT_PRODUCT, top
 * 10). The index is merged to one segment and its size printed, so the types' storage compares too.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1,
    jvmArgsAppend = {"-Xmx6g", "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED"})
@State(Scope.Benchmark)
public class LuceneQuantizedRescorerBenchmark {
  private static final String FIELD = "colbert";
  private static final int DOCS = 1000;
  private static final int QUERY_TOKENS = 32;

  @Param({"fp32", "int8", "fp8", "binary", "binary-sym"})
  public String type;

  @Param({"2"})
  public int threads;

  private Path folder;
  private Directory directory;
  private DirectoryReader reader;
  private IndexSearcher searcher;
  private TopDocs firstPass;
  private MaxSim maxSim;
  private Rescorer rescorer;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    DType stored = switch (type) {
      case "fp32" -> DType.FLOAT32;
      case "int8" -> DType.INT8;
      case "fp8" -> DType.FLOAT8_E4M3;
      case "binary", "binary-sym" -> DType.BINARY;
      default -> throw new IllegalArgumentException(
          "type = " + type + "; expected fp32, int8, fp8, binary or binary-sym");
    };
    Random rnd = new Random(42);
    folder = Files.createTempDirectory("maxsim4j-quantized-rescorer-bench");
    directory = FSDirectory.open(folder);
    long tokens = 0;
    try (IndexWriter writer = new IndexWriter(directory, new IndexWriterConfig())) {
      for (int i = 0; i < DOCS; i++) {
        float[][] v = LuceneRescorerBenchmark.unitVectors(rnd, 200 + rnd.nextInt(201));
        tokens += v.length;
        Document doc = new Document();
        doc.add(stored == DType.FLOAT32 ? new LateInteractionField(FIELD, v)
            : new QuantizedLateInteractionField(FIELD, v, stored));
        writer.addDocument(doc);
      }
      writer.forceMerge(1);
    }
    long bytes = 0;
    for (String file : directory.listAll()) {
      bytes += directory.fileLength(file);
    }
    System.out.printf(Locale.ROOT, "%nindex size, %s: %.2f MB for %d documents, %d tokens (%.1f bytes per token)%n",
        type, bytes / 1e6, DOCS, tokens, bytes / (double) tokens);
    reader = DirectoryReader.open(directory);
    searcher = new IndexSearcher(reader);
    firstPass = searcher.search(MatchAllDocsQuery.INSTANCE, DOCS);
    float[][] query = LuceneRescorerBenchmark.unitVectors(rnd, QUERY_TOKENS);
    maxSim = MaxSim.builder().backend("cpu").threads(threads).build();
    rescorer = stored == DType.FLOAT32
        ? MaxSimRescorer.create(FIELD, query, VectorSimilarityFunction.DOT_PRODUCT, MaxSimRescorer.Scale.LUCENE, maxSim)
        : MaxSimRescorer.createQuantized(FIELD, query, MaxSimRescorer.Scale.LUCENE, maxSim)
            .withQueryType(type.equals("binary-sym") ? DType.BINARY : DType.FLOAT32);
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

  @Benchmark
  public TopDocs rescore() throws IOException {
    return rescorer.rescore(searcher, firstPass, 10);
  }
}
