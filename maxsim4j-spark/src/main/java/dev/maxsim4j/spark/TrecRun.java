package dev.maxsim4j.spark;

import static org.apache.spark.sql.functions.col;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Iterator;
import java.util.UUID;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DayTimeIntervalType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.types.YearMonthIntervalType;

/**
 * Writes a top-k result as a TREC run file, {@code query Q0 doc rank score tag} per line, by query and rank, to
 * any path Spark's Hadoop configuration reaches (local, HDFS, S3). The file is written beside the target under
 * a temporary name and then renamed, so a failed job leaves no half-written run. Infinite scores are written as
 * {@code Infinity} and {@code -Infinity}, which C's {@code strtod} and Python's {@code float} read in the order
 * top-k ranks them; a NaN score is refused, as readers that sort by score cannot place it.
 */
public final class TrecRun {
  private TrecRun() {}

  /**
   * Writes {@code topK} (columns {@code query_id, doc_id, rank, score}) to {@code path}, replacing a file there
   * once the new one is whole ({@link TopKJob} refuses to replace a run; this writer is the library's).
   */
  public static void write(Dataset<Row> topK, String path, String tag) throws IOException {
    if (topK == null || path == null || tag == null) {
      throw new IllegalArgumentException((topK == null ? "topK" : path == null ? "path" : "tag")
          + " is null; expected a top-k Dataset, a path and a run tag");
    }
    for (String c : new String[] {"query_id", "doc_id", "rank", "score"}) {
      if (!Arrays.asList(topK.columns()).contains(c)) {
        throw new IllegalArgumentException("topK has no column '" + c + "'; expected SparkMaxSim.topK's columns"
            + " query_id, doc_id, rank, score, it has " + Arrays.toString(topK.columns()));
      }
    }
    checkIdType(topK.schema().apply("query_id").dataType(), "query ids");
    checkIdType(topK.schema().apply("doc_id").dataType(), "document ids");
    checkType(topK, "rank", DataTypes.IntegerType);
    checkType(topK, "score", DataTypes.FloatType);
    checkField(tag, "run tag");
    Path target = new Path(path);
    FileSystem fs = target.getFileSystem(topK.sparkSession().sparkContext().hadoopConfiguration());
    if (fs.exists(target) && fs.getFileStatus(target).isDirectory()) {
      throw new IllegalArgumentException("run file " + path + " is a directory; expected a file to write");
    }
    Path temp = new Path(target.getParent(), "." + target.getName() + "." + UUID.randomUUID() + ".tmp");
    Iterator<Row> rows = topK.orderBy(col("query_id"), col("rank"))
        .select(asPrinted(topK, "query_id"), asPrinted(topK, "doc_id"), col("rank"), col("score")).toLocalIterator();
    try {
      java.io.OutputStream stream;
      try {
        stream = fs.create(temp, false);
      } catch (IOException e) {
        throw new IOException("run file " + path + " cannot be written: " + e.getMessage(), e);
      }
      try (Writer out = new BufferedWriter(new OutputStreamWriter(stream, StandardCharsets.UTF_8))) {
        while (rows.hasNext()) {
          Row r = rows.next();
          String query = checkField(r.get(0), "query id");
          String doc = checkField(r.get(1), "document id");
          if (r.isNullAt(2) || r.isNullAt(3)) {
            throw new IllegalArgumentException((r.isNullAt(2) ? "rank" : "score") + " of query "
                + IdText.quoted(query) + " and document " + IdText.quoted(doc)
                + " is null; a TREC run needs a rank and a score on every line");
          }
          float score = r.getFloat(3);
          if (Float.isNaN(score)) {
            throw new IllegalArgumentException("score of query " + IdText.quoted(query) + " and document "
                + IdText.quoted(doc) + " is NaN;"
                + " expected a number, since TREC readers order a run by score and NaN has no place in that order"
                + " (a NaN score comes from a NaN in a valid token: repair or drop that row)");
          }
          out.write(query + " Q0 " + doc + " " + r.getInt(2) + " " + score + " " + tag + "\n");
        }
      }
      replace(fs, temp, target);
    } finally {
      fs.delete(temp, false);
    }
  }

