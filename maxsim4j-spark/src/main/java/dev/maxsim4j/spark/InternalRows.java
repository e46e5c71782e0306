package dev.maxsim4j.spark;

import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters;
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
    if (!(source.sparkSession() instanceof org.apache.spark.sql.classic.SparkSession session)) {
      throw new IllegalArgumentException("the Datasets are of a " + source.sparkSession().getClass().getName()
          + "; expected a classic SparkSession (the scorers build their results of Spark's internal rows, which a"
          + " Spark Connect client does not hold)");
    }
    return session.internalCreateDataFrame(rows.rdd(), schema, false);
  }

  /**
   * Copies a row's first columns, as Spark holds them, and adds a score. Each column's getter is chosen once, when
   * the copier is made: {@code InternalRow.get(ordinal, type)} looks the type up on every call, and in a task thread
   * each look-up builds a fresh copy of the SQL configuration.
   */
  static final class WithScore {
    private final scala.Function2<SpecializedGetters, Object, Object>[] getters;

    /** A copier of the first {@code width} columns of rows whose columns are of {@code types}. */
    @SuppressWarnings("unchecked")
    WithScore(DataType[] types, int width) {
      getters = new scala.Function2[width];
      for (int c = 0; c < width; c++) {
        getters[c] = InternalRow.getAccessor(types[c], true);
      }
    }

    /** The first columns of {@code row}, which is not reused (a copy), then {@code score}. */
    InternalRow of(InternalRow row, float score) {
      Object[] values = new Object[getters.length + 1];
      for (int c = 0; c < getters.length; c++) {
        values[c] = getters[c].apply(row, c);
      }
      values[getters.length] = score;
      return new GenericInternalRow(values);
    }
  }
}
