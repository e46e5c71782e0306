package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;

class HostileIdTypeTest extends WithLocalSpark {
  /** A table (id, tokens) of three rows whose ids are {@code id}, an expression of {@code id} 0, 1, 2. */
  private static Dataset<Row> table(String id) {
    return spark.sql("SELECT " + id + " AS id, array(array(cast(id AS float), 1f)) AS tokens FROM range(3)");
  }

  @Test
  void idsThatSparkCannotCompareAreRefusedWhereTheyAreNamedNotInAJoinOfInternalColumns() {
    for (String[] c : new String[][] {{"make_interval(0, 0, 0, cast(id AS int))", "interval"},
        {"parse_json(cast(id AS string))", "variant"}}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> EmbeddingTable.of(table(c[0])));
      assertEquals("id column 'id' is " + c[1] + "; expected a single value per row such as a string or a number",
          e.getMessage());
      EmbeddingTable ints = EmbeddingTable.of(table("id"));
      Dataset<Row> pairs = table(c[0]).selectExpr("id AS query_id", "1 AS doc_id");
      e = assertThrows(IllegalArgumentException.class, () -> SparkMaxSim.scorePairs(pairs, ints, ints));
      assertEquals("pairs column 'query_id' is " + c[1] + "; expected ids, single values such as strings or"
          + " numbers", e.getMessage());
      e = assertThrows(IllegalArgumentException.class, () -> SparkMaxSim.scorePairsByScan(pairs, ints, ints));
      assertEquals("pairs column 'query_id' is " + c[1] + "; expected ids, single values such as strings or"
          + " numbers", e.getMessage());
      Dataset<Row> lists = table(c[0]).selectExpr("1 AS query_id", "array(id) AS candidates");
      e = assertThrows(IllegalArgumentException.class, () -> SparkMaxSim.scoreCandidates(lists, ints, ints));
      assertEquals("candidates column 'candidates' is array<" + c[1] + ">; expected an array of document ids,"
          + " single values such as strings or numbers", e.getMessage());
    }
  }

  @Test
  void anIdColumnOfTheVoidTypeIsRefusedWhenTheTableIsMade() {
    // Spark orders the void type, but its every id is null and would fail only once a job reads it
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> EmbeddingTable.of(table("NULL")));
    assertEquals("id column 'id' is void; expected a single value per row such as a string or a number",
        e.getMessage());
  }

  /**
   * Strings under a collation that matches other text as equal (UTF8_LCASE, a _CI or _RTRIM one) are refused as
   * ids: Spark's joins matched 'a' to 'A' while the scorers' lookups by exact text did not, so topK listed one id
   * twice in a query's top k and the scan scorer refused a pair the join scorer scored.
   */
  @Test
  void stringIdsUnderACollationThatMatchesOtherTextAreRefused() {
    EmbeddingTable ints = EmbeddingTable.of(table("id"));
    for (String collation : new String[] {"UTF8_LCASE", "UNICODE_CI", "UTF8_BINARY_RTRIM"}) {
      String type = "string collate " + collation;
      String note = " (collation " + collation + " matches ids of other text as one; expected ids compared by"
          + " their bytes: collate(column, 'UTF8_BINARY'))";
      Dataset<Row> collated = table("cast(id AS string) COLLATE " + collation);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EmbeddingTable.of(collated));
      assertEquals("id column 'id' is " + type + "; expected a single value per row such as a string or a number"
          + note, e.getMessage());
      Dataset<Row> pairs = collated.selectExpr("id AS query_id", "1 AS doc_id");
      e = assertThrows(IllegalArgumentException.class, () -> SparkMaxSim.scorePairs(pairs, ints, ints));
      assertEquals("pairs column 'query_id' is " + type + "; expected ids, single values such as strings or"
          + " numbers" + note, e.getMessage());
      e = assertThrows(IllegalArgumentException.class, () -> SparkMaxSim.scorePairsByScan(pairs, ints, ints));
      assertEquals("pairs column 'query_id' is " + type + "; expected ids, single values such as strings or"
          + " numbers" + note, e.getMessage());
      Dataset<Row> lists = collated.selectExpr("1 AS query_id", "array(id) AS candidates");
      e = assertThrows(IllegalArgumentException.class, () -> SparkMaxSim.scoreCandidates(lists, ints, ints));
      assertEquals("candidates column 'candidates' is array<" + type + ">; expected an array of document ids,"
          + " single values such as strings or numbers" + note, e.getMessage());
    }
    // the way out named in the message: the same ids compared by their bytes are taken
    Dataset<Row> binary = table("cast(id AS string) COLLATE UTF8_LCASE")
        .selectExpr("collate(id, 'UTF8_BINARY') AS id", "tokens");
    assertEquals(3, SparkMaxSim.topK(EmbeddingTable.of(binary), EmbeddingTable.of(binary), 1).count());
  }
}
