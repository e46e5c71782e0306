package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.CharType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DayTimeIntervalType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.UserDefinedType;
import org.apache.spark.sql.types.VarcharType;
import org.apache.spark.sql.types.YearMonthIntervalType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.Test;

class HostileIdReaderTest {
  /** A user type stored as a string, as an id column may be typed. */
  static final class Tag {
    final String name;

    Tag(String name) {
      this.name = name;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Tag t && t.name.equals(name);
    }

    @Override
    public int hashCode() {
      return name.hashCode();
    }
  }

  static final class TagType extends UserDefinedType<Tag> {
    @Override
    public DataType sqlType() {
      return DataTypes.StringType;
    }

    @Override
    public Object serialize(Tag t) {
      return UTF8String.fromString(t.name);
    }

    @Override
    public Tag deserialize(Object datum) {
      return new Tag(datum.toString());
    }

    @Override
    public Class<Tag> userClass() {
      return Tag.class;
    }
  }

  private static final Object[][] IDS = {
      {DayTimeIntervalType.apply(), 86_400_000_000L}, {YearMonthIntervalType.apply(), 14},
      {CharType.apply(3), UTF8String.fromString("ab ")}, {VarcharType.apply(5), UTF8String.fromString("abc")},
      {StringType.apply("UTF8_LCASE"), UTF8String.fromString("AbC")},
      {new TagType(), UTF8String.fromString("t1")}};

  @Test
  void readsIdTypesBeyondTheCommonOnesAsSparksGenericGetterDoesInEveryRowLayout() {
    for (Object[] id : IDS) {
      DataType type = (DataType) id[0];
      int compared = 0;
      for (Object value : new Object[] {id[1], null}) {
        List<InternalRow> rows = new ArrayList<>();
        GenericInternalRow generic = new GenericInternalRow(new Object[] {value, new byte[] {9}});
        rows.add(generic);
        try {
          rows.add(UnsafeProjection.create(new DataType[] {type, DataTypes.BinaryType}).apply(generic));
        } catch (RuntimeException e) {
          // a type Spark cannot lay out in an UnsafeRow never reaches the reader in one
        }
        DataType stored = type instanceof UserDefinedType<?> u ? u.sqlType() : type;
        OnHeapColumnVector vector = new OnHeapColumnVector(1, stored);
        if (value == null) {
          vector.putNull(0);
        } else if (value instanceof UTF8String s) {
          vector.putByteArray(0, s.getBytes());
        } else if (value instanceof Long l) {
          vector.putLong(0, l);
        } else {
          vector.putInt(0, (Integer) value);
        }
        rows.add(new ColumnarBatch(new ColumnVector[] {vector}, 1).getRow(0));
        for (InternalRow row : rows) {
          String what = type.simpleString() + " " + value + " in a " + row.getClass().getSimpleName();
          Object want;
          try {
            want = CatalystTypeConverters.createToScalaConverter(type).apply(row.get(0, type));
          } catch (RuntimeException e) {
            continue; // the getter before the change failed here too
          }
          Object got = new IdReader(type, "id").read(row);
          compared++;
          if (value == null) {
            assertNull(got, what);
          } else {
            assertEquals(want, got, what);
            assertEquals(want.getClass(), got.getClass(), what);
          }
        }
      }
      assertEquals(6, compared, type.simpleString() + ": every layout, with and without a value, compared");
    }
  }
}
