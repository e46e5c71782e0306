package dev.maxsim4j.spark;

import static org.apache.spark.sql.functions.unix_date;
import static org.apache.spark.sql.functions.unix_micros;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.util.HexFormat;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Ids as the library reads them off the rows Spark hands out, where a {@code Row} would change some of them. Dates
 * and timestamps are read as days or microseconds since the epoch and held as {@code java.time} values, which
 * {@code createDataFrame} takes back as they were: a Row holds them as {@code java.sql.Date} and {@code Timestamp}
 * unless the session enables Spark's Java 8 API, and those depend on the JVM's time zone (a driver and executors in
 * other zones name another day) and on the old Julian calendar (dates before 1582-10-15, or outside years 1 to 9999,
 * come back as other dates). Strings are read as their bytes and refused unless they are UTF-8: a Row decodes every
 * malformed sequence to U+FFFD, so two ids Spark tells apart (a cast from binary makes such strings) would become
 * one id to the library's lookups, or an id of no row.
 */
final class IdValues {
  private IdValues() {}

  /** Whether {@code type} is a date or a timestamp (with the session's time zone), which a Row would change. */
  static boolean isTime(DataType type) {
    return type instanceof DateType || type instanceof TimestampType;
  }

  /** Whether {@code type} holds text (a collated string, a char or varchar too). */
  static boolean isText(DataType type) {
    return type instanceof StringType;
  }

  /** {@code id} as a driver collects it: days (a date), microseconds (a timestamp) or bytes (a string). */
  static Column collected(Column id, DataType type) {
    return type instanceof DateType ? unix_date(id) : type instanceof TimestampType ? unix_micros(id)
        : isText(type) ? id.cast(DataTypes.BinaryType) : id;
  }

  /**
   * A value of {@link #collected} or of Spark's internal row (the same counts) as the id it stands for; an
   * IllegalArgumentException naming {@code what} where a string's bytes are not UTF-8.
   */
  static Object external(Object value, DataType type, String what) {
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
    if (isText(type)) {
      return value instanceof UTF8String s ? text(s, what) : text((byte[]) value, what);
    }
    return value;
  }

  /** A string id read from an internal row; as {@link #external}. */
  static String text(UTF8String id, String what) {
    return id.isValid() ? id.toString() : text(id.getBytes(), what);
  }

  private static String text(byte[] bytes, String what) {
    try {
      return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
    } catch (CharacterCodingException e) {
      int shown = Math.min(bytes.length, 32);
      throw new IllegalArgumentException(what + " (" + bytes.length + (bytes.length == 1 ? " byte: " : " bytes: ")
          + HexFormat.of().formatHex(bytes, 0, shown) + (shown < bytes.length ? "..." : "") + ") is not UTF-8;"
          + " expected ids of text, which Spark's strings hold as UTF-8 (a cast from binary can make one that is"
          + " not: make_valid_utf8 replaces what is not, or compare such ids as numbers or hex text)");
    }
  }
}
