package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.Test;

class IdReaderTest {
  /** Id types with a value of each as Spark holds it inside a row. */
  private static final Object[][] IDS = {
      {DataTypes.LongType, -7L}, {DataTypes.IntegerType, 7}, {DataTypes.ShortType, (short) 7},
      {DataTypes.ByteType, (byte) -7}, {DataTypes.BooleanType, true},
      {DataTypes.StringType, UTF8String.fromString("d7")},
      {DataTypes.DoubleType, -0.0}, {DataTypes.FloatType, 1.5f}, {DataTypes.createDecimalType(10, 2),
      Decimal.apply("12.34")}, {DataTypes.createDecimalType(30, 3), Decimal.apply("123456789012345678901.234")},
      {DataTypes.DateType, 20000}, {DataTypes.TimestampType, 1_700_000_000_000_000L},
      {DataTypes.TimestampNTZType, 1_700_000_000_000_000L}, {DataTypes.BinaryType, new byte[] {1, 2, 3}}};

  @Test
  void readsEachIdTypeAsSparksGenericGetterAndConverterDoInRowsOfEitherLayout() {
    for (Object[] id : IDS) {
      DataType type = (DataType) id[0];
      UnsafeProjection unsafe = UnsafeProjection.create(new DataType[] {type, DataTypes.BinaryType});
      for (Object value : new Object[] {id[1], null}) {
        InternalRow generic = new GenericInternalRow(new Object[] {value, new byte[] {9}});
        for (InternalRow row : new InternalRow[] {generic, unsafe.apply(generic)}) {
          // dates and timestamps as java.time values, whatever the JVM's time zone (IdValues)
          Object want = type == DataTypes.DateType ? java.time.LocalDate.ofEpochDay(20000)
              : type == DataTypes.TimestampType ? java.time.Instant.ofEpochSecond(1_700_000_000L)
              : CatalystTypeConverters.createToScalaConverter(type).apply(row.get(0, type));
          Object got = new IdReader(type, "id").read(row);
          String what = type.simpleString() + " " + value + " in a " + row.getClass().getSimpleName();
          if (value == null) {
            assertNull(got, what);
          } else if (want instanceof byte[] bytes) {
            assertArrayEquals(bytes, (byte[]) got, what);
          } else {
            assertEquals(want, got, what);
            assertEquals(want.getClass(), got.getClass(), what);
          }
        }
      }
    }
  }
}
