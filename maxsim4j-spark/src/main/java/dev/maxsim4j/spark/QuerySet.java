package dev.maxsim4j.spark;

import dev.maxsim4j.TokenBatch;
import java.io.Serializable;
import java.util.List;
import org.apache.spark.sql.Row;

/** The queries of a top-k job, collected on the driver and broadcast: their ids and packed tokens. */
record QuerySet(Object[] ids, PackedTokens tokens) implements Serializable {

  static QuerySet collect(EmbeddingTable queries) {
    List<Row> rows = queries.data().select(TableColumns.of(queries)).collectAsList();
    TokenRows tokens = new TokenRows("query");
    Object[] ids = new Object[rows.size()];
    for (int i = 0; i < ids.length; i++) {
      Row r = rows.get(i);
      ids[i] = r.get(0);
      tokens.add(ids[i], r.get(1), r.get(2));
    }
    return new QuerySet(ids, tokens.pack(tokens.dim()));
  }

  int size() {
    return ids.length;
  }

  /** The queries as a batch of d {@code dim} when none of them holds a token (any d scores them alike). */
  TokenBatch batch(int dimWhenEmpty) {
    if (tokens.dim() != 0) {
      return tokens.toBatch();
    }
    return new PackedTokens(tokens.type(), Math.max(1, dimWhenEmpty), tokens.offsets(), new float[0], null, null,
        null, tokens.mask()).toBatch();
  }
}
