package dev.maxsim4j.spark;

import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.RowOrdering;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;

/**
 * A table of token embeddings: an id column, a tokens column ({@code array<array<float>>}, or {@code binary}
 * cells of {@link TokenCodec}) and optionally a mask column ({@code array<boolean>}, one flag per token; a
 * false flag leaves the token out). Ids are strings, numbers, dates or other single values that Spark compares
 * (not intervals or variants; strings compared by their bytes, not under a collation such as UTF8_LCASE, and
 * UTF-8), and unique: scoring fails on a duplicate it meets rather than scoring one id twice.
 *
 * <pre>{@code
 * EmbeddingTable corpus = EmbeddingTable.of(spark.read().parquet("corpus/"));          // id, tokens
 * EmbeddingTable queries = EmbeddingTable.of(df, "qid", "embedding").withMask("attention");
 * }</pre>
 */
public record EmbeddingTable(Dataset<Row> data, String id, String tokens, String mask) {
  public EmbeddingTable {
    if (data == null) {
      throw new IllegalArgumentException("data is null; expected a Dataset<Row> of token embeddings");
    }
    check(data, id, "id");
    check(data, tokens, "tokens");
    DataType i = data.schema().apply(id).dataType();
    if (!isSingleValue(i) || i instanceof NullType) {
      // such values (byte[] above all) have no value equality or text form in Java: ids would not match or print
      throw new IllegalArgumentException("id column '" + id + "' is " + i.simpleString()
          + "; expected a single value per row such as a string or a number" + collationNote(i));
    }
    DataType t = data.schema().apply(tokens).dataType();
    if (!(t instanceof BinaryType) && !isArraysOfFloat(t)) {
      throw new IllegalArgumentException("tokens column '" + tokens + "' is " + t.simpleString()
          + "; expected array<array<float>> or binary (TokenCodec cells)");
    }
    if (mask != null) {
      check(data, mask, "mask");
      DataType m = data.schema().apply(mask).dataType();
      if (!(m instanceof ArrayType a && a.elementType() instanceof BooleanType)) {
        throw new IllegalArgumentException("mask column '" + mask + "' is " + m.simpleString()
            + "; expected array<boolean>");
      }
    }
  }

  /** Columns {@code id} and {@code tokens}, no mask. */
  public static EmbeddingTable of(Dataset<Row> data) {
    return new EmbeddingTable(data, "id", "tokens", null);
  }

  public static EmbeddingTable of(Dataset<Row> data, String id, String tokens) {
    return new EmbeddingTable(data, id, tokens, null);
  }

  /**
   * This table with a validity mask column. A row whose mask cell is null has no mask: every one of its tokens is
   * valid, as in a table without a mask column.
   */
  public EmbeddingTable withMask(String maskColumn) {
    if (maskColumn == null) {
      throw new IllegalArgumentException("maskColumn is null; expected an array<boolean> column's name");
    }
    return new EmbeddingTable(data, id, tokens, maskColumn);
  }

  /** Spark type of the id column. */
  DataType idType() {
    return data.schema().apply(id).dataType();
  }

  /**
   * Whether values of {@code t} have value equality and a text form in Java, and Spark compares them, as ids
   * need: an interval or a variant id would fail the scorers' joins with an error naming their own columns.
   */
  static boolean isSingleValue(DataType t) {
    return !(t instanceof BinaryType || t instanceof ArrayType || t instanceof MapType || t instanceof StructType)
        && RowOrdering.isOrderable(t) && !(t instanceof StringType s && !s.supportsBinaryEquality());
  }

  /**
   * Why strings of {@code t} (or of its elements) are refused as ids where their collation is the reason, else "":
   * such a collation (UTF8_LCASE, a _CI or _RTRIM one) makes Spark's joins match ids of other text, which the
   * scorers' own lookups by exact text would not, so that one id could be listed twice in a top k.
   */
  static String collationNote(DataType t) {
    DataType e = t instanceof ArrayType a ? a.elementType() : t;
    return e instanceof StringType s && !s.supportsBinaryEquality() ? " (collation " + s.collationName()
        + " matches ids of other text as one; expected ids compared by their bytes: collate(column, 'UTF8_BINARY'))"
        : "";
  }

  private static boolean isArraysOfFloat(DataType t) {
    return t instanceof ArrayType outer && outer.elementType() instanceof ArrayType inner
        && inner.elementType() instanceof FloatType;
  }

  private static void check(Dataset<Row> data, String column, String role) {
    if (column == null) {
      throw new IllegalArgumentException(role + " column is null; expected a column name");
    }
    if (!Arrays.asList(data.columns()).contains(column)) {
      throw new IllegalArgumentException(role + " column '" + column + "' is not in the table; it has "
          + Arrays.toString(data.columns()));
    }
    requireOne(data, column, "the table");
  }

  /**
   * Refuses a column name that Spark would find ambiguous in {@code data} (named {@code what} in the message): two
   * columns of that name, as a join leaves, or of names that differ in case only where Spark ignores case (its
   * default); Spark's own error names neither the argument nor the way out.
   */
  static void requireOne(Dataset<Row> data, String column, String what) {
    boolean byCase = byCase(data);
    List<String> named = columnsNamed(data, column);
    if (named.size() > 1) {
      boolean caseOnly = !byCase && named.stream().anyMatch(n -> !n.equals(column));
      throw new IllegalArgumentException(what + " has " + named.size() + " columns named '" + column + "' "
          + named + (caseOnly ? " (Spark ignores case in names)" : "") + "; expected one: rename or drop the others");
    }
  }

  /**
   * {@link #requireOne} for every column of {@code data}: a scorer carries them all through, and Spark refuses a
   * plan that names an ambiguous one.
   */
  static void requireDistinct(Dataset<Row> data, String what) {
    // by Spark's own comparison (equalsIgnoreCase), which lower-cased keys miss for "tıtle" and "TITLE"
    for (String column : data.columns()) {
      requireOne(data, column, what);
    }
  }

  /**
   * That {@code data} has no column Spark would take for {@code column}, the name of a column a scorer adds (as
   * spark.sql.caseSensitive has it: by default "Score" is "score").
   */
  static void requireNew(Dataset<Row> data, String column, String what) {
    List<String> named = columnsNamed(data, column);
    if (!named.isEmpty()) {
      throw new IllegalArgumentException(what + " already has a column '" + named.get(0) + "'"
          + (named.get(0).equals(column) || byCase(data) ? "" : " (Spark ignores case in names)")
          + "; expected the scores' column name '" + column + "' to be new");
    }
  }

  private static boolean byCase(Dataset<Row> data) {
    return Boolean.parseBoolean(data.sparkSession().conf().get("spark.sql.caseSensitive", "false"));
  }

  private static List<String> columnsNamed(Dataset<Row> data, String column) {
    boolean byCase = byCase(data);
    return Arrays.stream(data.columns()).filter(c -> byCase ? c.equals(column) : c.equalsIgnoreCase(column)).toList();
  }
}
