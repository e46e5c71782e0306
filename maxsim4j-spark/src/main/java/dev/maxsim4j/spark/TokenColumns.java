package dev.maxsim4j.spark;

import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.udf;

import dev.maxsim4j.DType;
import java.util.Locale;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/**
 * Converts token columns between {@code array<array<float>>} and the compact {@link TokenCodec} {@code binary}
 * cells, e.g. {@code corpus.withColumn("tokens", TokenColumns.encode(col("tokens"), DType.BFLOAT16))} before
 * writing Parquet. Null stays null.
 */
public final class TokenColumns {
  static final DataType ARRAYS = DataTypes.createArrayType(DataTypes.createArrayType(DataTypes.FloatType, false),
      false);
  // the arguments as Object: a Java UDF's inputs are not coerced, so a typed parameter met by another column's value
  // would fail with a ClassCastException in a task rather than a message naming the argument
  static final UserDefinedFunction ENCODE = udf((UDF2<Object, Object, byte[]>) (tokens, type) ->
      tokens == null ? null : TokenCodec.encode(Cells.toFloats(tokens, "tokens"), parseType(type)),
      DataTypes.BinaryType);
  static final UserDefinedFunction DECODE = udf((UDF1<Object, float[][]>) TokenColumns::decodeCell, ARRAYS);

  private TokenColumns() {}

  /** {@code array<array<float>>} tokens as {@code binary} cells of {@code type}. */
  public static Column encode(Column tokens, DType type) {
    if (type == null) {
      throw new IllegalArgumentException("type is null; expected a DType such as BFLOAT16");
    }
    return ENCODE.apply(tokens, lit(type.name()));
  }

  /** {@code binary} cells as {@code array<array<float>>} (dequantized for the quantized types). */
  public static Column decode(Column cells) {
    return DECODE.apply(cells);
  }

  private static float[][] decodeCell(Object cell) {
    if (cell == null) {
      return null;
    }
    if (!(cell instanceof byte[] bytes)) {
      throw new IllegalArgumentException("cell is a " + cell.getClass().getName() + "; expected a binary token cell"
          + " (from TokenColumns.encode or maxsim_encode)");
    }
    return TokenCodec.decode(bytes);
  }

  /** A type by name, {@code BFLOAT16} or a short form: bf16, fp16, fp32, int8, fp8, binary. */
  static DType parseType(Object type) {
    if (!(type instanceof String name)) {
      String value = String.valueOf(type); // a column of tokens passed as the type would print them all
      String shown = value.codePointCount(0, value.length()) > 80
          ? value.substring(0, value.offsetByCodePoints(0, 80)) + "..." : value;
      throw new IllegalArgumentException("type is " + (type == null ? "null" : type instanceof byte[] ? "binary"
          : shown + " (a " + type.getClass().getName() + ")") + "; expected a string: bf16, fp16, fp32, int8, fp8 or"
          + " binary");
    }
    return switch (name.trim().toLowerCase(Locale.ROOT)) {
      case "bf16", "bfloat16" -> DType.BFLOAT16;
      case "fp16", "float16" -> DType.FLOAT16;
      case "fp32", "float32" -> DType.FLOAT32;
      case "int8" -> DType.INT8;
      case "fp8", "float8_e4m3", "e4m3" -> DType.FLOAT8_E4M3;
      case "binary", "1bit" -> DType.BINARY;
      default -> throw new IllegalArgumentException("type '" + name + "'; expected bf16, fp16, fp32, int8, fp8"
          + " or binary");
    };
  }
}
