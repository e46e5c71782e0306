package dev.maxsim4j.bench;

import java.util.concurrent.TimeUnit;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.LateInteractionFloatValuesSource;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Lucene's late-interaction scorer in a JVM <em>without</em> {@code jdk.incubator.vector}: Lucene's
 * default (scalar) vectorization provider, which is what an application gets unless it adds the module.
 * {@link MaxSimBenchmark} measures Lucene with its Panama provider.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xmx6g"})
@State(Scope.Benchmark)
public class LuceneDefaultProviderBenchmark {

  @Param({"1x1000x32x300x128", "32x32x32x300x128"})
  public String shape;

  private float[][][] queries;
  private float[][][] docs;

  @Setup
  public void setUp() {
    BenchData data = new BenchData(shape, 42);
    queries = BenchData.nested(data.queries, data.nq, data.lq, data.dim);
    docs = BenchData.nested(data.documents, data.nd, data.ld, data.dim);
  }

  @Benchmark
  public void luceneSumMaxSimOneThread(Blackhole bh) {
    for (float[][] query : queries) {
      for (float[][] doc : docs) {
        bh.consume(LateInteractionFloatValuesSource.ScoreFunction.SUM_MAX_SIM.compare(query, doc,
            VectorSimilarityFunction.DOT_PRODUCT));
      }
    }
  }
}
