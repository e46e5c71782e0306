package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.SparkException;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HostileIdsTest extends WithLocalSpark {
  private static final float[][] X = {{1, 0}};
  private static final float[][] Y = {{0, 1}};

  /** A table (id, tokens) of {@code ids} of {@code idType}, one document of {@code tokens} each. */
  private static Dataset<Row> table(DataType idType, List<?> ids, float[][] tokens, int slices) {
    List<Row> rows = new ArrayList<>();
    for (Object id : ids) {
      rows.add(RowFactory.create(id, tokens));
    }
    StructType schema = new StructType().add("id", idType, true).add("tokens", TokenColumns.ARRAYS, true);
    return spark.createDataFrame(JavaSparkContext.fromSparkContext(spark.sparkContext()).parallelize(rows, slices),
        schema);
  }

  @Test
  void zeroIdsOfBothSignsAreOneIdAsOnThePairPaths() {
    EmbeddingTable corpus = EmbeddingTable.of(table(DataTypes.StringType, List.of("x", "y"), X, 1));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SparkMaxSim.topK(
        EmbeddingTable.of(table(DataTypes.DoubleType, List.of(0.0, -0.0), X, 1)), corpus, 2));
    assertEquals("query id '-0.0' appears more than once in the query table (Spark compares -0.0 and 0.0 as one"
        + " id); expected unique ids", e.getMessage());

    EmbeddingTable query = EmbeddingTable.of(table(DataTypes.StringType, List.of("q"), X, 1));
    String twice = SparkTopKTest.causeOf(assertThrows(SparkException.class, () -> SparkMaxSim.topK(query,
        EmbeddingTable.of(table(DataTypes.FloatType, List.of(0f, -0f), X, 2)), 2).collectAsList()));
    assertEquals("document id '-0.0' appears more than once in the corpus (Spark compares -0.0 and 0.0 as one id)"
        + " (twice in the top 2 of query 'q'); expected unique ids", twice);
  }

  @Test
  void aNullIdInAPairOrACandidateListIsNamedAsNullNotAsAnIdMissingFromItsTable() {
    EmbeddingTable queries = EmbeddingTable.of(table(DataTypes.StringType, List.of("q"), X, 1));
    EmbeddingTable corpus = EmbeddingTable.of(table(DataTypes.StringType, List.of("x", "y"), Y, 2));
    StructType schema = new StructType().add("query_id", DataTypes.StringType).add("doc_id", DataTypes.StringType);
    Dataset<Row> noDocument = spark.createDataFrame(List.of(RowFactory.create("q", "x"),
        RowFactory.create("q", null)), schema);
    Dataset<Row> noQuery = spark.createDataFrame(List.of(RowFactory.create(null, "y")), schema);
    String document = "a pair's or candidate's document id is null (query 'q'); expected an id of the corpus";
    String query = "a pair's or candidate's query id is null (document 'y'); expected an id of the query table";
    assertEquals(document, SparkTopKTest.causeOf(assertThrows(SparkException.class,
        () -> SparkMaxSim.scorePairs(noDocument, queries, corpus).collectAsList())));
    assertEquals(document, SparkTopKTest.causeOf(assertThrows(SparkException.class,
        () -> SparkMaxSim.scorePairsByScan(noDocument, queries, corpus).collectAsList())));
    assertEquals(query, SparkTopKTest.causeOf(assertThrows(SparkException.class,
        () -> SparkMaxSim.scorePairs(noQuery, queries, corpus).collectAsList())));
    assertEquals(query, SparkTopKTest.causeOf(assertThrows(SparkException.class,
        () -> SparkMaxSim.scorePairsByScan(noQuery, queries, corpus).collectAsList())));
    StructType lists = new StructType().add("query_id", DataTypes.StringType)
        .add("candidates", DataTypes.createArrayType(DataTypes.StringType, true));
    Dataset<Row> candidates = spark.createDataFrame(List.of(RowFactory.create("q", Arrays.asList("x", null))), lists);
    assertEquals(document, SparkTopKTest.causeOf(assertThrows(SparkException.class,
        () -> SparkMaxSim.scoreCandidates(candidates, queries, corpus).collectAsList())));
  }

  /**
   * Date ids the old Julian calendar of java.sql.Date does not hold (before 1582-10-15, before year 1, after 9999) keep
   * their value in top-k, pairs by scan and the TREC run, as Spark prints them: they named other dates, a document
   * that is not in the corpus, or two queries alike. Found by a hostile test.
   */
  @Test
  void dateIdsKeepTheirValueOnEveryPath(@TempDir Path dir) throws Exception {
    EmbeddingTable queries = EmbeddingTable.of(table(DataTypes.DateType, List.of(java.time.LocalDate.of(-1, 6, 1),
        java.time.LocalDate.of(2, 6, 1)), X, 1));
    List<Object> docDays = List.of(java.time.LocalDate.of(1582, 10, 10), java.time.LocalDate.of(1582, 10, 20));
    EmbeddingTable corpus = EmbeddingTable.of(table(DataTypes.DateType, docDays, X, 2));
    Dataset<Row> top = SparkMaxSim.topK(queries, corpus, 2);
    assertEquals(List.of("-0001-06-01 1582-10-10", "-0001-06-01 1582-10-20", "0002-06-01 1582-10-10",
        "0002-06-01 1582-10-20"), top.selectExpr("concat(cast(query_id AS string), ' ', cast(doc_id AS string))")
        .orderBy("query_id", "rank").as(org.apache.spark.sql.Encoders.STRING()).collectAsList());
    StructType pairSchema = new StructType().add("query_id", DataTypes.DateType).add("doc_id", DataTypes.DateType);
    Dataset<Row> pairs = spark.createDataFrame(List.of(RowFactory.create(java.time.LocalDate.of(2, 6, 1),
        java.time.LocalDate.of(1582, 10, 10))), pairSchema);
    assertEquals(List.of(1.0f), SparkMaxSim.scorePairsByScan(pairs, queries, corpus).select("score")
        .as(org.apache.spark.sql.Encoders.FLOAT()).collectAsList());
    // a pair whose document is missing names it, and its query as the table holds it
    Dataset<Row> missing = spark.createDataFrame(List.of(RowFactory.create(java.time.LocalDate.of(2, 6, 1),
        java.time.LocalDate.of(1999, 1, 1))), pairSchema);
    assertEquals("document '1999-01-01' of a pair with query '0002-06-01' is not in the corpus",
        SparkTopKTest.causeOf(assertThrows(SparkException.class, () -> SparkMaxSim.scorePairsByScan(missing, queries,
        corpus).collectAsList())));
    Path run = dir.resolve("run.trec");
    TrecRun.write(top, run.toString(), "t");
    assertEquals(List.of("-0001-06-01 Q0 1582-10-10 1 1.0 t", "-0001-06-01 Q0 1582-10-20 2 1.0 t",
        "0002-06-01 Q0 1582-10-10 1 1.0 t", "0002-06-01 Q0 1582-10-20 2 1.0 t"), Files.readAllLines(run));
  }

  @Test
  void anOutputFolderInAnInputTableIsRefusedAndTheTableStaysReadable(@TempDir Path dir) {
    String queries = dir.resolve("queries").toString();
    String corpus = dir.resolve("corpus").toString();
    table(DataTypes.StringType, List.of("q"), X, 1).write().parquet(queries);
    table(DataTypes.StringType, List.of("x", "y"), Y, 2).write().parquet(corpus);
    for (String[] out : new String[][] {{corpus, "--corpus " + corpus},
        {dir.resolve("queries/run").toString(), "--queries " + queries}}) {
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      int status = TopKJob.run(spark, new String[] {"--queries", queries, "--corpus", corpus, "--k", "2",
          "--out", out[0]}, new PrintStream(err, true, StandardCharsets.UTF_8));
      assertEquals(1, status);
      assertEquals("maxsim4j-spark: error: --out " + out[0] + " lies in " + out[1] + "; expected an output folder"
          + " outside the input tables (the run would be read as part of the table)\n",
          err.toString(StandardCharsets.UTF_8));
    }
    // a folder reached through a link into the corpus lies in it as well
    Path link;
    try {
      link = Files.createSymbolicLink(dir.resolve("link"), dir.resolve("corpus"));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    ByteArrayOutputStream linked = new ByteArrayOutputStream();
    assertEquals(1, TopKJob.run(spark, new String[] {"--queries", queries, "--corpus", corpus, "--k", "2", "--out",
        link.resolve("run").toString()}, new PrintStream(linked, true, StandardCharsets.UTF_8)));
    assertTrue(linked.toString(StandardCharsets.UTF_8).contains(" lies in --corpus " + corpus), linked.toString());
    assertFalse(Files.exists(dir.resolve("corpus/run")));
    // a pattern's matches are the table: an output folder a glob matches, or one in such a folder, lies in it
    for (String[] glob : new String[][] {{corpus + "/*", corpus + "/run"},
        {dir.resolve("{corpus}").toString(), corpus + "/run"}, {dir + "/corp?s", corpus}}) {
      ByteArrayOutputStream globbed = new ByteArrayOutputStream();
      assertEquals(1, TopKJob.run(spark, new String[] {"--queries", queries, "--corpus", glob[0], "--k", "2", "--out",
          glob[1]}, new PrintStream(globbed, true, StandardCharsets.UTF_8)), glob[0]);
      assertTrue(globbed.toString(StandardCharsets.UTF_8).contains(" lies in --corpus " + glob[0]), globbed.toString());
    }
    assertFalse(Files.exists(dir.resolve("corpus/run")));
    // an input the check cannot resolve is left to the read, which names it
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = TopKJob.run(spark, new String[] {"--queries", queries, "--corpus", "nope://x/corpus", "--k", "2",
        "--out", dir.resolve("run").toString()}, new PrintStream(err, true, StandardCharsets.UTF_8));
    assertEquals(1, status);
    assertEquals("maxsim4j-spark: error: --corpus nope://x/corpus cannot be read as Parquet: No FileSystem for"
        + " scheme \"nope\"\n", err.toString(StandardCharsets.UTF_8));
    assertFalse(Files.exists(dir.resolve("corpus/run.trec")));
    assertFalse(Files.exists(dir.resolve("queries/run")));
    assertEquals(2, spark.read().parquet(corpus).count());
    assertEquals(1, spark.read().parquet(queries).count());
  }
}
