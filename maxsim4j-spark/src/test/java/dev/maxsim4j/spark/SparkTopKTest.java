package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TopK;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
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
import org.junit.jupiter.api.io.TempDir;

class SparkTopKTest extends WithLocalSpark {
  private static MaxSim reference;

  @BeforeAll
  static void start() {
    reference = MaxSim.create();
  }

  @AfterAll
  static void stop() {
    reference.close();
  }

  /** The corpus in {@code slices} contiguous partitions, in list order. */
  static Dataset<Row> table(Corpus c, int slices) {
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    return spark.createDataFrame(jsc.parallelize(c.rows(), slices), Corpus.ARRAYS);
  }

  static EmbeddingTable masked(Dataset<Row> data) {
    return EmbeddingTable.of(data).withMask("mask");
  }

  @Test
  void manyPartitionsMatchOneCallWithMasksVariableLengthsAndEmptyDocuments() {
    Corpus queries = Corpus.random("q", 5, 6, 16, 1, 4); // q0 and q4 hold no token
    Corpus corpus = Corpus.random("d", 60, 9, 16, 2, 7);
    for (int slices : new int[] {1, 3, 8}) {
      List<Row> rows = SparkMaxSim.topK(masked(table(queries, 1)), masked(table(corpus, slices)), 10)
          .collectAsList();
      assertMatches(reference.topK(queries.batch(), corpus.batch(), 10), rows, queries, corpus);
    }
  }

  @Test
  void partitionsRankedInSeveralChunksMatchOneCall() {
    Corpus queries = Corpus.random("q", 4, 6, 16, 13, 0);
    Corpus corpus = Corpus.random("d", 70, 9, 16, 14, 8);
    for (int chunkRows : new int[] {1, 4, 7}) {
      List<Row> rows = DistributedTopK.topK(masked(table(queries, 1)), masked(table(corpus, 3)), 6, chunkRows)
          .collectAsList();
      assertMatches(reference.topK(queries.batch(), corpus.batch(), 6), rows, queries, corpus);
    }
  }

  @Test
  void kBeyondTheCorpusReturnsEveryDocumentAndAnEmptyCorpusNothing() {
    Corpus queries = Corpus.random("q", 3, 4, 8, 3, 0);
    Corpus corpus = Corpus.random("d", 5, 4, 8, 4, 0);
    List<Row> rows = SparkMaxSim.topK(masked(table(queries, 1)), masked(table(corpus, 4)), 50).collectAsList();
    assertEquals(15, rows.size());
    assertMatches(reference.topK(queries.batch(), corpus.batch(), 50), rows, queries, corpus);

    Corpus none = Corpus.random("d", 0, 4, 8, 4, 0);
    assertEquals(0, SparkMaxSim.topK(masked(table(queries, 1)), masked(table(none, 2)), 5).count());
    Corpus one = Corpus.random("d", 1, 4, 8, 5, 0);
    assertMatches(reference.topK(queries.batch(), one.batch(), 5),
        SparkMaxSim.topK(masked(table(queries, 1)), masked(table(one, 3)), 5).collectAsList(), queries, one);
  }

  @Test
  void aPartitionOfOnlyEmptyDocumentsRanksThemLast() {
    Corpus queries = Corpus.random("q", 2, 4, 8, 6, 0);
    Corpus corpus = Corpus.random("d", 12, 5, 8, 7, 0);
    for (int i = 3; i < 6; i++) {
      corpus.tokens().set(i, new float[0][]);
      corpus.masks().set(i, new boolean[0]);
    }
    // four slices of three: the second holds only the empty documents 3, 4 and 5
    List<Row> rows = SparkMaxSim.topK(masked(table(queries, 1)), masked(table(corpus, 4)), 12).collectAsList();
    assertMatches(reference.topK(queries.batch(), corpus.batch(), 12), rows, queries, corpus);
    Row last = rows.stream().filter(r -> r.getString(0).equals("q0")).max(Comparator.comparingInt(r -> r.getInt(2)))
        .orElseThrow();
    assertEquals("d5", last.getString(1));
    assertEquals(-1e9f, last.getFloat(3));
  }

