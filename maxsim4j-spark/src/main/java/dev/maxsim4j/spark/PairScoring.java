package dev.maxsim4j.spark;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.when;

import dev.maxsim4j.MaxSim;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.TreeMap;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.expressions.Window;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Scores (query id, document id) rows: joins the token tables in Spark, then each partition groups a bounded
 * chunk of its rows by query and scores each query's documents in one fused call.
 */
final class PairScoring {
  static final String PREFIX = "__maxsim4j_";
  private static final String QUERY_KEY = PREFIX + "qk";
  private static final String QUERY_TOKENS = PREFIX + "qt";
  private static final String QUERY_MASK = PREFIX + "qm";
  private static final String DOC_KEY = PREFIX + "dk";
  private static final String DOC_TOKENS = PREFIX + "dt";
  private static final String DOC_MASK = PREFIX + "dm";
  private static final String QUERY_COPIES = PREFIX + "qc";
  private static final String DOC_COPIES = PREFIX + "dc";
  /**
   * A chunk's bounds: enough rows for fused calls, few enough values (2^19 tokens of d = 128) to stay far below
   * a task's heap and below 2^31 packed elements whatever d is.
   */
  static final int CHUNK_ROWS = 16384;
  static final long CHUNK_ELEMENTS = 1L << 26;
  /**
   * What a value of a document read as an array of arrays counts toward CHUNK_ELEMENTS: the join path holds it boxed
   * (a Float and its reference, about six times a packed float's four bytes) until the chunk is scored.
   */
  private static final long BOXED_WEIGHT = 6;

  private PairScoring() {}

  static Dataset<Row> score(Dataset<Row> pairs, String queryId, String docId, String scoreColumn,
      EmbeddingTable queries, EmbeddingTable corpus) {
    return score(pairs, queryId, docId, scoreColumn, queries, corpus, CHUNK_ROWS);
  }

  /** As above with chunks of at most {@code chunkRows} rows (tests use small chunks to cross their bounds). */
  static Dataset<Row> score(Dataset<Row> pairs, String queryId, String docId, String scoreColumn,
      EmbeddingTable queries, EmbeddingTable corpus, int chunkRows) {
    check(pairs, queryId, docId, scoreColumn, queries, corpus);
    Dataset<Row> joined = joined(pairs, queryId, docId, queries, corpus);
    List<String> columns = Arrays.asList(pairs.columns());
    StructType types = pairs.schema();
    List<Column> crossing = new ArrayList<>();
    for (String c : joined.columns()) {
      crossing.add(columns.contains(c) ? PassThroughColumns.encoded(col(quoted(c)), types.apply(c).dataType()).as(c)
          : col(quoted(c)));
    }
    Dataset<Row> rows = joined.select(crossing.toArray(Column[]::new));
    StructType out = new StructType(Arrays.copyOf(rows.schema().fields(), columns.size()))
        .add(scoreColumn, DataTypes.FloatType, false);
    Scorer scorer = new Scorer(columns.size(), columns.indexOf(queryId), columns.indexOf(docId),
        types.apply(queryId).dataType(), types.apply(docId).dataType(), chunkRows);
    Dataset<Row> scored = rows.mapPartitions(scorer, Encoders.row(out));
    return scored.select(decoded(scored, types).toArray(Column[]::new));
  }

  /**
   * The columns of {@code scored} (the pairs' columns as {@link PassThroughColumns} encoded them, then a score) as
   * the pairs' {@code types} again.
   */
  static List<Column> decoded(Dataset<Row> scored, StructType types) {
    List<Column> out = new ArrayList<>();
    for (String c : scored.columns()) {
      out.add(types.getFieldIndex(c).isDefined()
          ? PassThroughColumns.decoded(scored.col(quoted(c)), types.apply(c).dataType()).as(c) : scored.col(quoted(c)));
    }
    return out;
  }

  /**
   * The pairs' columns, then the query's tokens and mask and the document's, then how many rows of its table
   * hold the query's id and the document's: what the scorer reads.
   */
  static Dataset<Row> joined(Dataset<Row> pairs, String queryId, String docId, EmbeddingTable queries,
      EmbeddingTable corpus) {
    check(pairs, queryId, docId, null, queries, corpus);
    Dataset<Row> q = side(queries, QUERY_KEY, QUERY_TOKENS, QUERY_MASK, QUERY_COPIES);
    Dataset<Row> d = side(corpus, DOC_KEY, DOC_TOKENS, DOC_MASK, DOC_COPIES);
    // the pairs' ids are cast to the tables' id types first: Spark's own coercion would compare in another type
    // (an int 7 against the strings "7", "007" and " 7" as numbers) and join one pair to several documents
    Dataset<Row> withQueries = pairs.join(q,
        idAs(pairs, queryId, queries.idType()).equalTo(q.col(QUERY_KEY)), "left");
    Dataset<Row> joined = withQueries.join(d,
        idAs(withQueries, docId, corpus.idType()).equalTo(d.col(DOC_KEY)), "left");
    List<Column> keep = new ArrayList<>();
    for (String c : pairs.columns()) {
      keep.add(withQueries.col(quoted(c)));
    }
    for (String c : new String[] {QUERY_TOKENS, QUERY_MASK, DOC_TOKENS, DOC_MASK, QUERY_COPIES, DOC_COPIES}) {
      keep.add(col(c));
    }
    return joined.select(keep.toArray(Column[]::new));
  }

