package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.maxsim4j.MaxSim;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Spark's {@code local-cluster} mode: a master and two workers in this JVM, each worker starting an executor JVM
 * of its own, as a standalone cluster does. Spark launches executors from a Spark distribution's {@code jars/};
 * in test mode ({@code spark.testing}) it gives them the driver's class path instead, so the Maven jars suffice
 * with a stand-in Spark home that holds the two folders its launcher checks for.
 */
class MultiJvmTest {
  @TempDir
  static Path sparkHome;
  private static SparkSession spark;

  @BeforeAll
  static void start() throws IOException {
    Files.createDirectories(sparkHome.resolve("jars"));
    Files.createDirectories(sparkHome.resolve("launcher/target/scala-2.13"));
    System.setProperty("spark.testing", "true");
    System.setProperty("spark.test.home", sparkHome.toString());
    spark = SparkSession.builder()
        .master("local-cluster[2,1,1024]")
        .appName("maxsim4j-spark-multi-jvm")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.executor.cores", "1")
        .config("spark.sql.warehouse.dir", System.getProperty("java.io.tmpdir") + "/maxsim4j-spark-warehouse")
        .getOrCreate();
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
    System.clearProperty("spark.testing");
    System.clearProperty("spark.test.home");
  }

  @Test
  void twoExecutorJvmsRankAsOneCall() {
    Corpus queries = Corpus.random("q", 4, 5, 16, 41, 0);
    Corpus corpus = Corpus.random("d", 80, 8, 16, 42, 11);
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    // on a busy host the second executor registers late, and the first would take every task meanwhile; two executor
    // JVMs starting on a loaded 2-core host can take more than a minute
    long deadline = System.nanoTime() + 300_000_000_000L;
    while (spark.sparkContext().statusTracker().getExecutorInfos().length < 3 && System.nanoTime() < deadline) {
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    Dataset<Row> documents = spark.createDataFrame(jsc.parallelize(corpus.rows(), 6), Corpus.ARRAYS);
    // each task holds its executor's one core a while, so that a busy host's scheduler cannot give one executor
    // all six before the other takes any
    Set<Long> pids = new TreeSet<>(jsc.parallelize(List.of(1, 2, 3, 4, 5, 6), 6).map(x -> {
      Thread.sleep(500);
      return ProcessHandle.current().pid();
    }).collect());
    // spark.executor.cores = 1, so each executor's MaxSim takes one thread, not one per core of the host
    List<Integer> threads = jsc.parallelize(List.of(1, 2, 3, 4), 4).map(x -> ExecutorMaxSim.get().threads())
        .collect();
    assertEquals(List.of(1, 1, 1, 1), threads);
    assertFalse(pids.contains(ProcessHandle.current().pid()), "a task ran in the driver");
    List<Row> rows = SparkMaxSim.topK(EmbeddingTable.of(spark.createDataFrame(queries.rows(), Corpus.ARRAYS))
        .withMask("mask"), EmbeddingTable.of(documents).withMask("mask"), 9).collectAsList();
    try (MaxSim reference = MaxSim.create()) {
      SparkTopKTest.assertMatches(reference.topK(queries.batch(), corpus.batch(), 9), rows, queries, corpus);
    }
    assertEquals(2, pids.size(), "executor JVMs " + pids);
  }
}
