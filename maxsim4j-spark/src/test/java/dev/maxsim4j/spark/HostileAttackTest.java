package dev.maxsim4j.spark;

import static org.apache.spark.sql.functions.col;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.TopK;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkException;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/** A hostile user's attacks on the Spark entry points. */
class HostileAttackTest extends WithLocalSpark {
  private static final StructType PLAIN = new StructType().add("id", DataTypes.StringType)
      .add("tokens", TokenColumns.ARRAYS);

  private static Dataset<Row> df(List<Row> rows, StructType schema, int slices) {
    return spark.createDataFrame(JavaSparkContext.fromSparkContext(spark.sparkContext()).parallelize(rows, slices),
        schema);
  }

  private static float core(float[][] q, float[][] d) {
    try (MaxSim m = MaxSim.create()) {
      return m.scores(TokenBatch.of(new float[][][] {q}), TokenBatch.of(new float[][][] {d}))[0][0];
    }
  }

  private static String causeOf(Throwable e) {
    Throwable c = e;
    while (c != null && !(c instanceof IllegalArgumentException)) {
      c = c.getCause();
    }
    return c == null ? "NO IAE in " + e : c.getMessage();
  }

  /** One table serves as queries and corpus, and the pairs are made from it: a self join. */
  @Test
  void selfJoin() {
    List<Row> rows = List.of(RowFactory.create("a", new float[][] {{1, 0}}),
        RowFactory.create("b", new float[][] {{0, 1}, {1, 1}}), RowFactory.create("c", new float[][] {{2, -1}}));
    Dataset<Row> t = df(rows, PLAIN, 2);
    EmbeddingTable table = EmbeddingTable.of(t);
    Dataset<Row> pairs = t.select(col("id").as("query_id")).crossJoin(t.select(col("id").as("doc_id")));
    Map<String, float[][]> m = new HashMap<>();
    for (Row r : rows) {
      m.put(r.getString(0), (float[][]) r.get(1));
    }
    for (int path = 0; path < 2; path++) {
      List<Row> out = (path == 0 ? SparkMaxSim.scorePairs(pairs, table, table)
          : SparkMaxSim.scorePairsByScan(pairs, table, table)).collectAsList();
      assertEquals(9, out.size(), "path " + path);
      for (Row r : out) {
        assertEquals(core(m.get(r.getString(0)), m.get(r.getString(1))), r.getFloat(2), "path " + path + " " + r);
      }
    }
    // pairs whose query id column is the table's own column
    Dataset<Row> t2 = t.withColumnRenamed("id", "query_id");
    EmbeddingTable q2 = EmbeddingTable.of(t2, "query_id", "tokens");
    Dataset<Row> pairs2 = t2.select("query_id").crossJoin(t.select(col("id").as("doc_id")));
    assertEquals(9, SparkMaxSim.scorePairs(pairs2, q2, table).count());
    assertEquals(9, SparkMaxSim.scorePairsByScan(pairs2, q2, table).count());
    // pairs that are the query table itself plus a doc id
    Dataset<Row> pairs3 = t2.withColumn("doc_id", functions.lit("a"));
    assertEquals(3, SparkMaxSim.scorePairs(pairs3, q2, table).count());
    assertEquals(3, SparkMaxSim.scorePairsByScan(pairs3, q2, table).count());
    // candidates from the table itself
    Dataset<Row> cands = t2.withColumn("candidates", functions.array(functions.lit("a"), functions.lit("c")));
    List<Row> scored = SparkMaxSim.scoreCandidates(cands, q2, table).collectAsList();
    assertEquals(3, scored.size());
    assertEquals(2, SparkMaxSim.topK(table, table, 2).count() / 3);
  }

