package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/**
 * Tables whose id, tokens and mask columns have names with a dot, a blank or a backtick, which Spark would read as
 * a struct's field or refuse unless quoted: every API scores them as it scores the same table with plain names.
 */
class HostileColumnNamesTest extends WithLocalSpark {
  private static final Corpus QUERIES = Corpus.random("q", 3, 4, 8, 31, 0);
  private static final Corpus CORPUS = Corpus.random("d", 9, 5, 8, 32, 4);

  private static EmbeddingTable table(Corpus c, String id, String tokens, String mask) {
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    Dataset<Row> data = spark.createDataFrame(jsc.parallelize(c.rows(), 2), Corpus.ARRAYS)
        .toDF(id, tokens, mask);
    return EmbeddingTable.of(data, id, tokens).withMask(mask);
  }

  private static EmbeddingTable odd(Corpus c) {
    return table(c, "my.id", "tok ens`", "m.a.sk");
  }

  private static EmbeddingTable plain(Corpus c) {
    return table(c, "id", "tokens", "mask");
  }

  /**
   * A candidates row's column named as the scorer's row number came back holding that number instead of its
   * value, and a pairs column named as a joined one failed with Spark's ambiguous reference.
   */
  @Test
  void inputColumnsNamedAsTheScorersOwnAreRefused() {
    Dataset<Row> pairs = spark.createDataFrame(List.of(RowFactory.create("q0", "d1", "v")), new StructType()
        .add("query_id", DataTypes.StringType).add("doc_id", DataTypes.StringType)
        .add("__MaxSim4j_qk", DataTypes.StringType));
    String expected = "pairs has a column '__MaxSim4j_qk'; expected no column whose name starts with __maxsim4j_"
        + " (the scorers name their own columns so)";
    assertEquals(expected, assertThrows(IllegalArgumentException.class,
        () -> SparkMaxSim.scorePairs(pairs, plain(QUERIES), plain(CORPUS))).getMessage());
    assertEquals(expected, assertThrows(IllegalArgumentException.class,
        () -> SparkMaxSim.scorePairsByScan(pairs, plain(QUERIES), plain(CORPUS))).getMessage());
    Dataset<Row> rows = spark.createDataFrame(List.of(RowFactory.create("q0", List.of("d1"), "v")), new StructType()
        .add("query_id", DataTypes.StringType).add("candidates", DataTypes.createArrayType(DataTypes.StringType))
        .add("__maxsim4j_row", DataTypes.StringType));
    assertEquals("rows has a column '__maxsim4j_row'; expected no column whose name starts with __maxsim4j_"
        + " (the scorers name their own columns so)", assertThrows(IllegalArgumentException.class,
        () -> SparkMaxSim.scoreCandidates(rows, plain(QUERIES), plain(CORPUS))).getMessage());
  }

  /**
   * A hostile tester's findings: a query table with a column named as the scan's own key failed with Spark's
   * ambiguous reference, and a scores column clashing with 'Score' was reported as 'score'.
   */
  @Test
  void aTableColumnNamedAsTheScansKeyScoresAndAClashingScoresColumnIsNamedAsItIs() {
    EmbeddingTable queries = plain(QUERIES);
    EmbeddingTable keyed = new EmbeddingTable(queries.data().withColumn("__maxsim4j_sq",
        org.apache.spark.sql.functions.lit("x")), "id", "tokens", "mask");
    Dataset<Row> pairs = spark.createDataFrame(List.of(RowFactory.create("q0", "d1"), RowFactory.create("q2", "d4")),
        new StructType().add("query_id", DataTypes.StringType).add("doc_id", DataTypes.StringType));
    assertEquals(SparkMaxSim.scorePairs(pairs, queries, plain(CORPUS)).orderBy("query_id").collectAsList(),
        SparkMaxSim.scorePairsByScan(pairs, keyed, plain(CORPUS)).orderBy("query_id").collectAsList());
    Dataset<Row> scored = pairs.withColumn("Score", org.apache.spark.sql.functions.lit(1));
    assertEquals("pairs already has a column 'Score' (Spark ignores case in names); expected the scores' column"
        + " name 'score' to be new", assertThrows(IllegalArgumentException.class,
        () -> SparkMaxSim.scorePairs(scored, queries, plain(CORPUS))).getMessage());
  }

