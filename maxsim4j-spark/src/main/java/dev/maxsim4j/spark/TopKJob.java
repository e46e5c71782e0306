package dev.maxsim4j.spark;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.GlobExpander;
import org.apache.hadoop.fs.GlobPattern;
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
 * <p>A failure ends as one line on stderr and exit status 1 (2 for a bad command line), followed by its stack
 * trace where the environment variable {@code MAXSIM4J_DEBUG} is 1 (as for the {@code maxsim4j} command line); an
 * existing output is refused, not replaced, and so is an output folder in an input table's folder.
 */
public final class TopKJob {
  private static final String PROGRAM = "maxsim4j-spark";
  /**
   * What a quoted path or value must not bring into the one-line error: control characters, line and paragraph
   * separators, direction marks (they could forge a line or a name) and lone surrogates.
   */
  private static final String LINE_BREAKERS =
      "[\\p{Cc}\\p{Cs}\\u2028\\u2029\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]";
  private static final List<String> OPTIONS = List.of("--queries", "--corpus", "--k", "--out", "--tag", "--mask");

  private TopKJob() {}

  public static void main(String[] args) {
    int status = start(() -> SparkSession.builder().appName("maxsim4j top-k").getOrCreate(), args, System.err);
    if (status != 0) {
      System.exit(status);
    }
  }

  /**
   * Checks the command line, starts Spark, runs the job and stops Spark; a bad command line fails before Spark
   * starts, and a session that cannot start (a bad {@code --conf} value) is a one-line failure like any other.
   * The failure's line is printed after Spark has stopped, so that it is the last line of stderr and not buried
   * in Spark's shutdown log.
   */
  static int start(Supplier<SparkSession> session, String[] args, PrintStream err) {
    try {
      Request.parse(args);
    } catch (JobOptions.UsageError e) {
      return usage(err, e);
    }
    SparkSession spark;
    try {
      spark = session.get();
    } catch (Exception | OutOfMemoryError e) {
      return fail(err, e, JobFailure.describe(e), 1);
    }
    ByteArrayOutputStream failure = new ByteArrayOutputStream();
    int status = 1;
    try {
      status = run(spark, args, new PrintStream(failure, true, StandardCharsets.UTF_8));
    } finally {
      // the exit status reaches Spark's listeners and event log, as a failed application's should
      spark.sparkContext().stop(status);
      err.print(failure.toString(StandardCharsets.UTF_8));
      err.flush();
    }
    return status;
  }

  /** Runs the job on {@code spark}; returns the exit status, a failure reported as one line on {@code err}. */
  static int run(SparkSession spark, String[] args, PrintStream err) {
    Request request;
    try {
      request = Request.parse(args);
    } catch (JobOptions.UsageError e) {
      return usage(err, e);
    }
    try {
      run(spark, request);
      return 0;
    } catch (Exception | OutOfMemoryError e) {
      // Spark's AnalysisException (a missing path, a bad schema) is checked only to javac, so catch Exception
      return fail(err, e, JobFailure.describe(e), 1);
    }
  }

  private static void run(SparkSession spark, Request request) throws IOException {
    Path out = new Path(request.out());
    Path parquet = new Path(out, "topk");
    Path trec = new Path(out, "run.trec");
    // the output is checked first: a run that could not be written is refused before any table is read
    FileSystem fs = out.getFileSystem(spark.sparkContext().hadoopConfiguration());
    refuseInside(spark, out, "--queries", request.queries());
    refuseInside(spark, out, "--corpus", request.corpus());
    if (fs.exists(out) && !fs.getFileStatus(out).isDirectory()) {
      throw new IllegalArgumentException("--out " + out + " is a file; expected a folder to write the run in");
    }
    // the folder is claimed first, by a file only one job creates: two jobs into one --out each found it new and
    // left a table of one beside the run file of the other. Where creating is not exclusive (a local file system
    // checks, then creates), the claim holds this job's token, and of two jobs that both created it only the last
    // writer's token is there when they write their runs
    Path claim = new Path(out, ".maxsim4j-topk.claim");
    String token = UUID.randomUUID().toString();
    try {
      fs.mkdirs(out);
      try (var stream = fs.create(claim, false)) {
        stream.write(token.getBytes(StandardCharsets.UTF_8));
      }
    } catch (IOException e) {
      if (exists(fs, claim)) {
        throw new IllegalArgumentException("--out " + out + " is being written by another job (" + claim.getName()
            + " is there; remove it if no job runs); expected an output folder of this job's own");
      }
      throw new IllegalArgumentException("--out " + out + " cannot be written (" + e.getMessage()
          + "); expected a folder this job can write in");
    }
    try {
      for (Path p : new Path[] {parquet, trec}) {
        if (fs.exists(p)) {
          throw new IllegalArgumentException("--out " + out + " already holds " + p.getName()
              + "; expected a new output folder (a previous run is not replaced)");
        }
      }
      write(spark, request, fs, out, parquet, trec, () -> requireClaim(fs, out, claim, token));
    } finally {
      if (holds(fs, claim, token)) {
        fs.delete(claim, false);
      }
    }
  }

