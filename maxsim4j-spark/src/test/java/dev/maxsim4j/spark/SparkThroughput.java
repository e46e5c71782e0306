package dev.maxsim4j.spark;

import static org.apache.spark.sql.functions.col;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.TopK;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;
import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.StorageLevel;

/**
 * Throughput of Spark batch scoring and exact top-k against one {@code MaxSim} call on the same bf16 data, in
 * one JVM ({@code local[N]}, the executor's MaxSim on {@code N} threads). Not a test: run it as
 * docs/scaling.md says. Arguments: {@code cores docs queries pairQueries candidates partitions repeats
 * [warmup]}: each comparison runs both sides {@code warmup} times untimed (default 2: the Spark side's code, the
 * scan of its cache and the chunked calls, is compiled only once it runs), then {@code repeats} timed rounds by
 * turns, each printed, and reports the best of each side.
 */
final class SparkThroughput {
  private static final int LENGTH = 32;
  private static final int DIM = 128;
  private static final int K = 100;
  private static int warmup;

  private SparkThroughput() {}

  public static void main(String[] args) {
    int cores = Integer.parseInt(args[0]);
    int docs = Integer.parseInt(args[1]);
    int queries = Integer.parseInt(args[2]);
    int pairQueries = Integer.parseInt(args[3]);
    int candidates = Integer.parseInt(args[4]);
    int partitions = Integer.parseInt(args[5]);
    int repeats = Integer.parseInt(args[6]);
    warmup = args.length > 7 ? Integer.parseInt(args[7]) : 2;
    System.setProperty("maxsim4j.threads", Integer.toString(cores));
    SparkSession spark = SparkSession.builder().master("local[" + cores + "]").appName("maxsim4j-spark-throughput")
        .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1").config("spark.sql.shuffle.partitions", partitions)
        .getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
    System.out.printf("maxsim4j-spark throughput: local[%d], MaxSim on %d threads (%s), %d documents and %d"
        + " queries of %d x %d bf16 tokens, k = %d, %d corpus partitions, best of %d after %d untimed%n", cores,
        cores, ExecutorMaxSim.get().backendName(), docs, queries, LENGTH, DIM, K, partitions, repeats, warmup);

    Dataset<Row> corpus = cells(spark, docs, partitions, 1).persist(StorageLevel.MEMORY_ONLY());
    Dataset<Row> querySet = cells(spark, queries, 1, 2).persist(StorageLevel.MEMORY_ONLY());
    System.out.println("corpus cached: " + corpus.count() + " rows");
    querySet.count();
    TokenBatch d = batch(corpus);
    TokenBatch q = batch(querySet);
    MaxSim maxSim = ExecutorMaxSim.get();

    EmbeddingTable qt = EmbeddingTable.of(querySet);
    EmbeddingTable dt = EmbeddingTable.of(corpus);
    double[] topK = interleaved(repeats, () -> maxSim.topK(q, d, K),
        () -> SparkMaxSim.topK(qt, dt, K).collectAsList());
    report("top-k", (double) queries * docs, topK[0], topK[1]);
    TopK want = maxSim.topK(q, d, K);
    List<Row> got = SparkMaxSim.topK(qt, dt, K).collectAsList();
    System.out.println("top-k check: " + sameIds(want, got, querySet, corpus) + " of " + got.size()
        + " (query, rank) entries name the same document as the single call");

    // pairs: pairQueries queries x candidates random documents each, the tokens joined in from the tables
    Dataset<Row> pairQuerySet = cells(spark, pairQueries, 2, 3).persist(StorageLevel.MEMORY_ONLY());
    pairQuerySet.count();
    Random r = new Random(4);
    List<Row> pairs = new ArrayList<>();
    int[] picked = new int[pairQueries * candidates];
    for (int i = 0; i < picked.length; i++) {
      picked[i] = r.nextInt(docs);
      pairs.add(RowFactory.create((long) (i / candidates), (long) picked[i]));
    }
    StructType schema = new StructType().add("query_id", DataTypes.LongType).add("doc_id", DataTypes.LongType);
    Dataset<Row> pairRows = spark.createDataFrame(pairs, schema).repartition(partitions)
        .persist(StorageLevel.MEMORY_ONLY());
    pairRows.count();
    TokenBatch pq = batch(pairQuerySet);
    TokenBatch candidatesBatch = gather(d, picked);
    EmbeddingTable pqt = EmbeddingTable.of(pairQuerySet);
    // the corpus as generated (the join shuffles its tokens), then hash-partitioned by id once and cached, the
    // layout a corpus scored by many jobs keeps (the join then moves only the pairs)
    Dataset<Row> byId = corpus.repartition(partitions, col("id")).persist(StorageLevel.MEMORY_ONLY());
    byId.count();
    for (EmbeddingTable table : List.of(dt, EmbeddingTable.of(byId))) {
      String layout = table == dt ? "corpus as generated" : "corpus partitioned by id";
      double[] t = interleaved(repeats, () -> maxSim.candidates(pq, candidatesBatch, candidates),
          () -> noop(SparkMaxSim.scorePairs(pairRows, pqt, table)));
      double joinOnly = best(repeats, () -> noop(PairScoring.joined(pairRows, "query_id", "doc_id", pqt, table)));
      report("pairs, " + layout, (double) pairQueries * candidates, t[0], t[1]);
      System.out.printf("pairs, %s: the joins alone (tokens brought to the pairs, nothing scored) %.3f s%n",
          layout, joinOnly);
    }
    double[] scan = interleaved(repeats, () -> maxSim.candidates(pq, candidatesBatch, candidates),
        () -> noop(SparkMaxSim.scorePairsByScan(pairRows, pqt, dt)));
    report("pairs by scan, corpus as generated", (double) pairQueries * candidates, scan[0], scan[1]);
    spark.stop();
  }

