package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
