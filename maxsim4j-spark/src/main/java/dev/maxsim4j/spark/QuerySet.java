package dev.maxsim4j.spark;

import dev.maxsim4j.TokenBatch;
import java.io.Serializable;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;

/** Queries collected on the driver to be broadcast: their ids and packed tokens. */
final class QuerySet implements Serializable {
  // a class, not a record: Kryo (spark.serializer) cannot write a record, whose fields refuse Unsafe's offsets
  private static final long serialVersionUID = 1L;
  private final Object[] ids;
  private final PackedTokens tokens;

  QuerySet(Object[] ids, PackedTokens tokens) {
    this.ids = ids;
    this.tokens = tokens;
  }

  Object[] ids() {
    return ids;
  }

  PackedTokens tokens() {
    return tokens;
  }

  static QuerySet collect(EmbeddingTable queries) {
    Column[] columns = TableColumns.of(queries);
    columns[0] = IdValues.collected(columns[0], queries.idType());
    List<Row> rows = queries.data().select(columns).collectAsList();
    TokenRows tokens = new TokenRows("query");
    Object[] ids = new Object[rows.size()];
    Set<Object> seen = new HashSet<>();
    for (int i = 0; i < ids.length; i++) {
      Row r = rows.get(i);
      ids[i] = IdValues.external(r.get(0), queries.idType(), "query id");
      if (ids[i] == null) {
        throw new IllegalArgumentException("a query's id is null; expected every query to have an id (results"
            + " name queries by id)");
      }
      // -0.0 and 0.0 are one id to Spark, as to the pair scorers
      if (!seen.add(ScanPairScoring.lookupKey(ids[i]))) {
        throw new IllegalArgumentException("query id " + IdText.quoted(ids[i])
            + " appears more than once in the query table"
            + DistributedTopK.zeroNote(ids[i]) + "; expected unique ids");
      }
      tokens.add(ids[i], r.get(1), r.get(2));
    }
    return new QuerySet(ids, tokens.pack(tokens.dim()));
  }

  int size() {
    return ids.length;
  }

  /** Query {@code i} alone as a one-row batch (a copy of its tokens); d {@code dimWhenEmpty} if none has one. */
  TokenBatch query(int i, int dimWhenEmpty) {
    int[] offsets = tokens.offsets();
    int from = offsets[i];
    int to = offsets[i + 1];
    int dim = tokens.dim() != 0 ? tokens.dim() : Math.max(1, dimWhenEmpty);
    int[] one = {0, to - from};
    boolean[] mask = tokens.mask() == null ? null : Arrays.copyOfRange(tokens.mask(), from, to);
    PackedTokens row = switch (tokens.type()) {
      case FLOAT32 -> new PackedTokens(tokens.type(), dim, one,
          Arrays.copyOfRange(tokens.floats(), from * dim, to * dim), null, null, null, mask);
      case FLOAT16, BFLOAT16 -> new PackedTokens(tokens.type(), dim, one, null,
          Arrays.copyOfRange(tokens.halfs(), from * dim, to * dim), null, null, mask);
      default -> {
        int perToken = (int) tokens.type().bytesPerToken(dim);
        yield new PackedTokens(tokens.type(), dim, one, null, null,
            Arrays.copyOfRange(tokens.bytes(), from * perToken, to * perToken),
            Arrays.copyOfRange(tokens.scales(), from, to), mask);
      }
    };
    return row.toBatch();
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
