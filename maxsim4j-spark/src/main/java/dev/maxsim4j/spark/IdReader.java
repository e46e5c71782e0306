package dev.maxsim4j.spark;

import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters;
import org.apache.spark.sql.types.DataType;

/**
 * Reads the id (column 0) of a scan's internal rows as the external value a {@code Row} holds (a {@code Long},
 * a {@code String}, ...; a date or timestamp as {@link TimeIds} reads it), null for a null id. The getter for the
 * id's type is chosen once, when the reader is made: Spark's {@code InternalRow.get(ordinal, type)} looks the
 * type up on every call, and in a task thread each look-up builds a fresh copy of the SQL configuration.
 */
final class IdReader {
  private final scala.Function2<SpecializedGetters, Object, Object> getter;
  private final scala.Function1<Object, Object> toExternal;

  IdReader(DataType type) {
    getter = InternalRow.getAccessor(type, true);
    toExternal = TimeIds.applies(type) ? new TimeId(type) : CatalystTypeConverters.createToScalaConverter(type);
  }

  /** A date or timestamp id as {@link TimeIds} reads it, as the driver does, whatever the executor's time zone. */
  private static final class TimeId extends scala.runtime.AbstractFunction1<Object, Object> {
    private final DataType type;

    TimeId(DataType type) {
      this.type = type;
    }

    @Override
    public Object apply(Object internal) {
      return TimeIds.external(internal, type);
    }
  }

  Object read(InternalRow row) {
    return toExternal.apply(getter.apply(row, 0));
  }
}
