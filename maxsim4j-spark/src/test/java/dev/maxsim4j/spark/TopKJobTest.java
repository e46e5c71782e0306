package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TopKJobTest extends WithLocalSpark {

  private static String write(Corpus c, Path dir, String name, boolean bf16) {
    Dataset<Row> df = spark.createDataFrame(c.rows(), Corpus.ARRAYS).repartition(3);
    if (bf16) {
      df = df.withColumn("tokens", TokenColumns.encode(functions.col("tokens"), DType.BFLOAT16));
    }
    String path = dir.resolve(name).toString();
    df.write().parquet(path);
    return path;
  }

  /** The job's exit status and what it wrote to stderr. */
  record Result(int status, String err) {}

  /** Runs the job in this JVM's Spark session. */
  static Result run(String... args) {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = TopKJob.run(spark, args, new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Result(status, err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void writesTheRunAsParquetAndTrecAndRefusesToOverwriteIt(@TempDir Path dir) throws Exception {
    String queries = write(Corpus.random("q", 3, 4, 8, 31, 0), dir, "q.parquet", false);
    String corpus = write(Corpus.random("d", 25, 6, 8, 32, 5), dir, "corpus", true);
    String out = dir.resolve("run").toString();
    Result ok = run("--queries", queries, "--corpus", corpus, "--k", "4", "--out", out, "--mask", "mask");
    assertEquals(0, ok.status(), ok.err());
    List<String> lines = Files.readAllLines(dir.resolve("run/run.trec"));
    assertEquals(12, lines.size());
    assertTrue(lines.get(0).matches("q0 Q0 d\\d+ 1 -?[0-9.E-]+ maxsim4j"), lines.get(0));
    Dataset<Row> parquet = spark.read().parquet(dir.resolve("run/topk").toString());
    assertEquals(12, parquet.count());
    for (String line : lines) {
      String[] f = line.split(" ");
      Row row = parquet.where(functions.col("query_id").equalTo(f[0]).and(functions.col("rank")
          .equalTo(Integer.parseInt(f[3])))).first();
      assertEquals(f[2], row.getString(1));
      assertEquals(Float.parseFloat(f[4]), row.getFloat(3));
    }

    Result again = run("--queries", queries, "--corpus", corpus, "--k", "4", "--out", out, "--mask", "mask");
    assertEquals(1, again.status());
    assertTrue(again.err().startsWith("maxsim4j-spark: error: --out ") && again.err().contains("already holds"),
        again.err());
    assertEquals(1, again.err().lines().count());
  }

  @Test
  void aFailedRunLeavesNoOutputSoThatItCanBeRunAgain(@TempDir Path dir) throws Exception {
    String queries = write(Corpus.random("q", 2, 3, 8, 35, 0), dir, "q.parquet", false);
    String corpus = write(Corpus.random("d", 6, 3, 8, 36, 0), dir, "corpus", false);
    // ids a TREC line cannot hold are found while the run file is written, after the Parquet run
    String blanks = dir.resolve("blanks").toString();
    spark.read().parquet(corpus).withColumn("id", functions.concat(functions.col("id"), functions.lit(" x")))
        .write().parquet(blanks);
    Path out = dir.resolve("run");
    Result failed = run("--queries", queries, "--corpus", blanks, "--k", "3", "--out", out.toString());
    assertEquals(1, failed.status());
    assertTrue(failed.err().contains("document id 'd") && failed.err().contains("holds whitespace"), failed.err());
    assertEquals(List.of(), listed(out));

    // a document with NaN in a valid token ranks first with a NaN score, which a TREC line cannot order
    Corpus nan = Corpus.random("d", 6, 3, 8, 36, 0);
    nan.tokens().get(4)[0][3] = Float.NaN;
    String nans = write(nan, dir, "nans", false);
    Result notANumber = run("--queries", queries, "--corpus", nans, "--k", "3", "--out", out.toString());
    assertEquals(1, notANumber.status());
    assertTrue(notANumber.err().contains("and document 'd4' is NaN; expected a number"), notANumber.err());
    assertEquals(1, notANumber.err().lines().count(), notANumber.err());
    assertEquals(List.of(), listed(out));

    Result tag = run("--queries", queries, "--corpus", corpus, "--k", "3", "--out", out.toString(), "--tag", "a b");
    assertEquals(2, tag.status());
    assertTrue(tag.err().contains("--tag 'a b' is empty or holds whitespace"), tag.err());
    assertEquals(List.of(), listed(out));

    Result ok = run("--queries", queries, "--corpus", corpus, "--k", "3", "--out", out.toString());
    assertEquals(0, ok.status(), ok.err());
    assertEquals(List.of("run.trec", "topk"), listed(out));
    assertEquals(6, Files.readAllLines(out.resolve("run.trec")).size());

    Path file = Files.writeString(dir.resolve("file"), "x");
    Result onFile = run("--queries", queries, "--corpus", corpus, "--k", "3", "--out", file.toString());
    assertEquals(1, onFile.status());
    assertTrue(onFile.err().contains("is a file; expected a folder"), onFile.err());
    assertEquals("x", Files.readString(file));
    // a folder that cannot be made is found before any table is read (the queries here do not even exist)
    Result underFile = run("--queries", dir.resolve("none.parquet").toString(), "--corpus", corpus, "--k", "3",
        "--out", file.resolve("run").toString());
    assertEquals(1, underFile.status());
    assertTrue(underFile.err().contains("cannot be written") && underFile.err().contains("--out"), underFile.err());
    // a folder another job claimed: two jobs into one folder each found it new and left a table of one beside the
    // run file of the other (found by a hostile test)
    Path claimed = Files.createDirectories(dir.resolve("claimed"));
    Files.writeString(claimed.resolve(".maxsim4j-topk.claim"), "another job");
    Result busy = run("--queries", queries, "--corpus", corpus, "--k", "3", "--out", claimed.toString());
    assertEquals(1, busy.status());
    assertTrue(busy.err().contains("is being written by another job (.maxsim4j-topk.claim is there"), busy.err());
    assertEquals("another job", Files.readString(claimed.resolve(".maxsim4j-topk.claim")), "its claim is kept");
    assertTrue(!Files.exists(out.resolve(".maxsim4j-topk.claim")), "a job's own claim is removed when it ends");
  }

  /** The local file system, but the staged Parquet run cannot be renamed into place (as on a store that refuses). */
  public static final class RefusingTableRenames extends RawLocalFileSystem {
    @Override
    public boolean rename(org.apache.hadoop.fs.Path src, org.apache.hadoop.fs.Path dst) throws IOException {
      return !dst.getName().equals("topk") && super.rename(src, dst);
    }
  }

  @Test
  void aTableThatCannotBeMovedIntoPlaceTakesItsRunFileWithIt(@TempDir Path dir) throws Exception {
    String queries = write(Corpus.random("q", 2, 3, 8, 37, 0), dir, "q.parquet", false);
    String corpus = write(Corpus.random("d", 6, 3, 8, 38, 0), dir, "corpus", false);
    Path out = dir.resolve("run");
    Configuration conf = spark.sparkContext().hadoopConfiguration();
    String impl = conf.get("fs.file.impl");
    String noCache = conf.get("fs.file.impl.disable.cache");
    conf.set("fs.file.impl", RefusingTableRenames.class.getName());
    conf.setBoolean("fs.file.impl.disable.cache", true);
    Result failed;
    try {
      failed = run("--queries", queries, "--corpus", corpus, "--k", "3", "--out", out.toString());
    } finally {
      restore(conf, "fs.file.impl", impl);
      restore(conf, "fs.file.impl.disable.cache", noCache);
    }
    assertEquals(1, failed.status());
    assertTrue(failed.err().contains("could not move") && failed.err().contains("topk"), failed.err());
    // a run file without its table would be taken for a finished run, and block running the job again
    assertEquals(List.of(), listed(out));
  }

  private static void restore(Configuration conf, String key, String value) {
    if (value == null) {
      conf.unset(key);
    } else {
      conf.set(key, value);
    }
  }

  @Test
  void aRunOfOtherColumnTypesIsRefusedBeforeAnyLineIsWritten(@TempDir Path dir) {
    Dataset<Row> run = spark.sql("SELECT 'q1' AS query_id, 'd1' AS doc_id, CAST(1 AS BIGINT) AS rank, 0.5f AS score");
    Path file = dir.resolve("run.trec");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TrecRun.write(run, file.toString(), "tag"));
    assertEquals("topK column 'rank' is bigint; expected int as SparkMaxSim.topK writes it", e.getMessage());
    Dataset<Row> doubles = spark.sql("SELECT 'q1' AS query_id, 'd1' AS doc_id, 1 AS rank, 0.5d AS score");
    e = assertThrows(IllegalArgumentException.class, () -> TrecRun.write(doubles, file.toString(), "tag"));
    assertEquals("topK column 'score' is double; expected float as SparkMaxSim.topK writes it", e.getMessage());
    assertFalse(Files.exists(file));
  }

  @Test
  void aSessionThatCannotStartIsOneLine() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = TopKJob.start(() -> {
      throw new IllegalArgumentException("spark.executor.memory = 'lots'; expected a size\n\tat somewhere");
    }, new String[] {"--queries", "q", "--corpus", "c", "--k", "1", "--out", "o"},
        new PrintStream(err, true, StandardCharsets.UTF_8));
    assertEquals(1, status);
    assertEquals("maxsim4j-spark: error: spark.executor.memory = 'lots'; expected a size\n",
        err.toString(StandardCharsets.UTF_8));
  }

  /** The names in {@code folder} that are not Hadoop's checksum files, sorted; none when it does not exist. */
  private static List<String> listed(Path folder) throws Exception {
    if (!Files.exists(folder)) {
      return List.of();
    }
    try (var names = Files.list(folder)) {
      return names.map(p -> p.getFileName().toString()).filter(n -> !n.endsWith(".crc")).sorted().toList();
    }
  }

  @Test
  void failuresAreOneLine(@TempDir Path dir) {
    String queries = write(Corpus.random("q", 2, 3, 8, 33, 0), dir, "q.parquet", false);
    String wide = write(Corpus.random("d", 4, 3, 6, 34, 0), dir, "wide", false);
    String out = dir.resolve("run").toString();

    Result missing = run("--queries", queries, "--corpus", dir.resolve("nothing").toString(), "--k", "3",
        "--out", out);
    assertEquals(1, missing.status());
    assertTrue(missing.err().contains("does not exist") || missing.err().contains("PATH_NOT_FOUND"), missing.err());
    assertEquals(1, missing.err().lines().count(), missing.err());

    Result mismatch = run("--queries", queries, "--corpus", wide, "--k", "3", "--out", out);
    assertEquals(1, mismatch.status());
    assertTrue(mismatch.err().matches("maxsim4j-spark: error: tokens of document 'd\\d' have d = 6; expected d = 8 like"
        + " the queries\\R"), mismatch.err());
    assertEquals(1, mismatch.err().lines().count(), mismatch.err());
    assertFalse(Files.exists(dir.resolve("run/run.trec")));

    Result usage = run("--queries", queries, "--corpus", wide, "--k", "zero", "--out", out);
    assertEquals(2, usage.status());
    assertTrue(usage.err().contains("--k = 'zero'; expected an integer >= 1"), usage.err());
    String noMask = dir.resolve("nomask").toString();
    spark.read().parquet(wide).drop("mask").write().parquet(noMask);
    Result masked = run("--queries", queries, "--corpus", noMask, "--k", "3", "--out", out, "--mask", "mask");
    assertEquals(1, masked.status());
    assertTrue(masked.err().startsWith("maxsim4j-spark: error: --corpus " + noMask + ": mask column 'mask' is not"
        + " in the table"), masked.err());
    Result empty = run("--queries", queries, "--corpus", wide, "--k", "3", "--out", " ");
    assertEquals(2, empty.status());
    assertTrue(empty.err().contains("--out is empty; expected a value"), empty.err());
    Result unknown = run("--querys", queries);
    assertEquals(2, unknown.status());
    assertTrue(unknown.err().contains("unknown option '--querys'"), unknown.err());
  }
}
