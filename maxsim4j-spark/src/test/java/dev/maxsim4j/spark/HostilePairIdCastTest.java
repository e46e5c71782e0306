package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import java.util.List;
import org.apache.spark.SparkException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/** A pair id that the cast to the table's id type changes (7.9 to 7) names no row, rather than another one. */
class HostilePairIdCastTest extends WithLocalSpark {
  private static final StructType INT_IDS = new StructType().add("id", DataTypes.IntegerType, false)
      .add("tokens", TokenColumns.ARRAYS, false);
  private static final StructType DOUBLE_PAIRS = new StructType().add("query_id", DataTypes.IntegerType)
      .add("doc_id", DataTypes.DoubleType);

  private static EmbeddingTable ints(int id, float[][] tokens) {
    return EmbeddingTable.of(spark.createDataFrame(List.of(RowFactory.create(id, tokens)), INT_IDS));
  }

  @Test
  void aFractionalDocumentIdIsNotScoredAsTheIntegerItTruncatesTo() {
    EmbeddingTable queries = ints(1, new float[][] {{1, 0}});
    EmbeddingTable corpus = ints(7, new float[][] {{0.5f, 0}});
    for (boolean ansi : new boolean[] {true, false}) {
      spark.conf().set("spark.sql.ansi.enabled", String.valueOf(ansi));
      try {
        Dataset<Row> pairs = spark.createDataFrame(List.of(RowFactory.create(1, 7.9)), DOUBLE_PAIRS);
        for (String cause : List.of(
            SparkTopKTest.causeOf(assertThrows(SparkException.class,
                () -> SparkMaxSim.scorePairs(pairs, queries, corpus).collectAsList())),
            SparkTopKTest.causeOf(assertThrows(SparkException.class,
                () -> SparkMaxSim.scorePairsByScan(pairs, queries, corpus).collectAsList())))) {
          assertEquals(true, cause.contains("7.9"), cause);
        }
        // 7.0 is document 7 exactly; beside it, 7.9 must still name no document on the scan path
        Dataset<Row> both = spark.createDataFrame(List.of(RowFactory.create(1, 7.0), RowFactory.create(1, 7.9)),
            DOUBLE_PAIRS);
        String cause = SparkTopKTest.causeOf(assertThrows(SparkException.class,
            () -> SparkMaxSim.scorePairsByScan(both, queries, corpus).collectAsList()));
        assertEquals(true, cause.contains("7.9"), cause);
        assertEquals(0.5f, SparkMaxSim.scorePairs(spark.createDataFrame(List.of(RowFactory.create(1, 7.0)),
            DOUBLE_PAIRS), queries, corpus).collectAsList().get(0).getFloat(2));
        Dataset<Row> candidates = spark.createDataFrame(List.of(RowFactory.create(1, Arrays.asList(7.9))),
            new StructType().add("query_id", DataTypes.IntegerType)
                .add("candidates", DataTypes.createArrayType(DataTypes.DoubleType)));
        cause = SparkTopKTest.causeOf(assertThrows(SparkException.class,
            () -> SparkMaxSim.scoreCandidates(candidates, queries, corpus).collectAsList()));
        assertEquals(true, cause.contains("7.9"), cause);
      } finally {
        spark.conf().unset("spark.sql.ansi.enabled");
      }
    }
  }

  /**
   * A string pair id that is no int ("abc") names no document of an int table, in ANSI mode too, where a plain
   * cast fails the job with Spark's CAST_INVALID_INPUT; the scan path names the missing document, not the query
   * that the string id "1" names.
   */
  @Test
  void aPairIdThatCannotBeCastNamesNoRowInAnsiModeToo() {
    EmbeddingTable table = EmbeddingTable.of(spark.createDataFrame(List.of(RowFactory.create(1,
        new float[][] {{1, 0}}), RowFactory.create(7, new float[][] {{0.5f, 0}})), INT_IDS));
    StructType strings = new StructType().add("query_id", DataTypes.StringType).add("doc_id", DataTypes.StringType);
    for (boolean ansi : new boolean[] {true, false}) {
      spark.conf().set("spark.sql.ansi.enabled", String.valueOf(ansi));
      try {
        Dataset<Row> pairs = spark.createDataFrame(List.of(RowFactory.create("1", "7"),
            RowFactory.create("1", "abc")), strings);
        String joined = SparkTopKTest.causeOf(assertThrows(SparkException.class,
            () -> SparkMaxSim.scorePairs(pairs, table, table).collectAsList()));
        assertEquals(true, joined.contains("document 'abc'"), joined);
        String scanned = SparkTopKTest.causeOf(assertThrows(SparkException.class,
            () -> SparkMaxSim.scorePairsByScan(pairs, table, table).collectAsList()));
        assertEquals("document 'abc' of a pair with query '1' is not in the corpus", scanned);
        Dataset<Row> candidates = spark.createDataFrame(List.of(RowFactory.create("1", Arrays.asList("7", "abc"))),
            new StructType().add("query_id", DataTypes.StringType)
                .add("candidates", DataTypes.createArrayType(DataTypes.StringType)));
        String listed = SparkTopKTest.causeOf(assertThrows(SparkException.class,
            () -> SparkMaxSim.scoreCandidates(candidates, table, table).collectAsList()));
        assertEquals(true, listed.contains("document 'abc'"), listed);
        assertEquals(0.5f, SparkMaxSim.scorePairsByScan(pairs.limit(1), table, table).collectAsList().get(0)
            .getFloat(2));
      } finally {
        spark.conf().unset("spark.sql.ansi.enabled");
      }
    }
  }

  /** Id columns of arrays, maps, structs or bytes cannot name a row: refused on the driver, naming the column. */
  @Test
  void idColumnsThatHoldNoSingleValueAreRefusedNamingThem() {
    EmbeddingTable table = ints(1, new float[][] {{1, 0}});
    Dataset<Row> pairs = spark.createDataFrame(List.of(RowFactory.create(Arrays.asList("1"), 1)),
        new StructType().add("query_id", DataTypes.createArrayType(DataTypes.StringType))
            .add("doc_id", DataTypes.IntegerType));
    for (org.junit.jupiter.api.function.Executable call : List.<org.junit.jupiter.api.function.Executable>of(
        () -> SparkMaxSim.scorePairs(pairs, table, table),
        () -> SparkMaxSim.scorePairsByScan(pairs, table, table))) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
      assertEquals("pairs column 'query_id' is array<string>; expected ids, single values such as strings or"
          + " numbers", e.getMessage());
    }
    Dataset<Row> nested = spark.createDataFrame(List.of(RowFactory.create(1, Arrays.asList(Arrays.asList(1)))),
        new StructType().add("query_id", DataTypes.IntegerType).add("candidates",
            DataTypes.createArrayType(DataTypes.createArrayType(DataTypes.IntegerType))));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> SparkMaxSim.scoreCandidates(nested, table, table));
    assertEquals("candidates column 'candidates' is array<array<int>>; expected an array of document ids, single"
        + " values such as strings or numbers", e.getMessage());
    Dataset<Row> binaryQuery = spark.createDataFrame(List.of(RowFactory.create(new byte[] {1}, Arrays.asList(1))),
        new StructType().add("query_id", DataTypes.BinaryType).add("candidates",
            DataTypes.createArrayType(DataTypes.IntegerType)));
    e = assertThrows(IllegalArgumentException.class, () -> SparkMaxSim.scoreCandidates(binaryQuery, table, table));
    assertEquals("rows column 'query_id' is binary; expected query ids, single values such as strings or numbers",
        e.getMessage());
  }
}
