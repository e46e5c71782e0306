package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;

/**
 * A reviewer's finding: the candidate scorer declared the rows' schema again over its result's internal rows, and
 * taking them made Spark's adaptive execution run every stage, the scoring among them, when scoreCandidates was
 * called: a candidate missing from the corpus failed the call rather than the action, as no pair scorer does.
 */
class HostileCandidateCallLazinessTest extends WithLocalSpark {
  @Test
  void aMissingCandidateFailsTheActionNotTheCall() {
    EmbeddingTable corpus = EmbeddingTable.of(spark.sql("SELECT 'd1' AS id, array(array(1f, 0f)) AS tokens"));
    EmbeddingTable queries = EmbeddingTable.of(spark.sql("SELECT 'q' AS id, array(array(1f, 2f)) AS tokens"));
    Dataset<Row> rows = spark.sql("SELECT 'q' AS query_id, array('d1', 'nope') AS candidates");
    Dataset<Row> pairs = assertDoesNotThrow(() -> SparkMaxSim.scorePairs(
        rows.selectExpr("query_id", "candidates[1] AS doc_id"), queries, corpus));
    assertThrows(Exception.class, pairs::collectAsList);
    Dataset<Row> scored = assertDoesNotThrow(() -> SparkMaxSim.scoreCandidates(rows, queries, corpus));
    assertThrows(Exception.class, scored::collectAsList);
  }
}
