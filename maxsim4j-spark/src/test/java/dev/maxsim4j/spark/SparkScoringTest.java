package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.spark.SparkException;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class SparkScoringTest extends WithLocalSpark {
  private static MaxSim reference;
  private static final Corpus QUERIES = Corpus.random("q", 6, 6, 12, 21, 5); // q0 and q5 hold no token
  private static final Corpus CORPUS = Corpus.random("d", 30, 8, 12, 22, 6);
  private static float[][] expected;

  @BeforeAll
  static void start() {
    reference = MaxSim.create();
    expected = reference.scores(QUERIES.batch(), CORPUS.batch());
  }

  @AfterAll
  static void stop() {
    reference.close();
  }

  private static EmbeddingTable table(Corpus c, int slices) {
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    return EmbeddingTable.of(spark.createDataFrame(jsc.parallelize(c.rows(), slices), Corpus.ARRAYS))
        .withMask("mask");
  }

  private static float want(String query, String doc) {
    return expected[QUERIES.ids().indexOf(query)][CORPUS.ids().indexOf(doc)];
  }

  @Test
  void pairsScoreAsOneProcessDoesAndKeepTheirColumnsInLargeAndSmallChunks() {
    Random r = new Random(23);
    List<Row> pairs = new ArrayList<>();
    for (int i = 0; i < 120; i++) {
      pairs.add(RowFactory.create(QUERIES.ids().get(r.nextInt(6)), CORPUS.ids().get(r.nextInt(30)), i));
    }
    StructType schema = new StructType().add("query_id", DataTypes.StringType).add("doc_id", DataTypes.StringType)
        .add("label", DataTypes.IntegerType);
    for (int slices : new int[] {1, 5}) {
      Dataset<Row> input = spark.createDataFrame(JavaSparkContext.fromSparkContext(spark.sparkContext())
          .parallelize(pairs, slices), schema);
      List<Row> scored = PairScoring.score(input, "query_id", "doc_id", "score", table(QUERIES, 2),
          table(CORPUS, 3), slices == 1 ? PairScoring.CHUNK_ROWS : 7).collectAsList();
      assertEveryRowScored(120, scored);
    }
  }

  @Test
  void pairsScoredByScanningTheCorpusMatchAndRepeatedPairsKeepTheirRows() {
    Random r = new Random(27);
    List<Row> pairs = new ArrayList<>();
    for (int i = 0; i < 90; i++) {
      pairs.add(RowFactory.create(QUERIES.ids().get(r.nextInt(6)), CORPUS.ids().get(r.nextInt(30)), i));
    }
    pairs.add(RowFactory.create("q1", "d3", 90));
    pairs.add(RowFactory.create("q1", "d3", 91));
    StructType schema = new StructType().add("query_id", DataTypes.StringType).add("doc_id", DataTypes.StringType)
        .add("label", DataTypes.IntegerType);
    Dataset<Row> input = spark.createDataFrame(JavaSparkContext.fromSparkContext(spark.sparkContext())
        .parallelize(pairs, 3), schema);
    for (int chunkRows : new int[] {PairScoring.CHUNK_ROWS, 5}) {
      List<Row> scored = ScanPairScoring.score(input, "query_id", "doc_id", "score", table(QUERIES, 2),
          table(CORPUS, 4), chunkRows).collectAsList();
      assertEveryRowScored(92, scored);
    }
    StructType ids = new StructType().add("query_id", DataTypes.StringType).add("doc_id", DataTypes.StringType);
    assertEquals(0, SparkMaxSim.scorePairsByScan(spark.createDataFrame(List.of(), ids), table(QUERIES, 1),
        table(CORPUS, 1)).count());
  }

  /** A corpus column whose cells differ in type scores each pair as its document's own type gives it. */
  @Test
  void pairsAgainstCellsOfMixedTypesScoreAsTheirOwnTypes() {
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    EmbeddingTable cells = EmbeddingTable.of(spark.createDataFrame(jsc.parallelize(CORPUS.mixedCellRows(), 3),
        Corpus.CELLS)).withMask("mask");
    float[][] want = reference.scores(QUERIES.batch(), CORPUS.mixedDecoded().batch());
    List<Row> pairs = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      pairs.add(RowFactory.create(QUERIES.ids().get(i % 6), CORPUS.ids().get((i * 7) % 30), i));
    }
    StructType schema = new StructType().add("query_id", DataTypes.StringType).add("doc_id", DataTypes.StringType)
        .add("label", DataTypes.IntegerType);
    Dataset<Row> input = spark.createDataFrame(jsc.parallelize(pairs, 2), schema);
    for (int chunkRows : new int[] {PairScoring.CHUNK_ROWS, 7}) {
      for (List<Row> scored : List.of(
          PairScoring.score(input, "query_id", "doc_id", "score", table(QUERIES, 2), cells, chunkRows)
              .collectAsList(),
          ScanPairScoring.score(input, "query_id", "doc_id", "score", table(QUERIES, 2), cells, chunkRows)
              .collectAsList())) {
        assertEquals(100, scored.size());
        for (Row row : scored) {
          float w = want[QUERIES.ids().indexOf(row.getString(0))][CORPUS.ids().indexOf(row.getString(1))];
          assertEquals(w, row.getFloat(3), 1e-5f * Math.max(1, Math.abs(w)), row.toString());
        }
      }
    }
  }

  @Test
  void aScannedPairWhoseQueryOrDocumentIsMissingFailsNamingIt() {
    StructType schema = new StructType().add("query_id", DataTypes.StringType).add("doc_id", DataTypes.StringType);
    for (String[] pair : new String[][] {{"q1", "nowhere", "document 'nowhere'"}, {"nobody", "d1", "query 'nobody'"}}) {
      Dataset<Row> pairs = spark.createDataFrame(List.of(RowFactory.create("q2", "d1"),
          RowFactory.create(pair[0], pair[1])), schema);
      SparkException e = assertThrows(SparkException.class,
          () -> SparkMaxSim.scorePairsByScan(pairs, table(QUERIES, 1), table(CORPUS, 2)).collectAsList());
      assertTrue(JobFailure.describe(e).contains(pair[2]), JobFailure.describe(e));
    }
  }

  @Test
  void noPairsGiveNoRows() {
    StructType schema = new StructType().add("query_id", DataTypes.StringType).add("doc_id", DataTypes.StringType);
    Dataset<Row> none = spark.createDataFrame(List.of(), schema);
    assertEquals(0, SparkMaxSim.scorePairs(none, table(QUERIES, 1), table(CORPUS, 1)).count());
  }

  @Test
  void aPairWhoseDocumentIsMissingFailsNamingIt() {
    StructType schema = new StructType().add("query_id", DataTypes.StringType).add("doc_id", DataTypes.StringType);
    Dataset<Row> pairs = spark.createDataFrame(List.of(RowFactory.create("q1", "d1"),
        RowFactory.create("q1", "nowhere")), schema);
    SparkException e = assertThrows(SparkException.class,
        () -> SparkMaxSim.scorePairs(pairs, table(QUERIES, 1), table(CORPUS, 1)).collectAsList());
    assertTrue(JobFailure.describe(e).contains("document 'nowhere' is null"), JobFailure.describe(e));
  }

  /**
   * Pair ids of another type than the tables' are compared in the tables' type: an int 7 names the document "7",
   * not also "007" and " 7" (Spark's own coercion would compare them as numbers and join the pair three times); a
   * column whose name holds a dot is carried as it is.
   */
  @Test
  void pairIdsOfAnotherTypeNameOneDocumentEach() {
    List<Row> rows = CORPUS.rows();
    List<Row> renamed = List.of(RowFactory.create("7", rows.get(0).get(1), rows.get(0).get(2)),
        RowFactory.create("007", rows.get(1).get(1), rows.get(1).get(2)),
        RowFactory.create(" 7", rows.get(2).get(1), rows.get(2).get(2)));
    EmbeddingTable corpus = EmbeddingTable.of(spark.createDataFrame(renamed, Corpus.ARRAYS)).withMask("mask");
    List<Row> qRows = QUERIES.rows();
    EmbeddingTable queries = EmbeddingTable.of(spark.createDataFrame(
        List.of(RowFactory.create("1", qRows.get(1).get(1), qRows.get(1).get(2))), Corpus.ARRAYS)).withMask("mask");
    Dataset<Row> pairs = spark.createDataFrame(List.of(RowFactory.create(1, 7, "x")), new StructType()
        .add("query_id", DataTypes.IntegerType).add("doc_id", DataTypes.IntegerType).add("a.b", DataTypes.StringType));
    float score = expected[1][0];
    for (List<Row> got : List.of(SparkMaxSim.scorePairs(pairs, queries, corpus).collectAsList(),
        SparkMaxSim.scorePairsByScan(pairs, queries, corpus).collectAsList())) {
      assertEquals(1, got.size(), got.toString());
      assertEquals(score, got.get(0).getFloat(3), 1e-5f * Math.abs(score), got.toString());
      assertEquals("x", got.get(0).getString(2));
    }
    Dataset<Row> candidates = spark.createDataFrame(List.of(RowFactory.create(1, new int[] {7})), new StructType()
        .add("query_id", DataTypes.IntegerType).add("candidates", DataTypes.createArrayType(DataTypes.IntegerType)));
    List<Row> scored = SparkMaxSim.scoreCandidates(candidates, queries, corpus).collectAsList();
    assertEquals(1, scored.get(0).getList(2).size(), scored.toString());
  }

  /** Double ids 0.0 and -0.0 are one id to Spark: both paths refuse them as a repeated id, neither scores one. */
  @Test
  void zeroAndMinusZeroIdsAreOneIdOnBothPaths() {
    StructType doubles = new StructType().add("id", DataTypes.DoubleType, false)
        .add("tokens", TokenColumns.ARRAYS, false)
        .add("mask", DataTypes.createArrayType(DataTypes.BooleanType, false), false);
    List<Row> rows = CORPUS.rows();
    EmbeddingTable corpus = EmbeddingTable.of(spark.createDataFrame(List.of(
        RowFactory.create(0.0, rows.get(0).get(1), rows.get(0).get(2)),
        RowFactory.create(-0.0, rows.get(1).get(1), rows.get(1).get(2))), doubles)).withMask("mask");
    List<Row> qRows = QUERIES.rows();
    EmbeddingTable queries = EmbeddingTable.of(spark.createDataFrame(
        List.of(RowFactory.create(1.0, qRows.get(1).get(1), qRows.get(1).get(2))), doubles)).withMask("mask");
    Dataset<Row> pairs = spark.createDataFrame(List.of(RowFactory.create(1.0, 0.0), RowFactory.create(1.0, -0.0)),
        new StructType().add("query_id", DataTypes.DoubleType).add("doc_id", DataTypes.DoubleType));
    for (String cause : List.of(
        SparkTopKTest.causeOf(assertThrows(SparkException.class,
            () -> SparkMaxSim.scorePairs(pairs, queries, corpus).collectAsList())),
        SparkTopKTest.causeOf(assertThrows(SparkException.class,
            () -> SparkMaxSim.scorePairsByScan(pairs, queries, corpus).collectAsList())))) {
      assertTrue(cause.matches("document '-?0.0' appears 2 times in the corpus; expected unique ids"), cause);
    }
  }

  @Test
  void aRepeatedIdFailsNamingItInsteadOfScoringAPairTwice() {
    StructType schema = new StructType().add("query_id", DataTypes.StringType).add("doc_id", DataTypes.StringType);
    Dataset<Row> pairs = spark.createDataFrame(List.of(RowFactory.create("q1", "d1"), RowFactory.create("q2", "d2")),
        schema);
    EmbeddingTable twiceQueries = EmbeddingTable.of(table(QUERIES, 1).data().union(table(QUERIES, 2).data()))
        .withMask("mask");
    EmbeddingTable twiceCorpus = EmbeddingTable.of(table(CORPUS, 1).data().union(table(CORPUS, 2).data()))
        .withMask("mask");
    String byJoin = SparkTopKTest.causeOf(assertThrows(SparkException.class,
        () -> SparkMaxSim.scorePairs(pairs, table(QUERIES, 1), twiceCorpus).collectAsList()));
    assertTrue(byJoin.matches("document 'd[12]' appears 2 times in the corpus; expected unique ids"), byJoin);
    byJoin = SparkTopKTest.causeOf(assertThrows(SparkException.class,
        () -> SparkMaxSim.scorePairs(pairs, twiceQueries, table(CORPUS, 1)).collectAsList()));
    assertTrue(byJoin.matches("query 'q[12]' appears 2 times in the query table; expected unique ids"), byJoin);
    String byScan = SparkTopKTest.causeOf(assertThrows(SparkException.class,
        () -> SparkMaxSim.scorePairsByScan(pairs, table(QUERIES, 1), twiceCorpus).collectAsList()));
    assertTrue(byScan.matches("document 'd[12]' appears 2 times in the corpus; expected unique ids"), byScan);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> SparkMaxSim.scorePairsByScan(pairs, twiceQueries, table(CORPUS, 1)));
    assertTrue(e.getMessage().matches("query id 'q[12]' appears more than once in the query table; expected unique"
        + " ids"), e.getMessage());

    // candidates are scored as pairs: two scores per candidate would come back in one list
    Dataset<Row> rows = spark.createDataFrame(List.of(RowFactory.create("q1", new String[] {"d1", "d2"})),
        new StructType().add("query_id", DataTypes.StringType)
            .add("candidates", DataTypes.createArrayType(DataTypes.StringType)));
    String candidates = SparkTopKTest.causeOf(assertThrows(SparkException.class,
        () -> SparkMaxSim.scoreCandidates(rows, table(QUERIES, 1), twiceCorpus).collectAsList()));
    assertTrue(candidates.matches("document 'd[12]' appears 2 times in the corpus; expected unique ids"), candidates);
  }

  @Test
  void aCorpusOfAnotherDFailsNamingADocumentAndWhatItDiffersFrom() {
    StructType schema = new StructType().add("query_id", DataTypes.StringType).add("doc_id", DataTypes.StringType);
    Dataset<Row> pairs = spark.createDataFrame(List.of(RowFactory.create("q1", "d1")), schema);
    EmbeddingTable narrow = table(Corpus.random("d", 3, 4, 6, 28, 0), 1);
    String byJoin = SparkTopKTest.causeOf(assertThrows(SparkException.class,
        () -> SparkMaxSim.scorePairs(pairs, table(QUERIES, 1), narrow).collectAsList()));
    assertEquals("tokens of document 'd1' have d = 6; expected d = 12 like query 'q1'", byJoin);
    String byScan = SparkTopKTest.causeOf(assertThrows(SparkException.class,
        () -> SparkMaxSim.scorePairsByScan(pairs, table(QUERIES, 1), narrow).collectAsList()));
    assertEquals("tokens of document 'd1' have d = 6; expected d = 12 like the queries", byScan);
  }

  @Test
  void candidateListsScoreInTheirOrderAndEmptyListsStay() {
    List<Row> rows = new ArrayList<>();
    Random r = new Random(24);
    Map<String, String[]> lists = new HashMap<>();
    for (int i = 0; i < 6; i++) {
      String[] candidates = new String[i == 2 ? 0 : 5];
      for (int j = 0; j < candidates.length; j++) {
        candidates[j] = CORPUS.ids().get(r.nextInt(30));
      }
      lists.put("row" + i, candidates);
      rows.add(RowFactory.create("row" + i, QUERIES.ids().get(i), candidates));
    }
    rows.add(RowFactory.create("nulls", "q1", null));
    StructType schema = new StructType().add("row", DataTypes.StringType).add("query_id", DataTypes.StringType)
        .add("candidates", DataTypes.createArrayType(DataTypes.StringType));
    List<Row> scored = SparkMaxSim.scoreCandidates(spark.createDataFrame(rows, schema), table(QUERIES, 2),
        table(CORPUS, 2)).collectAsList();
    assertEquals(7, scored.size());
    for (Row row : scored) {
      if (row.getString(0).equals("nulls")) {
        assertNull(row.get(3));
        continue;
      }
      List<Float> scores = row.getList(3);
      String[] candidates = lists.get(row.getString(0));
      assertEquals(candidates.length, scores.size(), row.getString(0));
      for (int j = 0; j < candidates.length; j++) {
        float want = want(row.getString(1), candidates[j]);
        assertEquals(want, scores.get(j), 1e-5f * Math.max(1, Math.abs(want)));
      }
    }
  }

  @Test
  void candidateListsKeepTheirOrderWhereTheJoinsShuffleThePairs() {
    // without a broadcast join each list's pairs reach the gathering out of order, in the partitions of their ids
    String threshold = spark.conf().get("spark.sql.autoBroadcastJoinThreshold");
    spark.conf().set("spark.sql.autoBroadcastJoinThreshold", "-1");
    try {
      List<Row> rows = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        String[] candidates = new String[12];
        for (int j = 0; j < candidates.length; j++) {
          candidates[j] = CORPUS.ids().get((7 * i + 11 * j) % 30);
        }
        rows.add(RowFactory.create(QUERIES.ids().get(i + 1), candidates));
      }
      StructType schema = new StructType().add("query_id", DataTypes.StringType)
          .add("candidates", DataTypes.createArrayType(DataTypes.StringType));
      List<Row> scored = SparkMaxSim.scoreCandidates(spark.createDataFrame(rows, schema), table(QUERIES, 2),
          table(CORPUS, 3)).collectAsList();
      assertEquals(4, scored.size());
      for (Row row : scored) {
        List<String> candidates = row.getList(1);
        List<Float> scores = row.getList(2);
        for (int j = 0; j < candidates.size(); j++) {
          float want = want(row.getString(0), candidates.get(j));
          assertEquals(want, scores.get(j), 1e-5f * Math.max(1, Math.abs(want)), row.getString(0) + " " + j);
        }
      }
    } finally {
      spark.conf().set("spark.sql.autoBroadcastJoinThreshold", threshold);
    }
  }

  @Test
  void decodingACellThatIsNotBinaryIsRefusedNamingWhatItIs() {
    MaxSimFunctions.register(spark);
    Corpus plain = Corpus.random("p", 2, 3, 8, 26, 0);
    Dataset<Row> arrays = spark.createDataFrame(plain.rows(), Corpus.ARRAYS);
    String expected = "cell is a ";
    assertTrue(SparkTopKTest.causeOf(assertThrows(SparkException.class,
        () -> arrays.select(TokenColumns.decode(functions.col("tokens"))).collectAsList()))
        .contains("; expected a binary token cell (from TokenColumns.encode or maxsim_encode)"));
    assertTrue(SparkTopKTest.causeOf(assertThrows(SparkException.class,
        () -> spark.sql("SELECT maxsim_decode(1)").collectAsList())).startsWith(expected + "java.lang.Integer"));
  }

  @Test
  void theSqlFunctionScoresArraysAndCellsAlike() {
    MaxSimFunctions.register(spark);
    Corpus plain = Corpus.random("p", 4, 5, 8, 25, 3);
    spark.createDataFrame(plain.rows(), Corpus.ARRAYS).createOrReplaceTempView("plain");
    List<Row> rows = spark.sql("SELECT a.id, b.id, maxsim(a.tokens, b.tokens), maxsim(maxsim_encode(a.tokens,"
        + " 'fp32'), b.tokens), maxsim_decode(maxsim_encode(b.tokens, 'bf16')) FROM plain a CROSS JOIN plain b")
        .collectAsList();
    assertEquals(16, rows.size());
    Corpus unmasked = new Corpus(plain.ids(), plain.tokens(), new ArrayList<>(), 8);
    for (float[][] t : plain.tokens()) {
      boolean[] m = new boolean[t.length];
      java.util.Arrays.fill(m, true);
      unmasked.masks().add(m);
    }
    float[][] want = reference.scores(unmasked.batch(), unmasked.batch());
    for (Row row : rows) {
      int a = plain.ids().indexOf(row.getString(0));
      int b = plain.ids().indexOf(row.getString(1));
      assertEquals(want[a][b], row.getFloat(2), 1e-5f * Math.max(1, Math.abs(want[a][b])));
      assertEquals(row.getFloat(2), row.getFloat(3));
      assertEquals(plain.tokens().get(b).length, row.getList(4).size());
    }
  }

  @Test
  void columnsConvertToCellsAndBack() {
    Corpus plain = Corpus.random("p", 3, 4, 10, 26, 2);
    Dataset<Row> df = spark.createDataFrame(plain.rows(), Corpus.ARRAYS);
    for (DType type : DType.values()) {
      List<Row> back = df.select(functions.col("id"),
          TokenColumns.decode(TokenColumns.encode(functions.col("tokens"), type)).as("t")).collectAsList();
      for (Row row : back) {
        float[][] original = plain.tokens().get(plain.ids().indexOf(row.getString(0)));
        float[][] direct = TokenCodec.decode(TokenCodec.encode(original, type));
        List<List<Float>> got = new ArrayList<>();
        for (Object token : row.getList(1)) {
          got.add(scala.jdk.javaapi.CollectionConverters.asJava((scala.collection.Seq<Float>) token));
        }
        assertEquals(direct.length, got.size());
        for (int t = 0; t < direct.length; t++) {
          for (int k = 0; k < direct[t].length; k++) {
            assertEquals(direct[t][k], got.get(t).get(k), type + " " + row.getString(0));
          }
        }
      }
    }
  }

  /** {@code rows} rows (query id, doc id, label 0 .. rows - 1, score), each label once, each score the reference's. */
  private void assertEveryRowScored(int rows, List<Row> scored) {
    assertEquals(rows, scored.size());
    boolean[] seen = new boolean[rows];
    for (Row row : scored) {
      seen[row.getInt(2)] = true;
      float want = want(row.getString(0), row.getString(1));
      assertEquals(want, row.getFloat(3), 1e-5f * Math.max(1, Math.abs(want)), row.toString());
    }
    for (boolean s : seen) {
      assertTrue(s);
    }
  }
}
