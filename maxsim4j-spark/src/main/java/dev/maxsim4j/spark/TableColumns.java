package dev.maxsim4j.spark;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;

import org.apache.spark.sql.Column;

/** The (id, tokens, mask) columns of a table, in that order, the mask null when the table has none. */
final class TableColumns {
  private TableColumns() {}

  static Column[] of(EmbeddingTable t) {
    Column mask = t.mask() == null ? lit(null).cast("array<boolean>") : col(t.mask());
    return new Column[] {col(t.id()), col(t.tokens()), mask};
  }
}
