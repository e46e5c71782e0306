package dev.maxsim4j.spark;

import java.io.IOException;
import java.io.PrintStream;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The {@code spark-submit} entry point: exact top-k of a query table over a corpus, both Parquet with columns
 * {@code id} and {@code tokens} (and {@code mask} with {@code --mask mask}), written to {@code OUT/topk/}
 * (Parquet: query_id, doc_id, rank, score) and {@code OUT/run.trec}.
 *
 * <pre>
 * spark-submit --class dev.maxsim4j.spark.TopKJob maxsim4j-spark-VERSION-job.jar \
 *   --queries q.parquet --corpus corpus/ --k 100 --out run/
 * </pre>
 *
 * <p>A failure ends as one line on stderr and exit status 1 (2 for a bad command line); an existing output is
 * refused, not replaced.
 */
public final class TopKJob {
  private static final String PROGRAM = "maxsim4j-spark";
  private static final List<String> OPTIONS = List.of("--queries", "--corpus", "--k", "--out", "--tag", "--mask");

  private TopKJob() {}

  public static void main(String[] args) {
    int status = start(() -> SparkSession.builder().appName("maxsim4j top-k").getOrCreate(), args, System.err);
    if (status != 0) {
      System.exit(status);
    }
  }

  /**
   * Starts Spark, runs the job and stops Spark; a session that cannot start (a bad {@code --conf} value) is a
   * one-line failure like any other.
   */
  static int start(Supplier<SparkSession> session, String[] args, PrintStream err) {
    SparkSession spark;
    try {
      spark = session.get();
    } catch (Exception | OutOfMemoryError e) {
      return fail(err, e, JobFailure.describe(e), 1);
    }
    try {
      return run(spark, args, err);
    } finally {
      spark.stop();
    }
  }

  /** Runs the job on {@code spark}; returns the exit status, a failure reported as one line on {@code err}. */
  static int run(SparkSession spark, String[] args, PrintStream err) {
    try {
      JobOptions o = new JobOptions(args, OPTIONS);
      String mask = o.getOr("--mask", null);
      EmbeddingTable queries = table(spark, "--queries", o.require("--queries"), mask);
      EmbeddingTable corpus = table(spark, "--corpus", o.require("--corpus"), mask);
      int k = o.positiveInt("--k");
      String tag = TrecRun.checkField(o.getOr("--tag", "maxsim4j"), "--tag");
      Path out = new Path(o.require("--out"));
      Path parquet = new Path(out, "topk");
      Path trec = new Path(out, "run.trec");
      FileSystem fs = out.getFileSystem(spark.sparkContext().hadoopConfiguration());
      if (fs.exists(out) && !fs.getFileStatus(out).isDirectory()) {
        throw new IllegalArgumentException("--out " + out + " is a file; expected a folder to write the run in");
      }
      for (Path p : new Path[] {parquet, trec}) {
        if (fs.exists(p)) {
          throw new IllegalArgumentException("--out " + out + " already holds " + p.getName()
              + "; expected a new output folder (a previous run is not replaced)");
        }
      }
      // the Parquet run goes under a temporary name until the run file is written, so a failure leaves neither
      Path staged = new Path(out, ".topk." + UUID.randomUUID() + ".tmp");
      Dataset<Row> run = SparkMaxSim.topK(queries, corpus, k).persist();
      try {
        run.write().parquet(staged.toString());
        TrecRun.write(run, trec.toString(), tag);
        if (!fs.rename(staged, parquet)) {
          fs.delete(trec, false);
          throw new IOException("could not move " + staged + " to " + parquet);
        }
      } finally {
        run.unpersist();
        fs.delete(staged, true);
      }
      return 0;
    } catch (JobOptions.UsageError e) {
      return fail(err, e, e.getMessage() + " (usage: --queries Q.parquet --corpus CORPUS/ --k K --out OUT/"
          + " [--tag TAG] [--mask COLUMN])", 2);
    } catch (Exception | OutOfMemoryError e) {
      // Spark's AnalysisException (a missing path, a bad schema) is checked only to javac, so catch Exception
      return fail(err, e, JobFailure.describe(e), 1);
    }
  }

  /** The table at {@code path}; a missing or mistyped column is reported with the option that named it. */
  private static EmbeddingTable table(SparkSession spark, String option, String path, String mask) {
    Dataset<Row> data = spark.read().parquet(path);
    try {
      EmbeddingTable t = EmbeddingTable.of(data);
      return mask == null ? t : t.withMask(mask);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(option + " " + path + ": " + e.getMessage(), e);
    }
  }

  private static int fail(PrintStream err, Throwable e, String line, int status) {
    err.println(PROGRAM + ": " + line.replaceAll("\\p{Cntrl}", "?"));
    if ("1".equals(System.getenv("MAXSIM4J_DEBUG"))) {
      e.printStackTrace(err);
    }
    return status;
  }
}
