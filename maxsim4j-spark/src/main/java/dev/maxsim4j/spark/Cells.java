package dev.maxsim4j.spark;

import dev.maxsim4j.TokenBatch;

/** One token cell as a SQL function receives it ({@code array<array<float>>} or a binary cell) as floats. */
final class Cells {
  private Cells() {}

  /** {@code [L][d]} floats of one cell; {@code what} names it in errors. */
  static float[][] toFloats(Object cell, String what) {
    if (cell instanceof byte[] b) {
      return TokenCodec.decode(b);
    }
    if (!(cell instanceof scala.collection.Seq<?> seq)) {
      throw new IllegalArgumentException(what + " is " + (cell == null ? "null" : "a " + cell.getClass().getName())
          + "; expected array<array<float>> or a binary token cell");
    }
    float[][] out = new float[seq.length()][];
    for (int t = 0; t < out.length; t++) {
      Object value = seq.apply(t);
      if (!(value instanceof scala.collection.Seq<?> token)) {
        throw new IllegalArgumentException(what + ": token " + t + " is " + describe(value)
            + "; expected array<float>");
      }
      out[t] = new float[token.length()];
      for (int k = 0; k < out[t].length; k++) {
        Object element = token.apply(k);
        if (!(element instanceof Float f)) {
          throw new IllegalArgumentException(what + ": token " + t + " element " + k + " is " + describe(element)
              + "; expected a float" + castHint(element));
        }
        out[t][k] = f;
      }
    }
    return out;
  }

  /**
   * How to make {@code element}, a number of another type, a float: SQL reads {@code 1.0} as a decimal and {@code 1}
   * as an int, so literal arrays need the cast as much as double columns do.
   */
  static String castHint(Object element) {
    if (element instanceof Double) {
      return " (cast array<array<double>> to array<array<float>>)";
    }
    if (element instanceof java.math.BigDecimal) {
      return " (SQL reads a literal such as 1.0 as a decimal: write 1.0F, or cast the array to array<array<float>>)";
    }
    return element instanceof Number ? " (cast the array to array<array<float>>)" : "";
  }

  private static String describe(Object value) {
    return value == null ? "null" : "a " + value.getClass().getName();
  }

  /**
   * One cell as a one-row batch of d = {@code dim} ({@code 0}: any), that of the query: a cell with tokens of
   * another d is an error naming it, and an empty cell takes {@code dim}.
   */
  static TokenBatch toBatch(Object cell, String what, int dim) {
    TokenRows rows = new TokenRows(what);
    rows.expectDim(dim, "the query");
    rows.addUnnamed(cell);
    return rows.pack(rows.dim() != 0 ? rows.dim() : Math.max(1, dim)).toBatch();
  }
}
