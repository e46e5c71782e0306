package dev.maxsim4j.spark;

import static org.apache.spark.sql.functions.unix_date;
import static org.apache.spark.sql.functions.unix_micros;

import java.time.Instant;
import java.time.LocalDate;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.TimestampType;

/**
 * Ids of Spark's date and timestamp types as {@code java.time} values, which {@code createDataFrame} takes back as
 * they were. A {@code Row} holds them as {@code java.sql.Date} and {@code Timestamp} unless the session enables
 * Spark's Java 8 API: those depend on the JVM's time zone (a driver and executors in other zones name another day)
 * and on the old Julian calendar (dates before 1582-10-15, or outside years 1 to 9999, come back as other dates).
 * The library therefore reads such ids as days or microseconds since the epoch, never through those classes.
 */
final class TimeIds {
  private TimeIds() {}

  /** Whether ids of {@code type} are read as a count since the epoch. */
  static boolean applies(DataType type) {
    return type instanceof DateType || type instanceof TimestampType;
  }

  /** {@code id} as a driver collects it: days (a date) or microseconds (a timestamp) since the epoch. */
  static Column collected(Column id, DataType type) {
    return type instanceof DateType ? unix_date(id) : type instanceof TimestampType ? unix_micros(id) : id;
  }

  /** A value of {@link #collected} or of Spark's internal row (the same counts) as the id it stands for. */
  static Object external(Object value, DataType type) {
    if (value == null) {
      return null;
    }
    if (type instanceof DateType) {
      return LocalDate.ofEpochDay(((Number) value).longValue());
    }
    if (type instanceof TimestampType) {
      long micros = ((Number) value).longValue();
      return Instant.EPOCH.plusSeconds(Math.floorDiv(micros, 1_000_000L))
          .plusNanos(Math.floorMod(micros, 1_000_000L) * 1000L);
    }
    return value;
  }
}
