package dev.maxsim4j.spark;

import static org.apache.spark.sql.functions.col;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.math.BigDecimal;
import java.util.ArrayList;
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

class HostileScoringAttackTest extends WithLocalSpark {
  private static final StructType MASKED = new StructType().add("id", DataTypes.LongType)
      .add("tokens", TokenColumns.ARRAYS).add("mask", DataTypes.createArrayType(DataTypes.BooleanType, true));

  private static Dataset<Row> df(List<Row> rows, StructType schema, int slices) {
    return spark.createDataFrame(JavaSparkContext.fromSparkContext(spark.sparkContext()).parallelize(rows, slices),
        schema);
  }

  private static String causeOf(Throwable e) {
    Throwable c = e;
    while (c != null && !(c instanceof IllegalArgumentException)) {
      c = c.getCause();
    }
    return c == null ? "NO IAE in " + e : c.getMessage();
  }

  private static float core(float[][] q, boolean[] qm, float[][] d, boolean[] dm) {
    try (MaxSim m = MaxSim.create()) {
      TokenBatch qb = q.length == 0 ? TokenBatch.ofFloats(new float[0], 1, 0, 2) : TokenBatch.of(new float[][][] {q});
      TokenBatch db = d.length == 0 ? TokenBatch.ofFloats(new float[0], 1, 0, 2) : TokenBatch.of(new float[][][] {d});
      if (qm != null && q.length > 0) {
        qb = qb.withMask(qm);
      }
      if (dm != null && d.length > 0) {
        db = db.withMask(dm);
      }
      return m.scores(qb, db)[0][0];
    }
  }

  /** Masks all false, null masks, empty documents, skewed partitions; every path equals the core. */
  @Test
  void masksEmptiesAndSkewMatchTheCore() {
    List<float[][]> docs = List.of(new float[][] {{1, 2}, {3, -1}}, new float[][] {{1, 1}}, new float[0][],
        new float[][] {{5, 5}, {-2, 0}}, new float[][] {{0.5f, 0.25f}});
    List<boolean[]> dmasks = java.util.Arrays.asList(new boolean[] {false, true}, null, new boolean[0],
        new boolean[] {false, false}, new boolean[] {true});
    List<float[][]> qs = List.of(new float[][] {{1, 0}, {0, 1}}, new float[][] {{1, 1}}, new float[][] {{2, 1}});
    List<boolean[]> qmasks = java.util.Arrays.asList(new boolean[] {true, false}, new boolean[] {false}, null);
    List<Row> d = new ArrayList<>();
    for (int i = 0; i < docs.size(); i++) {
      d.add(RowFactory.create((long) i, docs.get(i), dmasks.get(i)));
    }
    List<Row> q = new ArrayList<>();
    for (int i = 0; i < qs.size(); i++) {
      q.add(RowFactory.create((long) (100 + i), qs.get(i), qmasks.get(i)));
    }
    EmbeddingTable queries = EmbeddingTable.of(df(q, MASKED, 2)).withMask("mask");
    for (int parts : new int[] {1, 2, 16}) {
      Dataset<Row> data = parts == 16 ? df(d, MASKED, 1).repartition(16) : df(d, MASKED, parts);
      EmbeddingTable corpus = EmbeddingTable.of(data).withMask("mask");
      List<Row> pairs = new ArrayList<>();
      for (int qi = 0; qi < qs.size(); qi++) {
        for (int di = 0; di < docs.size(); di++) {
          pairs.add(RowFactory.create(100 + qi, "" + di));
        }
      }
      StructType ps = new StructType().add("query_id", DataTypes.IntegerType).add("doc_id", DataTypes.StringType);
      Dataset<Row> p = df(pairs, ps, 3).selectExpr("query_id", "doc_id", "map('k', query_id - 100) AS extra_map",
          "cast(doc_id as binary) AS extra_bin", "cast(1.5 as decimal(5,2)) AS extra_dec");
      for (Dataset<Row> out : List.of(SparkMaxSim.scorePairs(p, queries, corpus),
          SparkMaxSim.scorePairsByScan(p, queries, corpus))) {
        List<Row> rows = out.collectAsList();
        assertEquals(pairs.size(), rows.size());
        for (Row r : rows) {
          int qi = r.getInt(0) - 100;
          int di = Integer.parseInt(r.getString(1));
          assertEquals(core(qs.get(qi), qmasks.get(qi), docs.get(di), dmasks.get(di)), r.getFloat(5),
              "parts " + parts + " " + r);
          assertEquals(qi, r.getJavaMap(2).get("k"));
          assertEquals(r.getString(1), new String((byte[]) r.get(3)));
          assertEquals(new BigDecimal("1.50"), r.getDecimal(4));
        }
      }
      List<Row> cand = new ArrayList<>();
      for (int qi = 0; qi < qs.size(); qi++) {
        cand.add(RowFactory.create(100 + qi, new int[] {4, 0, 4, 2}, "row" + qi));
      }
      cand.add(RowFactory.create(100, null, "nulls"));
      cand.add(RowFactory.create(101, new int[0], "none"));
      StructType cs = new StructType().add("query_id", DataTypes.IntegerType)
          .add("candidates", DataTypes.createArrayType(DataTypes.IntegerType)).add("tag", DataTypes.StringType);
      List<Row> scored = SparkMaxSim.scoreCandidates(df(cand, cs, 2), queries, corpus).collectAsList();
      assertEquals(cand.size(), scored.size());
      for (Row r : scored) {
        if (r.getString(2).startsWith("row")) {
          int qi = r.getInt(0) - 100;
          List<Float> got = r.getList(3);
          int[] cs2 = {4, 0, 4, 2};
          for (int j = 0; j < 4; j++) {
            assertEquals(core(qs.get(qi), qmasks.get(qi), docs.get(cs2[j]), dmasks.get(cs2[j])), got.get(j),
                "cand " + r);
          }
        }
      }
      List<Row> top = SparkMaxSim.topK(queries, corpus, 3).collectAsList();
      assertEquals(9, top.size());
      for (Row r : top) {
        int qi = (int) (r.getLong(0) - 100);
        int di = (int) r.getLong(1);
        assertEquals(core(qs.get(qi), qmasks.get(qi), docs.get(di), dmasks.get(di)), r.getFloat(3), "top " + r);
      }
    }
  }

