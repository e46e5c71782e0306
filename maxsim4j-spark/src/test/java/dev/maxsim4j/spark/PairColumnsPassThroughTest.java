package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.junit.jupiter.api.Test;

/**
 * The pair scorers hand a caller's columns back as they were, where a Row would change them (a string that is not
 * UTF-8 read as U+FFFD, a date of the Julian calendar's gap read back as 1582-10-15: the doc_id beside a score named
 * another document; an interval of days as one of days to seconds) and with the same schema (nullability, struct
 * fields that share a name), and ids that are not UTF-8 are refused rather than merged.
 */
class PairColumnsPassThroughTest extends WithLocalSpark {
  /** Pairs of query 'q' with three dates as documents, and columns of values a Row would change, nested too. */
  private static final String PAIRS = "SELECT 'q' AS query_id, id AS doc_id, id AS asked_on,"
      + " cast(X'FF41' AS string) AS note, TIMESTAMP'1582-10-09 10:00:00' AS ts,"
      + " named_struct('day', id, 'text', cast(X'FE' AS string)) AS nested,"
      + " array(cast(X'C3' AS string), NULL) AS texts, map(cast(X'80' AS string), id) AS by_text,"
      + " CAST(NULL AS struct<day: date>) AS none, 7 AS plain, named_struct('a', 'x', 'A', 'y', 'a', id) AS twice,"
      + " INTERVAL '3' DAY AS days, array(named_struct('s', 'x')) AS inner"
      + " FROM VALUES (DATE'1582-10-10'), (DATE'1000-03-01'), (DATE'2020-01-01') AS t(id)";

  /** Each column of {@link #PAIRS} as its bytes, days and microseconds show it, and the score where there is one. */
  private static final String[] CANONICAL = {"unix_date(doc_id)", "unix_date(asked_on)", "hex(cast(note AS binary))",
      "unix_micros(ts)", "unix_date(nested.day)", "hex(cast(nested.text AS binary))",
      "transform(texts, x -> hex(cast(x AS binary)))", "transform(map_keys(by_text), x -> hex(cast(x AS binary)))",
      "transform(map_values(by_text), x -> unix_date(x))", "none IS NULL", "plain", "to_json(twice)",
      "cast(days AS string)", "inner[0].s"};

  private static List<String> canonical(Dataset<Row> rows, String score) {
    String[] columns = Arrays.copyOf(CANONICAL, CANONICAL.length + 1);
    columns[CANONICAL.length] = score;
    return rows.selectExpr(columns).collectAsList().stream().map(Row::toString).sorted().toList();
  }

  @Test
  void everyPairScorerHandsThePairsColumnsBackAsTheyWere() {
    EmbeddingTable corpus = EmbeddingTable.of(spark.sql("SELECT * FROM VALUES (DATE'1582-10-10', array(array(1f,"
        + " 0f))), (DATE'1000-03-01', array(array(2f, 0f))), (DATE'2020-01-01', array(array(3f, 0f))) AS t(id,"
        + " tokens)"));
    EmbeddingTable queries = EmbeddingTable.of(spark.sql("SELECT 'q' AS id, array(array(1f, 0f)) AS tokens"));
    Dataset<Row> pairs = spark.sql(PAIRS).withMetadata("plain", Metadata.fromJson("{\"unit\": \"apples\"}"));
    List<String> want = canonical(pairs, "CASE unix_date(doc_id) WHEN unix_date(DATE'1582-10-10') THEN 1f"
        + " WHEN unix_date(DATE'1000-03-01') THEN 2f ELSE 3f END");
    Dataset<Row> joined = SparkMaxSim.scorePairs(pairs, queries, corpus);
    Dataset<Row> scanned = SparkMaxSim.scorePairsByScan(pairs, queries, corpus);
    Dataset<Row> listed = SparkMaxSim.scoreCandidates(pairs.selectExpr("*", "array(doc_id) AS candidates"), queries,
        corpus);
    assertEquals(want, canonical(joined, "score"), "scorePairs");
    assertEquals(want, canonical(scanned, "score"), "scorePairsByScan");
    assertEquals(want, canonical(listed, "scores[0]"), "scoreCandidates");
    for (Dataset<Row> out : List.of(joined, scanned)) {
      assertEquals(pairs.schema().add("score", "float", false), out.schema());
    }
    // the candidates' lists are gathered back by an aggregation, which makes every column nullable
    StructField[] given = pairs.selectExpr("*", "array(doc_id) AS candidates").schema().fields();
    for (int c = 0; c < given.length; c++) {
      assertEquals(given[c].copy(given[c].name(), given[c].dataType(), true, given[c].metadata()),
          listed.schema().fields()[c], given[c].name());
    }
  }

  @Test
  void stringIdsThatAreNotUtf8AreRefusedNamingTheirBytes() {
    // two ids Spark tells apart, which a Row reads as one: U+FFFD
    Dataset<Row> malformed = spark.sql("SELECT * FROM VALUES (cast(X'FF' AS string), array(array(1f, 0f))),"
        + " (cast(X'FE' AS string), array(array(2f, 0f))) AS t(id, tokens)");
    EmbeddingTable bad = EmbeddingTable.of(malformed);
    EmbeddingTable queries = EmbeddingTable.of(spark.sql("SELECT 'q' AS id, array(array(1f, 0f)) AS tokens"));
    Dataset<Row> pairs = malformed.selectExpr("'q' AS query_id", "id AS doc_id");
    String tail = ") is not UTF-8; expected ids of text, which Spark's strings hold as UTF-8 (a cast from binary can"
        + " make one that is not: make_valid_utf8 replaces what is not, or compare such ids as numbers or hex text)";
    assertRefused("document id (1 byte: f", tail, () -> SparkMaxSim.topK(queries, bad, 5).collectAsList());
    assertRefused("a pair's or candidate's document id (1 byte: f", tail,
        () -> SparkMaxSim.scorePairs(pairs, queries, bad).collectAsList());
    assertRefused("a pair's document id (1 byte: f", tail,
        () -> SparkMaxSim.scorePairsByScan(pairs, queries, bad).collectAsList());
    assertRefused("query id (1 byte: f", tail, () -> SparkMaxSim.topK(bad, queries, 1).collectAsList());
    // the way out the message names
    Dataset<Row> repaired = malformed.selectExpr("make_valid_utf8(id) AS id", "tokens").limit(1);
    assertEquals(1, SparkMaxSim.topK(queries, EmbeddingTable.of(repaired), 5).count());
  }

  /** {@code call} fails, on the driver or in a task, with an IllegalArgumentException of that message. */
  private static void assertRefused(String start, String end, org.junit.jupiter.api.function.Executable call) {
    Throwable cause = assertThrows(Exception.class, call);
    while (cause != null && !(cause instanceof IllegalArgumentException)) {
      cause = cause.getCause();
    }
    assertTrue(cause != null, "no IllegalArgumentException");
    String message = cause.getMessage();
    assertTrue(message.startsWith(start) && message.endsWith(end), message);
  }
}