  /**
   * Column {@code column} of {@code data} cast to a table's id {@code type}, null where the cast changes the id
   * (7.9 to 7, " 7" to 7) or cannot be made ("abc" to an int, which ANSI mode's cast fails the job on): such a
   * pair names no row, which fails naming it, rather than the row it rounds to.
   */
  static Column idAs(Dataset<Row> data, String column, DataType type) {
    Column id = data.col(quoted(column));
    DataType own = data.schema().apply(column).dataType();
    if (own.equals(type)) {
      return id;
    }
    Column cast = id.try_cast(type);
    return when(cast.try_cast(own).equalTo(id), cast);
  }

  /** A column name as Spark reads it literally: a dot in it is part of the name, not a field of a struct. */
  static String quoted(String name) {
    return "`" + name.replace("`", "``") + "`";
  }

  /**
   * The tables are given, the pairs have both id columns and, unless null, not yet {@code scoreColumn} (in any
   * case: Spark resolves names without regard to case).
   */
  static void check(Dataset<Row> pairs, String queryId, String docId, String scoreColumn, EmbeddingTable queries,
      EmbeddingTable corpus) {
    if (pairs == null || queries == null || corpus == null) {
      throw new IllegalArgumentException((pairs == null ? "pairs" : queries == null ? "queries" : "corpus")
          + " is null; expected a Dataset");
    }
    List<String> columns = Arrays.asList(pairs.columns());
    for (String c : new String[] {queryId, docId}) {
      if (!columns.contains(c)) {
        throw new IllegalArgumentException("pairs has no column '" + c + "'; it has " + columns);
      }
    }
    EmbeddingTable.requireDistinct(pairs, "pairs");
    for (String c : new String[] {queryId, docId}) {
      // such a column cannot be cast to a table's id type: Spark would refuse the join with an analysis error
      DataType type = pairs.schema().apply(c).dataType();
      if (!EmbeddingTable.isSingleValue(type)) {
        throw new IllegalArgumentException("pairs column '" + c + "' is " + type.simpleString()
            + "; expected ids, single values such as strings or numbers" + EmbeddingTable.collationNote(type));
      }
    }
    if (scoreColumn != null) {
      EmbeddingTable.requireNew(pairs, scoreColumn, "pairs");
    }
  }

  /**
   * The scorers name their own columns with {@link #PREFIX}: an input column of such a name would be taken for
   * one (a candidates row's value replaced by a row number) or make Spark's reference ambiguous.
   */
  static void refuseReserved(Dataset<Row> data, String what) {
    if (data == null) {
      return; // reported as null by the checks that follow
    }
    for (String c : data.columns()) {
      if (c.toLowerCase(Locale.ROOT).startsWith(PREFIX)) {
        throw new IllegalArgumentException(what + " has a column '" + c + "'; expected no column whose name starts"
            + " with " + PREFIX + " (the scorers name their own columns so)");
      }
    }
  }

  /** A null id names no row: it is reported as null, not as an id 'null' missing from its table. */
  static void requireIds(Object queryId, Object docId) {
    if (queryId == null || docId == null) {
      throw new IllegalArgumentException(queryId == null
          ? "a pair's or candidate's query id is null (document " + IdText.quoted(docId)
              + "); expected an id of the query table"
          : "a pair's or candidate's document id is null (query " + IdText.quoted(queryId)
              + "); expected an id of the corpus");
    }
  }

  /**
   * A table keyed for the join, each row with the count of rows that share its id: a duplicate id would join a
   * pair twice. Counted over a window by id, the partitioning and order the join needs anyway.
   */
  private static Dataset<Row> side(EmbeddingTable t, String key, String tokens, String mask, String copies) {
    Column[] c = TableColumns.of(t);
    return t.data().select(c[0].as(key), c[1].as(tokens), c[2].as(mask))
        .withColumn(copies, count(lit(1)).over(Window.partitionBy(col(key))));
  }