  /** NaN and infinities: every path gives what the core gives. */
  @Test
  void nanAndInfinityMatchTheCore() {
    float nan = Float.NaN;
    float inf = Float.POSITIVE_INFINITY;
    List<float[][]> docs = List.of(new float[][] {{1, 2}}, new float[][] {{nan, 1}}, new float[][] {{inf, 0}},
        new float[][] {{-inf, 1}}, new float[][] {{1, 1}, {nan, nan}}, new float[][] {{0, 0}},
        new float[][] {{inf, inf}, {-inf, -inf}});
    List<float[][]> queries = List.of(new float[][] {{1, 1}}, new float[][] {{0, 1}}, new float[][] {{inf, 1}},
        new float[][] {{-1, 0}, {0, 0}});
    List<Row> d = new ArrayList<>();
    for (int i = 0; i < docs.size(); i++) {
      d.add(RowFactory.create("d" + i, docs.get(i)));
    }
    List<Row> q = new ArrayList<>();
    for (int i = 0; i < queries.size(); i++) {
      q.add(RowFactory.create("q" + i, queries.get(i)));
    }
    TokenBatch qs = padded(queries);
    TokenBatch ds = padded(docs);
    float[][] want;
    TopK top;
    try (MaxSim m = MaxSim.create()) {
      want = m.scores(qs, ds);
      top = m.topK(qs, ds, docs.size());
    }
    for (int slices : new int[] {1, 3}) {
      EmbeddingTable corpus = EmbeddingTable.of(df(d, PLAIN, slices));
      EmbeddingTable qt = EmbeddingTable.of(df(q, PLAIN, 1));
      for (boolean bin : new boolean[] {false, true}) {
        EmbeddingTable c2 = bin ? EmbeddingTable.of(corpus.data().withColumn("tokens",
            TokenColumns.encode(col("tokens"), DType.FLOAT32))) : corpus;
        List<Row> run = SparkMaxSim.topK(qt, c2, docs.size()).collectAsList();
        for (int qi = 0; qi < queries.size(); qi++) {
          String qid = "q" + qi;
          List<Row> mine = run.stream().filter(r -> r.getString(0).equals(qid))
              .sorted(Comparator.comparingInt(r -> r.getInt(2))).toList();
          assertEquals(top.scores()[qi].length, mine.size());
          for (int r = 0; r < mine.size(); r++) {
            assertEquals("d" + top.indices()[qi][r], mine.get(r).getString(1), qid + " rank " + r + " slices "
                + slices + " bin " + bin + " " + mine);
            assertEquals(top.scores()[qi][r], mine.get(r).getFloat(3), qid + " rank " + r);
          }
        }
        List<Row> pairs = new ArrayList<>();
        for (int qi = 0; qi < queries.size(); qi++) {
          for (int di = 0; di < docs.size(); di++) {
            pairs.add(RowFactory.create("q" + qi, "d" + di));
          }
        }
        Dataset<Row> p = df(pairs, new StructType().add("query_id", DataTypes.StringType)
            .add("doc_id", DataTypes.StringType), 2);
        for (Dataset<Row> out : List.of(SparkMaxSim.scorePairs(p, qt, c2), SparkMaxSim.scorePairsByScan(p, qt, c2))) {
          for (Row r : out.collectAsList()) {
            int qi = Integer.parseInt(r.getString(0).substring(1));
            int di = Integer.parseInt(r.getString(1).substring(1));
            assertEquals(want[qi][di], r.getFloat(2), r.toString());
          }
        }
      }
    }
  }

  /** k far beyond the corpus. */
  @Test
  void hugeK() {
    Dataset<Row> t = df(List.of(RowFactory.create("a", new float[][] {{1, 0}}),
        RowFactory.create("b", new float[][] {{0, 1}})), PLAIN, 2);
    EmbeddingTable table = EmbeddingTable.of(t);
    assertEquals(4, SparkMaxSim.topK(table, table, Integer.MAX_VALUE).count());
  }

