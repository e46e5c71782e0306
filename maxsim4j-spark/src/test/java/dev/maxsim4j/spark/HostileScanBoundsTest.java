package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/** scorePairsByScan holds a bounded chunk of document values, however many queries name one document. */
class HostileScanBoundsTest extends WithLocalSpark {
  private static final int DIM = 128;

  @Test
  void oneLargeDocumentPairedWithManyQueriesIsScoredInBoundedChunks() {
    // 8 MiB of fp32 tokens, named by 600 queries: a copy per query held at once would take 4.8 GB of a 3 GB heap
    int length = 16384;
    float[][] document = new float[length][DIM];
    document[5][0] = 2;
    StructType schema = new StructType().add("id", DataTypes.StringType).add("tokens", TokenColumns.ARRAYS);
    Dataset<Row> corpus = spark.createDataFrame(List.of(RowFactory.create("big", document)), schema);
    int queries = 600;
    List<Row> queryRows = new ArrayList<>();
    List<Row> pairRows = new ArrayList<>();
    for (int q = 0; q < queries; q++) {
      float[][] token = new float[1][DIM];
      token[0][0] = q + 1;
      queryRows.add(RowFactory.create("q" + q, token));
      pairRows.add(RowFactory.create("q" + q, "big"));
    }
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    Dataset<Row> queryTable = spark.createDataFrame(jsc.parallelize(queryRows, 1), schema);
    Dataset<Row> pairs = spark.createDataFrame(pairRows, new StructType().add("query_id", DataTypes.StringType)
        .add("doc_id", DataTypes.StringType));
    List<Row> scored = SparkMaxSim.scorePairsByScan(pairs, EmbeddingTable.of(queryTable), EmbeddingTable.of(corpus))
        .collectAsList();
    assertEquals(queries, scored.size());
    for (Row r : scored) {
      int q = Integer.parseInt(r.getString(0).substring(1));
      assertEquals(2f * (q + 1), r.getFloat(2), r.toString());
    }
  }
}