  @Test
  void bf16CellsThroughParquetRankAsTheirWidenedValues(@TempDir Path dir) {
    Corpus queries = Corpus.random("q", 3, 5, 16, 8, 0);
    Corpus corpus = Corpus.random("d", 40, 7, 16, 9, 9);
    String path = dir.resolve("corpus").toString();
    table(corpus, 3).withColumn("tokens", TokenColumns.encode(functions.col("tokens"), DType.BFLOAT16))
        .write().parquet(path);
    Dataset<Row> read = spark.read().parquet(path);
    assertEquals("binary", read.schema().apply("tokens").dataType().typeName());
    // the reference: the same rounding, in one batch in the order Spark reads the files (largest split first)
    List<String> order = read.select("id").as(org.apache.spark.sql.Encoders.STRING()).collectAsList();
    Corpus rounded = new Corpus(order, new ArrayList<>(), new ArrayList<>(), 16);
    for (String id : order) {
      int i = corpus.ids().indexOf(id);
      rounded.tokens().add(TokenCodec.decode(TokenCodec.encode(corpus.tokens().get(i), DType.BFLOAT16)));
      rounded.masks().add(corpus.masks().get(i));
    }
    List<Row> rows = SparkMaxSim.topK(masked(table(queries, 1)), masked(read), 7).collectAsList();
    assertMatches(reference.topK(queries.batch(), rounded.batch(), 7), rows, queries, rounded);
  }

  @Test
  void binaryCellsOfEveryTypeRankedInSeveralChunksMatchOneCallOnTheSameCells() {
    Corpus queries = Corpus.random("q", 3, 5, 16, 17, 0);
    Corpus corpus = Corpus.random("d", 50, 7, 16, 18, 6);
    for (DType type : DType.values()) {
      Dataset<Row> cells = table(corpus, 3).withColumn("tokens", TokenColumns.encode(functions.col("tokens"), type));
      // the reference: the same cells in one batch, in the order Spark holds them
      TokenRows packed = new TokenRows("document");
      for (Row r : cells.collectAsList()) {
        packed.add(r.get(0), r.get(1), r.get(2));
      }
      TopK want = reference.topK(queries.batch(), packed.pack(16).toBatch(), 6);
      for (int chunkRows : new int[] {1, 4, 50}) {
        List<Row> rows = DistributedTopK.topK(masked(table(queries, 1)), masked(cells), 6, chunkRows)
            .collectAsList();
        assertMatches(want, rows, queries, corpus);
      }
    }
  }

  /** A column whose cells differ in type ranks each document as its own type gives it, in any chunking. */
  @Test
  void cellsOfMixedTypesInOneColumnRankAsTheirOwnTypes() {
    Corpus queries = Corpus.random("q", 3, 5, 16, 19, 0);
    Corpus corpus = Corpus.random("d", 60, 7, 16, 20, 11);
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    Dataset<Row> cells = spark.createDataFrame(jsc.parallelize(corpus.mixedCellRows(), 3), Corpus.CELLS);
    TopK want = reference.topK(queries.batch(), corpus.mixedDecoded().batch(), 8);
    for (int chunkRows : new int[] {1, 4, 60}) {
      assertMatches(want, DistributedTopK.topK(masked(table(queries, 1)), masked(cells), 8, chunkRows)
          .collectAsList(), queries, corpus);
    }
  }

  @Test
  void aBadDocumentFailsTheJobWithTheExecutorsCause() {
    Corpus queries = Corpus.random("q", 2, 4, 8, 10, 0);
    Corpus corpus = Corpus.random("d", 6, 4, 8, 11, 0);
    corpus.tokens().set(4, new float[][] {new float[9]});
    corpus.masks().set(4, new boolean[] {true});
    SparkException e = assertThrows(SparkException.class,
        () -> SparkMaxSim.topK(masked(table(queries, 1)), masked(table(corpus, 2)), 3).collectAsList());
    Throwable cause = e;
    while (cause != null && !(cause instanceof IllegalArgumentException)) {
      cause = cause.getCause();
    }
    assertTrue(cause != null, "no IllegalArgumentException among the causes of " + e);
    assertTrue(cause.getMessage().contains("document 'd4'") && cause.getMessage().contains("d = 9"),
        cause.getMessage());
  }

  @Test
  void badArgumentsAreRefusedOnTheDriver() {
    Corpus queries = Corpus.random("q", 2, 4, 8, 12, 0);
    EmbeddingTable t = masked(table(queries, 1));
    assertThrows(IllegalArgumentException.class, () -> SparkMaxSim.topK(t, t, 0));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> EmbeddingTable.of(table(queries, 1), "id", "nope"));
    assertTrue(e.getMessage().contains("'nope'"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> EmbeddingTable.of(table(queries, 1), "id", "mask"));
    assertTrue(e.getMessage().contains("array<boolean>"), e.getMessage());
  }