  /** Whether {@code path} is there; false where that cannot be told (a folder under a file). */
  private static boolean exists(FileSystem fs, Path path) {
    try {
      return fs.exists(path);
    } catch (IOException e) {
      return false;
    }
  }

  /** Whether {@code claim} holds {@code token}: this job's claim on its output folder. */
  private static boolean holds(FileSystem fs, Path claim, String token) {
    try (var in = fs.open(claim)) {
      return token.equals(new String(in.readNBytes(64), StandardCharsets.UTF_8));
    } catch (IOException e) {
      return false;
    }
  }

  private static void requireClaim(FileSystem fs, Path out, Path claim, String token) {
    if (!holds(fs, claim, token)) {
      throw new IllegalArgumentException("--out " + out + " was claimed by another job meanwhile (" + claim.getName()
          + "); expected an output folder of this job's own");
    }
  }

  private static void write(SparkSession spark, Request request, FileSystem fs, Path out, Path parquet, Path trec,
      Runnable stillOurs) throws IOException {
    EmbeddingTable queries = table(spark, "--queries", request.queries(), request.mask());
    EmbeddingTable corpus = table(spark, "--corpus", request.corpus(), request.mask());
    TrecRun.checkIdType(queries.idType(), "--queries " + request.queries() + ": ids");
    TrecRun.checkIdType(corpus.idType(), "--corpus " + request.corpus() + ": ids");
    // the Parquet run goes under a temporary name until the run file is written, so a failure leaves neither
    Path staged = new Path(out, ".topk." + UUID.randomUUID() + ".tmp");
    Dataset<Row> run = SparkMaxSim.topK(queries, corpus, request.k()).persist();
    boolean wrote = false;
    boolean moved = false;
    try {
      run.write().parquet(staged.toString());
      stillOurs.run();
      TrecRun.write(run, trec.toString(), request.tag());
      wrote = true;
      if (!fs.rename(staged, parquet)) {
        throw new IOException("could not move " + staged + " to " + parquet);
      }
      moved = true;
    } finally {
      run.unpersist();
      fs.delete(staged, true);
      if (wrote && !moved) { // a rename that threw, as some stores do, must not leave the run file without its table
        fs.delete(trec, false);
      }
    }
  }

  /**
   * Refuses an output folder that is an input table's folder or lies in it, or in a path a table's pattern matches
   * (Spark expands {@code *?[]{}} and {@code \} escapes in it as Hadoop globs): the run written there would make
   * the table unreadable as Parquet the next time it is read.
   */
  private static void refuseInside(SparkSession spark, Path out, String option, String input) throws IOException {
    List<Path> tables = tablesOf(spark, input);
    Path folder = real(out.getFileSystem(spark.sparkContext().hadoopConfiguration()).makeQualified(out));
    // what the run writes, not the folder alone: a pattern such as corpus/* matches OUT/topk and OUT/run.trec where
    // OUT is the corpus's folder, and corpus/*/* the files in topk, though neither matches a folder that holds them
    Path topK = new Path(folder, "topk");
    List<Path> written = new ArrayList<>(List.of(topK, new Path(folder, "run.trec"), new Path(topK, "_SUCCESS")));
    for (String codec : PARQUET_CODECS) {
      written.add(new Path(topK, PART_FILE + codec + ".parquet"));
    }
    for (Path table : tables) {
      boolean glob = table.toUri().getPath().chars().anyMatch(c -> GLOB.indexOf(c) >= 0);
      for (Path w : written) {
        boolean inside = false;
        for (Path p = w; p != null && !inside; p = p.getParent()) {
          inside = p.equals(table) || glob && matches(table, p);
        }
        if (inside) {
          throw new IllegalArgumentException("--out " + out + " lies in " + option + " " + input
              + "; expected an output folder outside the input tables (the run would be read as part of the table)");
        }
      }
    }
  }

  /**
   * The paths or patterns table {@code input} reads, qualified as Spark qualifies it (against the working folder)
   * before Hadoop's globber expands braces that span a '/' ({@code {corpus,old/corpus}}) into whole patterns; none
   * where it cannot be resolved, which is reported with its option where the table is read.
   */
  static List<Path> tablesOf(SparkSession spark, String input) {
    Path qualified;
    try {
      Path in = new Path(input);
      qualified = in.getFileSystem(spark.sparkContext().hadoopConfiguration()).makeQualified(in);
    } catch (IOException | IllegalArgumentException e) {
      return List.of();
    }
    List<String> pieces;
    try {
      pieces = GlobExpander.expand(qualified.toUri().getPath());
    } catch (IOException e) {
      return List.of();
    } catch (LinkageError e) {
      // Hadoop's expander is not a public API: without it, the pattern is matched as it stands
      pieces = List.of(qualified.toUri().getPath());
    }
    List<Path> tables = new ArrayList<>();
    for (String piece : pieces) {
      try {
        tables.add(real(new Path(qualified.toUri().getScheme(), qualified.toUri().getAuthority(), piece)));
      } catch (IllegalArgumentException e) {
        // a piece Hadoop cannot name reads nothing
      }
    }
    return tables;
  }

