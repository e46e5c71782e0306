package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ids that a TREC reader would split (any Unicode blank) or misread (a control character, null) are refused; an
 * old run survives a write that fails at any step.
 */
class HostileTrecRunTest extends WithLocalSpark {
  private static final StructType RUN = new StructType().add("query_id", DataTypes.StringType)
      .add("doc_id", DataTypes.StringType).add("rank", DataTypes.IntegerType).add("score", DataTypes.FloatType);

  @Test
  void idsWithUnicodeBlanksControlCharactersOrNullAreRefusedAndNoFileIsLeft(@TempDir Path dir) {
    // Python's str.split() (ir_measures, pytrec_eval loaders) splits on U+00A0, U+0085, U+2007 and U+202F
    // an empty id leaves two blanks in a row, which a reader splitting on runs of blanks takes as one
    for (String id : Arrays.asList("a\u00a0b", "a\u0085b", "a\u2007b", "a\u202fb", "a\u3000b", "a\u0000b", "", null)) {
      Dataset<Row> run = spark.createDataFrame(List.of(RowFactory.create("q1", "d0", 1, 2f),
          RowFactory.create("q1", id, 2, 1f)), RUN);
      Path file = dir.resolve("run.trec");
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> TrecRun.write(run, file.toString(), "t"), String.valueOf(id));
      assertTrue(e.getMessage().startsWith("document id"), e.getMessage());
      assertFalse(Files.exists(file), String.valueOf(id));
    }
  }

  /**
   * A hostile tester's findings: decimal ids were written as 1E-10 where Spark's text is 0.0000000001 (qrels cast
   * from the same ids matched nothing), and timestamp ids, whose text holds a blank, failed only at the first line.
   */
  @Test
  void decimalIdsAreWrittenAsSparkPrintsThemAndTimestampIdsAreRefusedFromTheirType(@TempDir Path dir)
      throws IOException {
    Path file = dir.resolve("run.trec");
    Dataset<Row> decimals = spark.sql("SELECT CAST(1E-10 AS DECIMAL(20,10)) AS query_id,"
        + " CAST(2 AS DECIMAL(20,10)) AS doc_id, 1 AS rank, 0.5f AS score");
    TrecRun.write(decimals, file.toString(), "t");
    assertEquals(List.of("0.0000000001 Q0 2.0000000000 1 0.5 t"), Files.readAllLines(file));
    assertEquals("0.0000000001", decimals.selectExpr("CAST(query_id AS STRING)").first().getString(0));
    Files.delete(file);
    Dataset<Row> times = spark.sql("SELECT 'q1' AS query_id, TIMESTAMP '2020-01-01 00:00:00' AS doc_id, 1 AS rank,"
        + " 0.5f AS score");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TrecRun.write(times, file.toString(), "t"));
    assertTrue(e.getMessage().startsWith("document ids are timestamp, whose text as Spark prints it holds a blank"),
        e.getMessage());
    assertFalse(Files.exists(file));
    Dataset<Row> intervals = spark.sql("SELECT INTERVAL '1' HOUR AS query_id, 'd1' AS doc_id, 1 AS rank,"
        + " 0.5f AS score");
    e = assertThrows(IllegalArgumentException.class, () -> TrecRun.write(intervals, file.toString(), "t"));
    assertTrue(e.getMessage().startsWith("query ids are interval hour, whose text"), e.getMessage());
  }

  @Test
  void aNullRankOrScoreIsRefusedNamingItsLineAndNoFileIsLeft(@TempDir Path dir) {
    Path file = dir.resolve("run.trec");
    for (Row bad : List.of(RowFactory.create("q1", "d1", null, 1f), RowFactory.create("q1", "d1", 2, null))) {
      Dataset<Row> run = spark.createDataFrame(List.of(RowFactory.create("q1", "d0", 1, 2f), bad), RUN);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> TrecRun.write(run, file.toString(), "t"), bad.toString());
      assertTrue(e.getMessage().matches("(rank|score) of query 'q1' and document 'd1' is null.*"), e.getMessage());
      assertFalse(Files.exists(file), bad.toString());
    }
  }

  @Test
  void aNaNScoreIsRefusedNamingItsLineAndNoFileIsLeft(@TempDir Path dir) {
    Path file = dir.resolve("run.trec");
    Dataset<Row> run = spark.createDataFrame(List.of(RowFactory.create("q1", "d0", 1, Float.NaN),
        RowFactory.create("q1", "d1", 2, 1f)), RUN);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TrecRun.write(run, file.toString(), "t"));
    assertTrue(e.getMessage().startsWith("score of query 'q1' and document 'd0' is NaN; expected a number"),
        e.getMessage());
    assertFalse(Files.exists(file));
  }

  @Test
  void infiniteScoresAreWrittenAsReadersParseThemInRankOrder(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("run.trec");
    Dataset<Row> run = spark.createDataFrame(List.of(RowFactory.create("q1", "d0", 1, Float.POSITIVE_INFINITY),
        RowFactory.create("q1", "d1", 2, -0f), RowFactory.create("q1", "d2", 3, Float.NEGATIVE_INFINITY)), RUN);
    TrecRun.write(run, file.toString(), "t");
    List<String> lines = Files.readAllLines(file);
    assertEquals(List.of("q1 Q0 d0 1 Infinity t", "q1 Q0 d1 2 -0.0 t", "q1 Q0 d2 3 -Infinity t"), lines);
    double previous = Double.POSITIVE_INFINITY;
    for (String line : lines) { // Double.parseDouble reads these spellings as strtod and Python's float do
      double score = Double.parseDouble(line.split(" ")[4]);
      assertTrue(score <= previous, line);
      previous = score;
    }
  }

  @Test
  void aRunPathThatIsAFolderIsRefusedAndTheFolderKept(@TempDir Path dir) throws IOException {
    // replacing it as an old run would move the folder aside and fail to delete what it holds
    Path folder = Files.createDirectories(dir.resolve("run.trec"));
    Files.writeString(folder.resolve("notes.txt"), "kept");
    Dataset<Row> run = spark.createDataFrame(List.of(RowFactory.create("q1", "d1", 1, 2f)), RUN);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TrecRun.write(run, folder.toString(), "t"));
    assertEquals("run file " + folder + " is a directory; expected a file to write", e.getMessage());
    assertEquals("kept", Files.readString(folder.resolve("notes.txt")));
    try (var left = Files.list(dir)) {
      assertEquals(List.of(folder), left.toList(), "no side file is left");
    }
  }

  @Test
  void aTagWithAUnicodeBlankIsAUsageError() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = TopKJob.start(() -> {
      throw new AssertionError("the session must not start");
    }, new String[] {"--queries", "q", "--corpus", "c", "--k", "5", "--out", "o", "--tag", "run\u00a01"},
        new PrintStream(err, true, StandardCharsets.UTF_8));
    assertEquals(2, status, err.toString(StandardCharsets.UTF_8));
  }

  /** The local file system, but a finished run cannot be renamed into place (as on a store that refuses it). */
  public static final class RefusingRenames extends RawLocalFileSystem {
    @Override
    public boolean rename(org.apache.hadoop.fs.Path src, org.apache.hadoop.fs.Path dst) throws IOException {
      return !src.getName().endsWith(".tmp") && super.rename(src, dst);
    }
  }

  @Test
  void anOldRunSurvivesANewOneThatCannotTakeItsPlace(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("run.trec");
    Files.writeString(file, "q0 Q0 d0 1 1.0 old\n");
    Dataset<Row> run = spark.createDataFrame(List.of(RowFactory.create("q1", "d1", 1, 2f)), RUN);
    Configuration conf = spark.sparkContext().hadoopConfiguration();
    conf.set("fs.file.impl", RefusingRenames.class.getName());
    conf.setBoolean("fs.file.impl.disable.cache", true);
    try {
      IOException e = assertThrows(IOException.class, () -> TrecRun.write(run, file.toString(), "new"));
      assertTrue(e.getMessage().contains("the old run is unchanged"), e.getMessage());
    } finally {
      conf.unset("fs.file.impl");
      conf.unset("fs.file.impl.disable.cache");
    }
    assertEquals("q0 Q0 d0 1 1.0 old\n", Files.readString(file));
    try (var left = Files.list(dir)) {
      assertEquals(List.of(file), left.toList(), "no side file is left");
    }
    TrecRun.write(run, file.toString(), "new");
    assertEquals("q1 Q0 d1 1 2.0 new\n", Files.readString(file));
    try (var left = Files.list(dir)) { // Hadoop's local file system keeps a checksum beside the run
      assertEquals(List.of(), left.map(f -> f.getFileName().toString())
          .filter(f -> f.contains(".tmp") || f.contains(".old")).toList(), "no side file is left");
    }
  }
}