  /**
   * One partition: chunks of rows, grouped by query, one call per query and chunk. The pairs' columns arrive as
   * {@link PassThroughColumns} encoded them, ids of types {@code queryType} and {@code docType}.
   */
  private record Scorer(int width, int queryId, int docId, DataType queryType, DataType docType, int chunkRows)
      implements MapPartitionsFunction<Row, Row> {
    @Override
    public Iterator<Row> call(Iterator<Row> rows) {
      return new Iterator<>() {
        private final ArrayDeque<Row> ready = new ArrayDeque<>();

        @Override
        public boolean hasNext() {
          while (ready.isEmpty() && rows.hasNext()) {
            scoreChunk(rows, ready);
          }
          return !ready.isEmpty();
        }

        @Override
        public Row next() {
          if (!hasNext()) {
            throw new NoSuchElementException();
          }
          return ready.poll();
        }
      };
    }

    /** A pair's row and its document id as the library reads it ({@link IdValues}). */
    private record Member(Row row, Object docId) {}

    private void scoreChunk(Iterator<Row> rows, ArrayDeque<Row> out) {
      Map<Object, List<Member>> byQuery = new LinkedHashMap<>();
      int taken = 0;
      long elements = 0;
      while (rows.hasNext() && taken < chunkRows && elements < CHUNK_ELEMENTS) {
        Row r = rows.next();
        Object query = IdValues.external(r.get(queryId), queryType, "a pair's query id");
        Object doc = IdValues.external(r.get(docId), docType, "a pair's document id");
        requireIds(query, doc);
        byQuery.computeIfAbsent(query, x -> new ArrayList<>()).add(new Member(r, doc));
        taken++;
        elements += approximateElements(r.get(width + 2));
      }
      MaxSim maxSim = ExecutorMaxSim.get();
      TokenRows query = new TokenRows("query");
      TokenRows docs = new TokenRows("document");
      for (Map.Entry<Object, List<Member>> group : byQuery.entrySet()) {
        List<Member> members = group.getValue();
        Row first = members.get(0).row();
        query.clear();
        requireUnique(first, width + 4, "query " + IdText.quoted(group.getKey()), "query table");
        query.add(group.getKey(), first.get(width), first.get(width + 1));
        // one call per type the documents are stored in (a column's rows may differ) and, for a query of no
        // token, per d (TokenShape.batchOf: the query alone is the batch here), scores in the rows' order
        Map<TokenShape.Batch, List<Integer>> byBatch = new TreeMap<>();
        for (int i = 0; i < members.size(); i++) {
          Row r = members.get(i).row();
          requireUnique(r, width + 5, "document " + IdText.quoted(members.get(i).docId()), "corpus");
          TokenShape.Batch batch = TokenShape.batchOf(TokenCodec.statedType(r.get(width + 2)), query.dim(),
              () -> TokenCodec.statedDim(r.get(width + 2)));
          byBatch.computeIfAbsent(batch, x -> new ArrayList<>()).add(i);
        }
        float[] scores = new float[members.size()];
        for (List<Integer> ofBatch : byBatch.values()) {
          docs.clear();
          docs.expectDim(query.dim(), "query " + IdText.quoted(group.getKey()));
          for (int i : ofBatch) {
            Row r = members.get(i).row();
            docs.add(members.get(i).docId(), r.get(width + 2), r.get(width + 3));
          }
          int dim = query.dim() != 0 ? query.dim() : docs.dim() != 0 ? docs.dim() : 1;
          float[] batchScores = maxSim.scores(query.pack(dim).toBatch(), docs.pack(dim).toBatch())[0];
          for (int j = 0; j < batchScores.length; j++) {
            scores[ofBatch.get(j)] = batchScores[j];
          }
        }
        for (int i = 0; i < members.size(); i++) {
          Object[] values = new Object[width + 1];
          for (int c = 0; c < width; c++) {
            values[c] = members.get(i).row().get(c);
          }
          values[width] = scores[i];
          out.add(RowFactory.create(values));
        }
      }
    }

    /** {@code copies} is null where the id is missing, which adding its null tokens reports. */
    private static void requireUnique(Row r, int copies, String what, String table) {
      if (!r.isNullAt(copies) && r.getLong(copies) > 1) {
        throw new IllegalArgumentException(what + " appears " + r.getLong(copies) + " times in the " + table
            + "; expected unique ids");
      }
    }

    /** L x d of a document cell as its header or first token states it (checked when the row is added). */
    private static long approximateElements(Object cell) {
      if (cell instanceof byte[] b) {
        if (b.length < TokenCodec.HEADER_BYTES) {
          return 0;
        }
        java.nio.ByteBuffer header = java.nio.ByteBuffer.wrap(b).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        return Math.max(0L, header.getInt(2)) * Math.max(0, header.getInt(6));
      }
      if (cell instanceof scala.collection.Seq<?> s && s.nonEmpty()
          && s.apply(0) instanceof scala.collection.Seq<?> first) {
        return BOXED_WEIGHT * s.length() * first.length();
      }
      return 0;
    }
  }
}
