package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.MaxSim;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Kryo, the serializer Spark's tuning guide recommends, carries the broadcast queries and the shuffled top k. */
class HostileKryoTest {
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = LocalSpark.builder()
        .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
        .getOrCreate();
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  @Test
  void topKAndScannedPairsRunUnderKryoAsUnderJavaSerialization() {
    assertEquals("org.apache.spark.serializer.KryoSerializer", spark.conf().get("spark.serializer"));
    topKAndScannedPairsMatchTheReference(spark);
  }

  /** Top-k and scanned pairs on {@code spark} give the reference's results (shared with the registration test). */
  static void topKAndScannedPairsMatchTheReference(SparkSession spark) {
    Corpus queries = Corpus.random("q", 3, 4, 8, 11, 0);
    Corpus corpus = Corpus.random("d", 20, 5, 8, 7, 6);
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    EmbeddingTable q = EmbeddingTable.of(spark.createDataFrame(queries.rows(), Corpus.ARRAYS)).withMask("mask");
    EmbeddingTable d = EmbeddingTable.of(spark.createDataFrame(jsc.parallelize(corpus.rows(), 3), Corpus.ARRAYS))
        .withMask("mask");
    try (MaxSim reference = MaxSim.create()) {
      SparkTopKTest.assertMatches(reference.topK(queries.batch(), corpus.batch(), 4),
          SparkMaxSim.topK(q, d, 4).collectAsList(), queries, corpus);
      float[][] scores = reference.scores(queries.batch(), corpus.batch());
      List<Row> pairs = new ArrayList<>();
      for (String query : queries.ids()) {
        for (String document : corpus.ids()) {
          pairs.add(RowFactory.create(query, document));
        }
      }
      Dataset<Row> table = spark.createDataFrame(pairs, new StructType().add("query_id", DataTypes.StringType)
          .add("doc_id", DataTypes.StringType));
      List<Row> scored = new ArrayList<>(SparkMaxSim.scorePairsByScan(table, q, d).collectAsList());
      scored.sort(Comparator.comparing((Row r) -> r.getString(0)).thenComparing(r -> r.getString(1)));
      assertEquals(pairs.size(), scored.size());
      for (Row r : scored) {
        float want = scores[queries.ids().indexOf(r.getString(0))][corpus.ids().indexOf(r.getString(1))];
        assertEquals(want, r.getFloat(2), 1e-5f * Math.max(1, Math.abs(want)), r.toString());
      }
    }
  }
}
