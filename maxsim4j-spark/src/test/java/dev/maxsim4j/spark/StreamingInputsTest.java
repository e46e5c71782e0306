package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;

/**
 * The scorers read batch Datasets: a streaming one is refused by name, with the way a stream is scored (each
 * micro-batch through foreachBatch), rather than failing in Spark's planner with advice about writeStream().start().
 */
class StreamingInputsTest extends WithLocalSpark {
  @Test
  void aStreamingDatasetIsRefusedNamingTheArgument() {
    EmbeddingTable table = EmbeddingTable.of(spark.sql("SELECT 1L AS id, array(array(1f, 0f)) AS tokens"));
    Dataset<Row> stream = spark.readStream().format("rate").load().selectExpr("value AS query_id", "value AS doc_id",
        "array(value) AS candidates");
    String tail = " is a streaming Dataset; expected a batch one (score a stream's micro-batches with"
        + " writeStream().foreachBatch)";
    assertEquals("pairs" + tail, assertThrows(IllegalArgumentException.class,
        () -> SparkMaxSim.scorePairs(stream, table, table)).getMessage());
    assertEquals("pairs" + tail, assertThrows(IllegalArgumentException.class,
        () -> SparkMaxSim.scorePairsByScan(stream, table, table)).getMessage());
    assertEquals("rows" + tail, assertThrows(IllegalArgumentException.class,
        () -> SparkMaxSim.scoreCandidates(stream, table, table)).getMessage());
    EmbeddingTable streamed = EmbeddingTable.of(spark.readStream().format("rate").load()
        .selectExpr("value AS id", "array(array(1f, 0f)) AS tokens"));
    assertEquals("corpus" + tail, assertThrows(IllegalArgumentException.class,
        () -> SparkMaxSim.topK(table, streamed, 1)).getMessage());
  }
}