  @Test
  void idsThatAreNullRepeatedOrWithoutValueEqualityFailNamingThem() {
    Corpus queries = Corpus.random("q", 3, 4, 8, 15, 0);
    Corpus corpus = Corpus.random("d", 8, 4, 8, 16, 0);
    EmbeddingTable q = masked(table(queries, 1));
    EmbeddingTable d = masked(table(corpus, 2));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> SparkMaxSim.topK(masked(table(queries, 1).union(table(queries, 1))), d, 2));
    assertEquals("query id 'q0' appears more than once in the query table; expected unique ids", e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> SparkMaxSim.topK(masked(withNullId(queries)), d, 2));
    assertTrue(e.getMessage().startsWith("a query's id is null"), e.getMessage());

    // the same document twice: each query's best document would be listed at ranks 1 and 2
    String dup = causeOf(assertThrows(SparkException.class,
        () -> SparkMaxSim.topK(q, masked(table(corpus, 2).union(table(corpus, 3))), 2).collectAsList()));
    assertTrue(dup.matches("document id 'd\\d+' appears more than once in the corpus \\(twice in the top 2 of"
        + " query 'q\\d'\\); expected unique ids"), dup);
    String none = causeOf(assertThrows(SparkException.class,
        () -> SparkMaxSim.topK(q, masked(withNullId(corpus)), 2).collectAsList()));
    assertTrue(none.startsWith("a document's id is null (partition "), none);

    // byte[] ids compare and print by identity: refused when the table is made
    e = assertThrows(IllegalArgumentException.class,
        () -> EmbeddingTable.of(table(corpus, 1).withColumn("id", functions.col("id").cast("binary"))));
    assertEquals("id column 'id' is binary; expected a single value per row such as a string or a number",
        e.getMessage());
  }

  /** The rows of {@code c} and one more whose id is null. */
  private static Dataset<Row> withNullId(Corpus c) {
    List<Row> rows = new ArrayList<>(c.rows());
    rows.add(RowFactory.create(null, c.tokens().get(0), c.masks().get(0)));
    StructType nullable = new StructType().add("id", DataTypes.StringType, true)
        .add("tokens", TokenColumns.ARRAYS, false)
        .add("mask", DataTypes.createArrayType(DataTypes.BooleanType, false), false);
    return spark.createDataFrame(JavaSparkContext.fromSparkContext(spark.sparkContext()).parallelize(rows, 2),
        nullable);
  }

  /** The message of the IllegalArgumentException that failed a job. */
  static String causeOf(SparkException e) {
    Throwable cause = e;
    while (cause != null && !(cause instanceof IllegalArgumentException)) {
      cause = cause.getCause();
    }
    assertTrue(cause != null, "no IllegalArgumentException among the causes of " + e);
    return cause.getMessage();
  }

  /**
   * Every query's rows equal the reference top-k: same documents in the same order, where a swap is allowed only
   * between scores equal to fp32 accuracy; scores equal to fp32 accuracy.
   */
  static void assertMatches(TopK expected, List<Row> rows, Corpus queries, Corpus corpus) {
    assertEquals(queries.ids().size(), expected.scores().length);
    int total = 0;
    for (int q = 0; q < queries.ids().size(); q++) {
      String id = queries.ids().get(q);
      List<Row> mine = rows.stream().filter(r -> r.getString(0).equals(id))
          .sorted(Comparator.comparingInt(r -> r.getInt(2))).toList();
      total += mine.size();
      assertEquals(expected.scores()[q].length, mine.size(), "entries of " + id);
      for (int r = 0; r < mine.size(); r++) {
        assertEquals(r + 1, mine.get(r).getInt(2));
        float want = expected.scores()[q][r];
        float got = mine.get(r).getFloat(3);
        assertEquals(want, got, 1e-5f * Math.max(1, Math.abs(want)), id + " rank " + (r + 1));
        String wantDoc = corpus.ids().get(expected.indices()[q][r]);
        if (!wantDoc.equals(mine.get(r).getString(1))) {
          int other = corpus.ids().indexOf(mine.get(r).getString(1));
          float otherScore = scoreOf(expected, q, other);
          assertEquals(want, otherScore, 1e-5f * Math.max(1, Math.abs(want)), id + " rank " + (r + 1)
              + ": " + mine.get(r).getString(1) + " instead of " + wantDoc + " is not a tie");
        }
      }
    }
    assertEquals(total, rows.size(), "rows for unknown queries");
  }

  private static float scoreOf(TopK top, int q, int doc) {
    for (int r = 0; r < top.indices()[q].length; r++) {
      if (top.indices()[q][r] == doc) {
        return top.scores()[q][r];
      }
    }
    return Float.NaN;
  }
}
