package dev.maxsim4j.bench;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.bench.baseline.NaiveMaxSim;
import java.util.concurrent.TimeUnit;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.LateInteractionFloatValuesSource;
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
import org.openjdk.jmh.infra.Blackhole;

/**
 * All-pairs MaxSim on the project's reference shapes: the fused Vector API kernel on one and on all threads, the
 * scalar loops a JVM without the Vector API falls back to (all threads), the naive grid-materialising path, and
 * Lucene's own late-interaction scorer ({@code SUM_MAX_SIM} with {@code DOT_PRODUCT}, one thread, fp32 only: it takes
 * {@code float[][]}).
 * Run: {@code java -jar maxsim4j-bench/target/maxsim4j-benchmarks.jar} (see docs/benchmarks.md).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
    "-Xmx6g"})
@State(Scope.Benchmark)
public class MaxSimBenchmark {

  @Param({"1x1000x32x300x128", "1x1000x32x1024x128", "32x32x32x300x128"})
  public String shape;

  @Param({"fp32", "bf16"})
  public String docs;

  private BenchData data;
  private TokenBatch q;
  private TokenBatch d;
  private MaxSim oneThread;
  private MaxSim allThreads;
  private MaxSim scalarAllThreads;
  private float[][][] luceneQueries;
  private float[][][] luceneDocs;

  @Setup(Level.Trial)
  public void setUp() {
    data = new BenchData(shape, 42);
    q = data.queryBatch();
    d = data.documentBatch(docs.equals("bf16") ? DType.BFLOAT16 : DType.FLOAT32);
    oneThread = MaxSim.builder().backend("vector").threads(1).build();
    allThreads = MaxSim.builder().backend("vector").threads(Runtime.getRuntime().availableProcessors()).build();
    scalarAllThreads = MaxSim.builder().backend("scalar").threads(Runtime.getRuntime().availableProcessors()).build();
    luceneQueries = BenchData.nested(data.queries, data.nq, data.lq, data.dim);
    luceneDocs = BenchData.nested(data.documents, data.nd, data.ld, data.dim);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    oneThread.close();
    allThreads.close();
    scalarAllThreads.close();
  }

  @Benchmark
  public float[][] fusedOneThread() {
    return oneThread.scores(q, d);
  }

  @Benchmark
  public float[][] fusedAllThreads() {
    return allThreads.scores(q, d);
  }

  @Benchmark
  public float[][] scalarFallbackAllThreads() {
    return scalarAllThreads.scores(q, d);
  }

  @Benchmark
  public float[][] naiveGridAllThreads() {
    return NaiveMaxSim.scores(q, d, Runtime.getRuntime().availableProcessors());
  }

  @Benchmark
  public void luceneSumMaxSimOneThread(Blackhole bh) {
    if (!docs.equals("fp32")) {
      return; // Lucene's scorer takes float[][] only; its figure is the fp32 row
    }
    for (float[][] query : luceneQueries) {
      for (float[][] doc : luceneDocs) {
        bh.consume(LateInteractionFloatValuesSource.ScoreFunction.SUM_MAX_SIM.compare(query, doc,
            VectorSimilarityFunction.DOT_PRODUCT));
      }
    }
  }
}