  /**
   * Column {@code name} as the run writes it: a date id as Spark prints it, formatted by Spark (a Row's java.sql.Date
   * names another day for dates before 1582-10-15 or outside years 1 to 9999, see IdValues).
   */
  private static Column asPrinted(Dataset<Row> topK, String name) {
    return IdValues.isTime(topK.schema().apply(name).dataType()) ? col(name).cast("string").as(name) : col(name);
  }

  /**
   * Moves the whole new run to {@code target}. A file system's rename does not replace (HDFS) or not atomically,
   * so an old run is first set aside under a side name, put back if the new one cannot take its place, and
   * deleted only once it has: at no moment is neither run on disk.
   */
  private static void replace(FileSystem fs, Path temp, Path target) throws IOException {
    Path old = null;
    if (fs.exists(target)) {
      old = new Path(target.getParent(), "." + target.getName() + "." + UUID.randomUUID() + ".old");
      if (!fs.rename(target, old)) {
        throw new IOException("could not move the old run " + target + " aside to " + old + "; it is unchanged");
      }
    }
    IOException failure = null; // some stores throw where others return false
    boolean moved = false;
    try {
      moved = fs.rename(temp, target);
    } catch (IOException e) {
      failure = e;
    }
    if (!moved) {
      String kept = old == null ? "" : fs.rename(old, target) ? "; the old run is unchanged"
          : "; the old run is kept as " + old;
      throw new IOException("could not move " + temp + " to " + target + kept, failure);
    }
    if (old != null) {
      fs.delete(old, false);
    }
  }

  /** The lines are written with getInt and getFloat, which fail mid-file on any other type. */
  private static void checkType(Dataset<Row> topK, String column, DataType expected) {
    DataType type = topK.schema().apply(column).dataType();
    if (!type.equals(expected)) {
      throw new IllegalArgumentException("topK column '" + column + "' is " + type.simpleString() + "; expected "
          + expected.simpleString() + " as SparkMaxSim.topK writes it");
    }
  }

  /**
   * Ids of a type whose text as Spark prints it holds a blank (a timestamp {@code 2020-01-01 00:00:00}, an interval
   * {@code INTERVAL '01' HOUR}) can be no TREC field that qrels cast from the same ids would match: refused from
   * their type, before any work, rather than at the first line written or as other text.
   */
  static void checkIdType(DataType type, String what) {
    if (type instanceof TimestampType || type instanceof TimestampNTZType || type instanceof DayTimeIntervalType
        || type instanceof YearMonthIntervalType) {
      throw new IllegalArgumentException(what + " are " + type.simpleString() + ", whose text as Spark prints it"
          + " holds a blank; a TREC run needs ids without blanks (cast them to strings of another form, e.g."
          + " date_format(id, \"yyyy-MM-dd'T'HH:mm:ss\") for timestamps)");
    }
  }

  /**
   * A TREC field is one whitespace-free token: an id with a blank would shift every column after it, and readers
   * split on more blanks than Java's whitespace (Python's split() on U+00A0 and U+0085), so any is refused.
   */
  static String checkField(Object value, String what) {
    if (value == null) {
      throw new IllegalArgumentException(what + " is null; a TREC run needs every id");
    }
    // a decimal as Spark prints it (0.0000000001, not 1E-10), so that qrels cast from the same ids match
    String text = value instanceof BigDecimal d ? d.toPlainString() : value.toString();
    if (text.isEmpty() || text.codePoints().anyMatch(c -> Character.isWhitespace(c) || Character.isSpaceChar(c)
        || Character.isISOControl(c))) {
      throw new IllegalArgumentException(what + " " + IdText.quoted(text) + " is empty or holds whitespace or a"
          + " control character; a TREC run needs ids without blanks");
    }
    return text;
  }
}
