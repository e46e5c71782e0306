package dev.maxsim4j.spark;

import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Reads the id (a column of a scan's internal rows) as the external value a {@code Row} holds (a {@code Long},
 * a {@code String}, ...; a date, timestamp or string as {@link IdValues} reads it), null for a null id. The getter
 * for the id's type is chosen once, when the reader is made: Spark's {@code InternalRow.get(ordinal, type)} looks the
 * type up on every call, and in a task thread each look-up builds a fresh copy of the SQL configuration.
 */
final class IdReader {
  private final scala.Function2<SpecializedGetters, Object, Object> getter;
  private final scala.Function1<Object, Object> toExternal;
  private final int column;

  /** A reader of ids of {@code type} in column 0; {@code what} names them in an error ("document id"). */
  IdReader(DataType type, String what) {
    this(type, 0, what);
  }

  /** A reader of ids of {@code type} in {@code column}; {@code what} names them in an error ("document id"). */
  IdReader(DataType type, int column, String what) {
    this.column = column;
    getter = InternalRow.getAccessor(type, true);
    toExternal = IdValues.isTime(type) || IdValues.isText(type) ? new AsIdValues(type, what)
        : CatalystTypeConverters.createToScalaConverter(type);
  }

  /** An id {@link IdValues} reads, as the driver does, whatever the executor's time zone. */
  private static final class AsIdValues extends scala.runtime.AbstractFunction1<Object, Object> {
    private final DataType type;
    private final String what;

    AsIdValues(DataType type, String what) {
      this.type = type;
      this.what = what;
    }

    @Override
    public Object apply(Object internal) {
      return internal instanceof UTF8String s ? IdValues.text(s, what) : IdValues.external(internal, type, what);
    }
  }

  Object read(InternalRow row) {
    return toExternal.apply(getter.apply(row, column));
  }
}
