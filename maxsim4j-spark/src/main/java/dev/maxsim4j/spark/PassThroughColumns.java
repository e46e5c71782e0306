package dev.maxsim4j.spark;

import static org.apache.spark.sql.functions.date_from_unix_date;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.struct;
import static org.apache.spark.sql.functions.timestamp_micros;
import static org.apache.spark.sql.functions.transform;
import static org.apache.spark.sql.functions.transform_keys;
import static org.apache.spark.sql.functions.transform_values;
import static org.apache.spark.sql.functions.when;

import java.util.Arrays;
import java.util.function.BiFunction;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampType;

/**
 * A caller's own columns as they cross a scorer's {@code Row}s, which would change some values: strings that are not
 * UTF-8 (read as U+FFFD) and dates or timestamps of the Julian calendar's gap (1582-10-10 read back as 1582-10-15).
 * Such values, nested in structs, arrays and maps too, ride as bytes, days and microseconds ({@link #encoded}) and
 * are turned back into their own type after the scorer ({@link #decoded}); other values cross a Row unchanged.
 */
final class PassThroughColumns {
  private PassThroughColumns() {}

  /** {@code c} of {@code type} as values a Row keeps; {@code c} itself where it holds none that a Row changes. */
  static Column encoded(Column c, DataType type) {
    return changes(type) ? map(c, type, PassThroughColumns::encodedValue) : c;
  }

  /** The column {@link #encoded} made of {@code c} of {@code type}, as {@code type} again. */
  static Column decoded(Column c, DataType type) {
    return changes(type) ? map(c, type, PassThroughColumns::decodedValue) : c;
  }

  /** The type {@link #encoded} gives a column of {@code type}. */
  static DataType encodedType(DataType type) {
    if (!changes(type)) {
      return type;
    }
    if (type instanceof ArrayType a) {
      return DataTypes.createArrayType(encodedType(a.elementType()), a.containsNull());
    }
    if (type instanceof MapType m) {
      return DataTypes.createMapType(encodedType(m.keyType()), encodedType(m.valueType()), m.valueContainsNull());
    }
    if (type instanceof StructType s) {
      return new StructType(Arrays.stream(s.fields())
          .map(f -> new StructField(f.name(), encodedType(f.dataType()), f.nullable(), f.metadata()))
          .toArray(StructField[]::new));
    }
    return type instanceof DateType ? DataTypes.IntegerType : type instanceof TimestampType ? DataTypes.LongType
        : DataTypes.BinaryType;
  }

  private static boolean changes(DataType type) {
    if (type instanceof ArrayType a) {
      return changes(a.elementType());
    }
    if (type instanceof MapType m) {
      return changes(m.keyType()) || changes(m.valueType());
    }
    if (type instanceof StructType s) {
      return Arrays.stream(s.fields()).anyMatch(f -> changes(f.dataType()));
    }
    return IdValues.isTime(type) || IdValues.isText(type);
  }

  /** {@code c} with {@code leaf} applied to every value of a type a Row changes, through structs, arrays and maps. */
  private static Column map(Column c, DataType type, BiFunction<Column, DataType, Column> leaf) {
    if (!changes(type)) {
      return c;
    }
    if (type instanceof ArrayType a) {
      return transform(c, e -> map(e, a.elementType(), leaf));
    }
    if (type instanceof MapType m) {
      Column keys = changes(m.keyType()) ? transform_keys(c, (k, v) -> map(k, m.keyType(), leaf)) : c;
      return changes(m.valueType()) ? transform_values(keys, (k, v) -> map(v, m.valueType(), leaf)) : keys;
    }
    if (type instanceof StructType s) {
      Column[] fields = Arrays.stream(s.fields())
          .map(f -> map(c.getField(f.name()), f.dataType(), leaf).as(f.name())).toArray(Column[]::new);
      // struct() of a null struct's fields would be a struct of nulls, not null
      return when(c.isNull(), lit(null)).otherwise(struct(fields));
    }
    return leaf.apply(c, type);
  }

  private static Column encodedValue(Column c, DataType type) {
    return IdValues.collected(c, type);
  }

  private static Column decodedValue(Column c, DataType type) {
    return type instanceof DateType ? date_from_unix_date(c) : type instanceof TimestampType ? timestamp_micros(c)
        : c.cast(type);
  }
}
