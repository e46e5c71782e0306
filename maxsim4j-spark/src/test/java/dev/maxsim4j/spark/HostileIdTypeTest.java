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
}
