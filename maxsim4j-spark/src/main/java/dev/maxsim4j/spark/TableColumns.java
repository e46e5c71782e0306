package dev.maxsim4j.spark;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;

import org.apache.spark.sql.Column;

/**
 * The (id, tokens, mask) columns of a table, in that order, the mask null when the table has none. Names are
 * quoted, as the table checked them: a dot in one is part of the name, not a field of a struct.
 */
final class TableColumns {
  private TableColumns() {}

  private static Column named(String name) {
    return col(PairScoring.quoted(name));
  }

  static Column[] of(EmbeddingTable t) {
    Column mask = t.mask() == null ? lit(null).cast("array<boolean>") : named(t.mask());
    return new Column[] {named(t.id()), named(t.tokens()), mask};
  }

  /**
   * The columns a scan of {@code t} reads: (id, tokens), and the mask only where the table has one, since a
   * column of null masks would make Spark copy every row into a new one to add it.
   */
  static Column[] read(EmbeddingTable t) {
    return t.mask() == null ? new Column[] {named(t.id()), named(t.tokens())}
        : new Column[] {named(t.id()), named(t.tokens()), named(t.mask())};
  }
}
