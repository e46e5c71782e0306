package dev.maxsim4j.spark;

import static org.apache.spark.sql.functions.array_repeat;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A finding of a session's own: the pair scorer bounded a chunk by its documents' values, but each pair's row it
 * holds carries its query's tokens too, so pairs of long queries and short documents filled the heap before the
 * bound was reached (16,384 pairs of a 128 x 128 query each hold 1 GiB of query copies). A pair's row now counts
 * all it holds.
 */
class HostileQueryCopiesTest {
  /** Scores 20,480 pairs of 128-token queries and 32-token documents in one partition on a 768 MB heap. */
  public static final class LongQueriesShortDocuments {
    public static void main(String[] args) {
      SparkSession spark = LocalSpark.builder().master("local[1]").getOrCreate();
      try {
        Dataset<Row> queries = tokens(spark, 160, 128, "q");
        Dataset<Row> docs = tokens(spark, 128, 32, "d");
        Dataset<Row> pairs = queries.select(col("id").as("query_id"))
            .crossJoin(docs.select(col("id").as("doc_id"))).repartition(1);
        List<Row> scored = PairScoring.score(pairs, "query_id", "doc_id", "score", EmbeddingTable.of(queries),
            EmbeddingTable.of(docs)).collectAsList();
        for (Row r : scored) {
          // every token of query q is (q % 7) / 100 in each of 128 dimensions, of document d (d % 5) / 100
          float want = 128 * 128 * (r.getLong(0) % 7) * (r.getLong(1) % 5) / 10_000f;
          if (Math.abs(r.getFloat(2) - want) > 1e-5f * Math.max(1, want)) {
            throw new AssertionError(r + " scored, expected " + want);
          }
        }
        System.out.println("scored " + scored.size());
      } finally {
        spark.stop();
      }
    }

    private static Dataset<Row> tokens(SparkSession spark, int rows, int length, String what) {
      Column value = col("id").mod(what.equals("q") ? 7 : 5).cast("float").divide(100).cast("float");
      return spark.range(rows).select(col("id"), array_repeat(array_repeat(value, 128), lit(length)).as("tokens"));
    }
  }

  @Test
  @Timeout(600)
  void pairsOfLongQueriesAreChunkedByAllTheirRowsHold() throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
        .toString()));
    // the Spark flags this JVM was started with (--add-opens and the like), its heap excepted
    ManagementFactory.getRuntimeMXBean().getInputArguments().stream().filter(a -> !a.startsWith("-Xmx"))
        .forEach(command::add);
    command.addAll(List.of("-Xmx768m", "-cp", System.getProperty("java.class.path"),
        LongQueriesShortDocuments.class.getName()));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(500, TimeUnit.SECONDS), "the child JVM ended");
    assertEquals(0, p.exitValue(), out);
    assertTrue(out.lines().anyMatch("scored 20480"::equals), out);
  }
}
