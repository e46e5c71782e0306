package dev.maxsim4j.spark;

import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * Results made of Spark's internal rows, as the scorers read their input: a caller's columns pass through as the
 * values Spark holds, where a {@code Row} would change some (a string that is not UTF-8 read as U+FFFD, a date of the
 * Julian calendar's gap read back as 1582-10-15, an interval of days as one of days to seconds) and the schema keeps
 * every type, nullability and metadata.
 */
final class InternalRows {
  private InternalRows() {}

  /** {@code rows} as a DataFrame of {@code schema}, in the session of {@code source}. */
  static Dataset<Row> dataFrame(Dataset<Row> source, JavaRDD<InternalRow> rows, StructType schema) {
    // the classic session builds a DataFrame of internal rows; a Spark Connect client has no such rows to give
    return ((org.apache.spark.sql.classic.SparkSession) source.sparkSession())
        .internalCreateDataFrame(rows.rdd(), schema, false);
  }

  /** The first {@code width} columns of {@code row} (of column {@code types}), then {@code score}. */
  static InternalRow withScore(InternalRow row, int width, DataType[] types, float score) {
    Object[] values = new Object[width + 1];
    for (int c = 0; c < width; c++) {
      values[c] = row.isNullAt(c) ? null : row.get(c, types[c]);
    }
    values[width] = score;
    return new GenericInternalRow(values);
  }
}
