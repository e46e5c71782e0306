package dev.maxsim4j.spark;

import static dev.maxsim4j.spark.TopKJobTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.spark.TopKJobTest.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HostileJobAttackTest extends WithLocalSpark {
  private static final StructType PLAIN = new StructType().add("id", DataTypes.StringType)
      .add("tokens", TokenColumns.ARRAYS);

  /** An output folder whose run a table's pattern would match, as the run's own folder, is the table's. */
  @Test
  void anOutputFolderWhoseRunAGlobOfTheCorpusMatchesIsRefused(@TempDir Path dir) {
    assertRefusedWhereTheGlobMatchesTheRun(dir, "corpus", dir.resolve("corpus") + "/*");
  }

  /** Braces holding a '/' are whole alternative patterns to Hadoop, so one of them matching the run refuses it. */
  @Test
  void bracesThatSpanFoldersAreExpandedBeforeTheyAreMatched(@TempDir Path dir) {
    assertRefusedWhereTheGlobMatchesTheRun(dir, "a/corpus", dir + "/{b,a/corpus}/*");
  }

  /**
   * Spark qualifies a relative pattern against the working folder before Hadoop expands its braces, so an
   * alternative written with a leading '/' inside a relative pattern still lies below the working folder.
   */
  @Test
  void aRelativePatternIsQualifiedBeforeItsBracesAreExpanded() throws Exception {
    String cwd = Path.of(System.getProperty("user.dir")).toRealPath().toString();
    List<String> tables = TopKJob.tablesOf(spark, "{/abs/x,rel}/*").stream()
        .map(p -> p.toUri().getPath()).toList();
    assertEquals(List.of(cwd + "/abs/x/*", cwd + "/rel/*"), tables);
  }

  /** A corpus in {@code dir/folder} read by {@code glob}: a run into that folder is refused and the table kept. */
  private void assertRefusedWhereTheGlobMatchesTheRun(Path dir, String folder, String glob) {
    String queries = dir.resolve("queries").toString();
    String corpus = dir.resolve(folder).toString();
    spark.createDataFrame(List.of(RowFactory.create("q", new float[][] {{1, 0}})), PLAIN).write().parquet(queries);
    spark.createDataFrame(List.of(RowFactory.create("x", new float[][] {{1, 0}}),
        RowFactory.create("y", new float[][] {{0, 1}})), PLAIN).write().parquet(corpus);
    assertEquals(2, spark.read().parquet(glob).count());
    Result r = run("--queries", queries, "--corpus", glob, "--k", "2", "--out", corpus);
    assertEquals(1, r.status(), "the run was written into the corpus's pattern: " + r.err());
    assertTrue(r.err().contains(" lies in --corpus " + glob), r.err());
    assertEquals(2, spark.read().parquet(glob).count());
  }

  /**
   * A pattern two levels below the output folder matches the Parquet files the run writes into OUT/topk (refused);
   * one whose last level names another file, or one deeper still, cannot reach them (run).
   */
  @Test
  void patternsBelowTheOutputFolderAreRefusedOnlyWhereTheyMatchTheRunsFiles(@TempDir Path dir) {
    String queries = dir.resolve("queries").toString();
    spark.createDataFrame(List.of(RowFactory.create("q", new float[][] {{1, 0}})), PLAIN).write().parquet(queries);
    List<Row> rows = List.of(RowFactory.create("x", new float[][] {{1, 0}}),
        RowFactory.create("y", new float[][] {{0, 1}}));
    spark.createDataFrame(rows, PLAIN).write().parquet(dir.resolve("data/c").toString());
    spark.createDataFrame(rows, PLAIN).write().parquet(dir.resolve("named/a/corpus").toString());
    spark.createDataFrame(rows, PLAIN).write().parquet(dir.resolve("deep/a/b/corpus").toString());
    String files = dir.resolve("data") + "/*/*.parquet";
    Result refused = run("--queries", queries, "--corpus", files, "--k", "2", "--out", dir.resolve("data").toString());
    assertEquals(1, refused.status(), refused.err());
    assertTrue(refused.err().contains(" lies in --corpus " + files), refused.err());
    spark.createDataFrame(rows, PLAIN).write().option("compression", "zstd").parquet(dir.resolve("z/c").toString());
    String zstd = dir.resolve("z") + "/*/*.zstd.parquet"; // the run's files, should the session write zstd
    Result other = run("--queries", queries, "--corpus", zstd, "--k", "2", "--out", dir.resolve("z").toString());
    assertEquals(1, other.status(), other.err());
    assertTrue(other.err().contains(" lies in --corpus " + zstd), other.err());
    String named = dir.resolve("named") + "/*/corpus";
    Result free = run("--queries", queries, "--corpus", named, "--k", "2", "--out", dir.resolve("named").toString());
    assertEquals(0, free.status(), free.err());
    assertEquals(2, spark.read().parquet(named).count());
    String deep = dir.resolve("deep") + "/*/*/corpus";
    Result deeper = run("--queries", queries, "--corpus", deep, "--k", "2", "--out",
        dir.resolve("deep/runs").toString());
    assertEquals(0, deeper.status(), deeper.err());
    assertEquals(2, spark.read().parquet(deep).count());
  }

  /** A document id holding a line break: the job's one line still says what is wrong with the document. */
  @Test
  void anIdWithALineBreakKeepsTheReasonOnTheLine(@TempDir Path dir) {
    String queries = dir.resolve("queries").toString();
    String corpus = dir.resolve("corpus").toString();
    spark.createDataFrame(List.of(RowFactory.create("q", new float[][] {{1, 0}})), PLAIN).write().parquet(queries);
    spark.createDataFrame(List.of(RowFactory.create("x\ny", new float[][] {{1, 0, 0}})), PLAIN).write()
        .parquet(corpus);
    Result r = run("--queries", queries, "--corpus", corpus, "--k", "2", "--out", dir.resolve("out").toString());
    assertEquals(1, r.status());
    assertEquals(1, r.err().lines().count(), r.err());
    assertEquals("maxsim4j-spark: error: tokens of document 'x\\ny' have d = 3; expected d = 2 like the queries\n",
        r.err());
  }

  /** A run file where no file can be written (under a file): an error naming it, nothing left behind. */
  @Test
  void aRunFileThatCannotBeWrittenAndTheSameJobTwice(@TempDir Path dir) throws Exception {
    Path file = Files.writeString(dir.resolve("file"), "x");
    Dataset<Row> run = spark.sql("SELECT 'q1' AS query_id, 'd1' AS doc_id, 1 AS rank, 0.5f AS score");
    Exception e = assertThrows(Exception.class, () -> TrecRun.write(run, file.resolve("run.trec").toString(), "t"));
    assertTrue(e.getMessage().contains("run.trec"), e.getMessage());
    assertEquals("x", Files.readString(file));
    String queries = dir.resolve("queries").toString();
    spark.createDataFrame(List.of(RowFactory.create("q", new float[][] {{1, 0}})), PLAIN).write().parquet(queries);
    Result r = run("--queries", queries, "--corpus", queries, "--k", "2", "--out", file.resolve("out").toString());
    assertEquals(1, r.status());
    assertEquals(1, r.err().lines().count(), r.err());
    Path out = dir.resolve("out");
    Result first = run("--queries", queries, "--corpus", queries, "--k", "2", "--out", out.toString());
    assertEquals(0, first.status(), first.err());
    String trec = Files.readString(out.resolve("run.trec"));
    Result second = run("--queries", queries, "--corpus", queries, "--k", "2", "--out", out.toString());
    assertEquals(1, second.status());
    assertEquals(trec, Files.readString(out.resolve("run.trec")));
  }
}