  /** Columns of the wrong Spark SQL type are refused naming column, type and what was expected. */
  @Test
  void wrongTypesAreRefusedByName() {
    Dataset<Row> base = df(List.of(RowFactory.create(1L, new float[][] {{1, 2}}, new boolean[] {true})), MASKED, 1);
    for (String[] c : new String[][] {{"cast(tokens as array<array<double>>)", "array<array<double>>"},
        {"flatten(tokens)", "array<float>"}, {"array(tokens)", "array<array<array<float>>>"},
        {"cast(1.5 as decimal(5,2))", "decimal(5,2)"}, {"cast(tokens as string)", "string"},
        {"cast(null as array<array<float>>)", "OK"}}) {
      Dataset<Row> t = base.selectExpr("id", c[0] + " AS tokens", "mask");
      if (c[1].equals("OK")) {
        String m = causeOf(assertThrows(SparkException.class,
            () -> SparkMaxSim.topK(EmbeddingTable.of(base), EmbeddingTable.of(t), 1).collectAsList()));
        System.out.println("NULLCELL: " + m);
        continue;
      }
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EmbeddingTable.of(t));
      System.out.println("TYPE: " + e.getMessage());
      assertTrue(e.getMessage().contains("'tokens'") && e.getMessage().contains(c[1]), e.getMessage());
    }
    for (String m : new String[] {"array(1)", "array(cast(null as boolean))", "cast(null as array<boolean>)",
        "array(true, true)"}) {
      Dataset<Row> t = base.selectExpr("id", "tokens", m + " AS mask");
      try {
        EmbeddingTable table = EmbeddingTable.of(t).withMask("mask");
        System.out.println("MASK " + m + ": " + SparkMaxSim.topK(table, table, 1).collectAsList());
      } catch (IllegalArgumentException e) {
        System.out.println("MASK " + m + ": IAE " + e.getMessage());
      } catch (RuntimeException e) {
        System.out.println("MASK " + m + ": " + causeOf(e));
      }
    }
  }

  /** An empty query table and empty corpora. */
  @Test
  void emptyTables() {
    Dataset<Row> none = df(List.of(), MASKED, 3);
    Dataset<Row> one = df(List.of(RowFactory.create(1L, new float[][] {{1, 2}}, null)), MASKED, 1);
    assertEquals(0, SparkMaxSim.topK(EmbeddingTable.of(none), EmbeddingTable.of(one), 5).count());
    assertEquals(0, SparkMaxSim.topK(EmbeddingTable.of(one), EmbeddingTable.of(none), 5).count());
    assertEquals(0, SparkMaxSim.topK(EmbeddingTable.of(one), EmbeddingTable.of(one.where("id < 0")), 5).count());
    Dataset<Row> p = spark.sql("SELECT 1L AS query_id, 1L AS doc_id");
    String m = causeOf(assertThrows(SparkException.class,
        () -> SparkMaxSim.scorePairsByScan(p, EmbeddingTable.of(none), EmbeddingTable.of(one)).collectAsList()));
    System.out.println("EMPTYQ: " + m);
    m = causeOf(assertThrows(SparkException.class,
        () -> SparkMaxSim.scorePairs(p, EmbeddingTable.of(one), EmbeddingTable.of(none)).collectAsList()));
    System.out.println("EMPTYD: " + m);
  }
}