  /** A name of the kind Spark gives the Parquet files it writes into a folder, before the codec's ending. */
  private static final String PART_FILE = "part-00000-00000000-0000-0000-0000-000000000000-c000";

  /** Parquet's file endings per compression codec (none, snappy, gzip, lzo, brotli, lz4, zstd, lz4_raw). */
  private static final List<String> PARQUET_CODECS =
      List.of("", ".snappy", ".gz", ".lzo", ".br", ".lz4hadoop", ".zstd", ".lz4raw");

  /** The characters that make a table's path a Hadoop glob, as Spark tells one. */
  private static final String GLOB = "*?[]{}\\";

  /**
   * Whether glob {@code pattern} matches {@code path} (both qualified), a component against a component as Hadoop's
   * globber matches them ({@code *} never spans a {@code /}; braces holding a {@code /} are expanded before). A
   * component that is no valid glob on its own matches nothing: the read names a pattern Hadoop cannot read either.
   */
  static boolean matches(Path pattern, Path path) {
    if (pattern.depth() != path.depth()
        || !java.util.Objects.equals(pattern.toUri().getScheme(), path.toUri().getScheme())
        || !java.util.Objects.equals(pattern.toUri().getAuthority(), path.toUri().getAuthority())) {
      return false;
    }
    try {
      for (Path q = pattern, p = path; q.getParent() != null; q = q.getParent(), p = p.getParent()) {
        String name = q.getName();
        boolean literal = name.chars().noneMatch(c -> GLOB.indexOf(c) >= 0);
        if (literal ? !name.equals(p.getName()) : !new GlobPattern(name).matches(p.getName())) {
          return false;
        }
      }
      return true;
    } catch (RuntimeException e) { // re2j's error on a pattern it cannot compile
      return false;
    }
  }

  /**
   * A local path with the links of its longest existing part resolved (an output folder reached through a link into
   * an input table lies in that table); any other file system's path as it is.
   */
  private static Path real(Path qualified) {
    if (!"file".equals(qualified.toUri().getScheme())) {
      return qualified;
    }
    try {
      java.nio.file.Path local = java.nio.file.Path.of(qualified.toUri());
      java.nio.file.Path existing = local;
      while (existing != null && !java.nio.file.Files.exists(existing)) {
        existing = existing.getParent();
      }
      if (existing == null) {
        return qualified;
      }
      java.nio.file.Path real = existing.toRealPath().resolve(existing.relativize(local)).normalize();
      // as makeQualified writes a local path ("file:/a/b"), so that equal folders compare equal
      return new Path(qualified.toUri().getScheme(), qualified.toUri().getAuthority(), real.toString());
    } catch (IOException | RuntimeException e) {
      return qualified; // compared as written: the write reports what is wrong with it
    }
  }

  /** The job's command line, checked. */
  private record Request(String queries, String corpus, String mask, int k, String tag, String out) {
    static Request parse(String[] args) {
      JobOptions o = new JobOptions(args, OPTIONS);
      Request r = new Request(o.require("--queries"), o.require("--corpus"), o.getOr("--mask", null),
          o.positiveInt("--k"), o.getOr("--tag", "maxsim4j"), o.require("--out"));
      try {
        TrecRun.checkField(r.tag(), "--tag");
      } catch (IllegalArgumentException e) {
        throw new JobOptions.UsageError(e.getMessage());
      }
      return r;
    }
  }

  private static int usage(PrintStream err, JobOptions.UsageError e) {
    return fail(err, e, e.getMessage() + " (usage: --queries Q.parquet --corpus CORPUS/ --k K --out OUT/"
        + " [--tag TAG] [--mask COLUMN])", 2);
  }

  /**
   * The table at {@code path}; a path that cannot be read, or a missing or mistyped column, is reported with the
   * option that named it.
   */
  private static EmbeddingTable table(SparkSession spark, String option, String path, String mask) {
    Dataset<Row> data;
    try {
      data = spark.read().parquet(path);
    } catch (Exception e) { // Spark's AnalysisException (a missing path) is checked only to javac
      throw new IllegalArgumentException(option + " " + path + " cannot be read as Parquet: "
          + (e.getMessage() == null ? e.toString() : e.getMessage()), e);
    }
    try {
      EmbeddingTable t = EmbeddingTable.of(data);
      return mask == null ? t : t.withMask(mask);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(option + " " + path + ": " + e.getMessage(), e);
    }
  }

  private static int fail(PrintStream err, Throwable e, String line, int status) {
    err.println(PROGRAM + ": " + line.replaceAll(LINE_BREAKERS, "?"));
    if ("1".equals(System.getenv("MAXSIM4J_DEBUG"))) {
      e.printStackTrace(err);
    }
    return status;
  }
}