  /** {@code n} rows (id, bf16 cell) with uniform values in [-1, 1), generated in Spark from the id. */
  private static Dataset<Row> cells(SparkSession spark, int n, int partitions, long seed) {
    StructType schema = new StructType().add("id", DataTypes.LongType).add("tokens", DataTypes.BinaryType);
    return spark.range(0, n, 1, partitions).map((MapFunction<Long, Row>) id -> {
      Random r = new Random(seed * 1_000_003L + id);
      float[][] t = new float[LENGTH][DIM];
      for (float[] token : t) {
        for (int k = 0; k < DIM; k++) {
          token[k] = r.nextFloat() * 2 - 1;
        }
      }
      return RowFactory.create(id, TokenCodec.encode(t, DType.BFLOAT16));
    }, org.apache.spark.sql.Encoders.row(schema));
  }

  /** The rows collected in Dataset order as one packed batch, as a single process would hold them. */
  private static TokenBatch batch(Dataset<Row> rows) {
    TokenRows packed = new TokenRows("document");
    for (Row row : rows.collectAsList()) {
      packed.add(row.get(0), row.get(1), null);
    }
    return packed.pack(DIM).toBatch();
  }

  /** Documents {@code rows} of {@code d} (a packed bf16 batch of equal lengths) as one batch. */
  private static TokenBatch gather(TokenBatch d, int[] rows) {
    short[] bits = new short[rows.length * LENGTH * DIM];
    for (int i = 0; i < rows.length; i++) {
      for (int t = 0; t < LENGTH; t++) {
        for (int k = 0; k < DIM; k++) {
          bits[(i * LENGTH + t) * DIM + k] = DType.BFLOAT16.narrow(d.get(rows[i], t, k));
        }
      }
    }
    return TokenBatch.ofHalfs(DType.BFLOAT16, bits, rows.length, LENGTH, DIM);
  }

  private static Object noop(Dataset<Row> rows) {
    rows.write().format("noop").mode("overwrite").save();
    return null;
  }

  /** Best times of {@code single} and {@code spark}, run by turns so that a busy machine slows both alike. */
  private static double[] interleaved(int repeats, Supplier<Object> single, Supplier<Object> spark) {
    for (int i = 0; i < warmup; i++) {
      single.get();
      spark.get();
    }
    double[] best = {Double.MAX_VALUE, Double.MAX_VALUE};
    StringBuilder rounds = new StringBuilder("  rounds (one call / Spark, s):");
    for (int i = 0; i < repeats; i++) {
      double a = best(1, single);
      double b = best(1, spark);
      rounds.append(String.format(" %.3f/%.3f", a, b));
      best[0] = Math.min(best[0], a);
      best[1] = Math.min(best[1], b);
    }
    System.out.println(rounds);
    return best;
  }

  private static double best(int repeats, Supplier<Object> work) {
    double best = Double.MAX_VALUE;
    for (int i = 0; i < repeats; i++) {
      long start = System.nanoTime();
      work.get();
      best = Math.min(best, (System.nanoTime() - start) / 1e9);
    }
    return best;
  }

  private static void report(String what, double pairs, double single, double spark) {
    System.out.printf("%s: one MaxSim call %.3f s (%.0f pairs/s), Spark %.3f s (%.0f pairs/s), Spark overhead"
        + " %+.1f%%%n", what, single, pairs / single, spark, pairs / spark, 100 * (spark / single - 1));
  }

  private static long sameIds(TopK want, List<Row> got, Dataset<Row> queries, Dataset<Row> corpus) {
    List<Long> queryIds = queries.select("id").as(Encoders.LONG()).collectAsList();
    List<Long> docIds = corpus.select(col("id")).as(Encoders.LONG()).collectAsList();
    return got.stream().filter(row -> {
      int q = queryIds.indexOf(row.getLong(0));
      int rank = row.getInt(2) - 1;
      return rank < want.indices()[q].length && docIds.get(want.indices()[q][rank]).equals(row.getLong(1));
    }).count();
  }
}