  /** Column names in another case than the table's, as Spark resolves them by default. */
  @Test
  void columnNamesInAnotherCase() {
    Dataset<Row> t = df(List.of(RowFactory.create("a", new float[][] {{1, 0}})), PLAIN, 1);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> EmbeddingTable.of(t, "ID", "Tokens"));
    assertEquals("id column 'ID' is not in the table; it has [id, tokens]", e.getMessage());
  }

  /** Quantized queries: each path scores as the core scores the stored query against the stored document. */
  @Test
  void quantizedQueriesScoreAsTheCore() {
    float[][] q = {{0.5f, -1f, 2f, 0.25f}, {1f, 1f, -1f, 0f}};
    List<float[][]> docs = List.of(new float[][] {{1, 2, 3, 4}}, new float[][] {{-1, 0.5f, 0, 2}, {3, 3, 3, 3}},
        new float[][] {{0, 0, 1, 0}});
    for (DType qt : DType.values()) {
      for (DType dt : new DType[] {DType.FLOAT32, DType.BFLOAT16, DType.INT8, DType.BINARY}) {
        byte[] qc = TokenCodec.encode(q, qt);
        List<Row> d = new ArrayList<>();
        float[] want = new float[docs.size()];
        try (MaxSim m = MaxSim.create()) {
          for (int i = 0; i < docs.size(); i++) {
            byte[] dc = TokenCodec.encode(docs.get(i), dt);
            d.add(RowFactory.create("d" + i, dc));
            want[i] = m.scores(TokenCodec.read(qc, "q").toBatch(), TokenCodec.read(dc, "d").toBatch())[0][0];
          }
        }
        StructType cells = new StructType().add("id", DataTypes.StringType).add("tokens", DataTypes.BinaryType);
        EmbeddingTable queries = EmbeddingTable.of(df(List.of(RowFactory.create("q", qc)), cells, 1));
        EmbeddingTable corpus = EmbeddingTable.of(df(d, cells, 2));
        List<Row> pairs = new ArrayList<>();
        for (int i = 0; i < docs.size(); i++) {
          pairs.add(RowFactory.create("q", "d" + i));
        }
        Dataset<Row> p = df(pairs, new StructType().add("query_id", DataTypes.StringType)
            .add("doc_id", DataTypes.StringType), 1);
        String what = qt + " x " + dt;
        for (Dataset<Row> out : List.of(SparkMaxSim.scorePairs(p, queries, corpus),
            SparkMaxSim.scorePairsByScan(p, queries, corpus))) {
          for (Row r : out.collectAsList()) {
            assertEquals(want[Integer.parseInt(r.getString(1).substring(1))], r.getFloat(2), what + " " + r);
          }
        }
        for (Row r : SparkMaxSim.topK(queries, corpus, 3).collectAsList()) {
          assertEquals(want[Integer.parseInt(r.getString(1).substring(1))], r.getFloat(3), what + " " + r);
        }
        MaxSimFunctions.register(spark);
        Dataset<Row> sqlOut = queries.data().as("q").crossJoin(corpus.data().as("d"))
            .selectExpr("d.id", "maxsim(q.tokens, d.tokens) AS s");
        for (Row r : sqlOut.collectAsList()) {
          assertEquals(want[Integer.parseInt(r.getString(0).substring(1))], r.getFloat(1), what + " sql " + r);
        }
      }
    }
  }

  /** Ties across partitions and types rank by corpus order (partition, then position). */
  @Test
  void tiesRankInCorpusOrderAcrossTypesAndChunks() {
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < 24; i++) {
      float[][] t = {{1, 0.5f}, {0.25f, 2}};
      DType type = i % 3 == 0 ? DType.BFLOAT16 : i % 3 == 1 ? DType.FLOAT32 : DType.FLOAT16;
      rows.add(RowFactory.create("d" + i, TokenCodec.encode(t, type)));
    }
    StructType cells = new StructType().add("id", DataTypes.StringType).add("tokens", DataTypes.BinaryType);
    for (boolean shuffled : new boolean[] {false, true}) {
    Dataset<Row> corpus = shuffled ? df(rows, cells, 3).repartition(4) : df(rows, cells, 3);
    // the rows as Spark orders them (a projection of a round-robin repartition may order them otherwise)
    List<String> order = corpus.collectAsList().stream().map(r -> r.getString(0)).toList();
    EmbeddingTable q = EmbeddingTable.of(df(List.of(RowFactory.create("q", new float[][] {{1, 1}})), PLAIN, 1));
    for (int chunk : new int[] {1, 2, 5, 100}) {
      List<Row> run = DistributedTopK.topK(q, EmbeddingTable.of(corpus), 10, chunk).collectAsList().stream()
          .sorted(Comparator.comparingInt(r -> r.getInt(2))).toList();
      assertEquals(order.subList(0, 10), run.stream().map(r -> r.getString(1)).toList(), "chunk " + chunk);
    }
    }
  }

  /** Rows of 2-d tokens of several lengths, padded to the longest and masked past each row's own. */
  private static TokenBatch padded(List<float[][]> rows) {
    int longest = rows.stream().mapToInt(x -> x.length).max().getAsInt();
    float[] flat = new float[rows.size() * longest * 2];
    boolean[] mask = new boolean[rows.size() * longest];
    for (int i = 0; i < rows.size(); i++) {
      for (int j = 0; j < rows.get(i).length; j++) {
        System.arraycopy(rows.get(i)[j], 0, flat, (i * longest + j) * 2, 2);
        mask[i * longest + j] = true;
      }
    }
    return TokenBatch.ofFloats(flat, rows.size(), longest, 2).withMask(mask);
  }
}