  /**
   * A name Spark finds ambiguous (two columns of it, as a join leaves, or names differing in case only) is refused
   * naming the argument: it failed with Spark's ambiguous reference, naming neither.
   */
  @Test
  void columnNamesSparkFindsAmbiguousAreRefusedNamingTheArgument() {
    Dataset<Row> pairs = spark.createDataFrame(List.of(RowFactory.create("q0", "d1", "d2")), new StructType()
        .add("query_id", DataTypes.StringType).add("doc_id", DataTypes.StringType).add("DOC_ID", DataTypes.StringType));
    String expected = "pairs has 2 columns named 'doc_id' [doc_id, DOC_ID] (Spark ignores case in names); expected"
        + " one: rename or drop the others";
    assertEquals(expected, assertThrows(IllegalArgumentException.class,
        () -> SparkMaxSim.scorePairs(pairs, plain(QUERIES), plain(CORPUS))).getMessage());
    assertEquals(expected, assertThrows(IllegalArgumentException.class,
        () -> SparkMaxSim.scorePairsByScan(pairs, plain(QUERIES), plain(CORPUS))).getMessage());
    Dataset<Row> rows = spark.createDataFrame(List.of(RowFactory.create("q0", "q1", List.of("d1"))), new StructType()
        .add("query_id", DataTypes.StringType).add("Query_Id", DataTypes.StringType)
        .add("candidates", DataTypes.createArrayType(DataTypes.StringType)));
    assertEquals("rows has 2 columns named 'query_id' [query_id, Query_Id] (Spark ignores case in names); expected"
        + " one: rename or drop the others", assertThrows(IllegalArgumentException.class,
        () -> SparkMaxSim.scoreCandidates(rows, plain(QUERIES), plain(CORPUS))).getMessage());
    // Spark compares names by equalsIgnoreCase, which takes the dotless \u0131 for I (lower-cased keys did not)
    Dataset<Row> dotless = spark.createDataFrame(List.of(RowFactory.create("q0", "d1", "a", "b")), new StructType()
        .add("query_id", DataTypes.StringType).add("doc_id", DataTypes.StringType)
        .add("t\u0131tle", DataTypes.StringType).add("TITLE", DataTypes.StringType));
    assertEquals("pairs has 2 columns named 't\u0131tle' [t\u0131tle, TITLE] (Spark ignores case in names); expected"
        + " one: rename or drop the others", assertThrows(IllegalArgumentException.class,
        () -> SparkMaxSim.scorePairs(dotless, plain(QUERIES), plain(CORPUS))).getMessage());
    // any column of the same name twice, as a join leaves: the scorers carry every input column through
    Dataset<Row> twice = spark.createDataFrame(List.of(RowFactory.create("q0", "d1", 1, 2)), new StructType()
        .add("query_id", DataTypes.StringType).add("doc_id", DataTypes.StringType).add("x", DataTypes.IntegerType)
        .add("x", DataTypes.IntegerType));
    String x = "pairs has 2 columns named 'x' [x, x]; expected one: rename or drop the others";
    assertEquals(x, assertThrows(IllegalArgumentException.class,
        () -> SparkMaxSim.scorePairs(twice, plain(QUERIES), plain(CORPUS))).getMessage());
    assertEquals(x, assertThrows(IllegalArgumentException.class,
        () -> SparkMaxSim.scorePairsByScan(twice, plain(QUERIES), plain(CORPUS))).getMessage());
    Dataset<Row> listed = spark.createDataFrame(List.of(RowFactory.create("q0", List.of("d1"), 1, 2)), new StructType()
        .add("query_id", DataTypes.StringType).add("candidates", DataTypes.createArrayType(DataTypes.StringType))
        .add("x", DataTypes.IntegerType).add("x", DataTypes.IntegerType));
    assertEquals(x.replace("pairs", "rows"), assertThrows(IllegalArgumentException.class,
        () -> SparkMaxSim.scoreCandidates(listed, plain(QUERIES), plain(CORPUS))).getMessage());
    Dataset<Row> data = plain(CORPUS).data();
    Dataset<Row> joined = data.join(data.select("id"), data.col("id").equalTo(data.col("id")));
    assertEquals("the table has 2 columns named 'id' [id, id]; expected one: rename or drop the others",
        assertThrows(IllegalArgumentException.class, () -> EmbeddingTable.of(joined)).getMessage());
  }

  @Test
  void oddColumnNamesScoreAsPlainOnes() {
    assertEquals(sorted(SparkMaxSim.topK(plain(QUERIES), plain(CORPUS), 4)),
        sorted(SparkMaxSim.topK(odd(QUERIES), odd(CORPUS), 4)));
    Dataset<Row> pairs = spark.createDataFrame(List.of(RowFactory.create("q0", "d1"), RowFactory.create("q2", "d4")),
        new StructType().add("query_id", DataTypes.StringType).add("doc_id", DataTypes.StringType));
    List<String> expected = sorted(SparkMaxSim.scorePairs(pairs, plain(QUERIES), plain(CORPUS)));
    assertEquals(expected, sorted(SparkMaxSim.scorePairs(pairs, odd(QUERIES), odd(CORPUS))));
    assertEquals(expected, sorted(SparkMaxSim.scorePairsByScan(pairs, odd(QUERIES), odd(CORPUS))));
    Dataset<Row> candidates = spark.createDataFrame(List.of(RowFactory.create("q1",
        scala.jdk.javaapi.CollectionConverters.asScala(List.of("d3", "d0")).toSeq())),
        new StructType().add("query_id", DataTypes.StringType)
            .add("candidates", DataTypes.createArrayType(DataTypes.StringType)));
    assertEquals(sorted(SparkMaxSim.scoreCandidates(candidates, plain(QUERIES), plain(CORPUS))),
        sorted(SparkMaxSim.scoreCandidates(candidates, odd(QUERIES), odd(CORPUS))));
  }

  private static List<String> sorted(Dataset<Row> rows) {
    return rows.collectAsList().stream().map(Row::toString).sorted().toList();
  }
}
