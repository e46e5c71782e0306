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
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.expressions.Window;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
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
   * A chunk's bounds: enough rows for fused calls, few enough 4-byte values held (Scorer.heldElements: about
   * 175,000 tokens of d = 128 in fp32 cells) to stay far below a task's heap and below 2^31 packed elements whatever
   * d is.
   */
  static final int CHUNK_ROWS = 16384;
  static final long CHUNK_ELEMENTS = 1L << 26;

  private PairScoring() {}

  static Dataset<Row> score(Dataset<Row> pairs, String queryId, String docId, String scoreColumn,
      EmbeddingTable queries, EmbeddingTable corpus) {
    return score(pairs, queryId, docId, scoreColumn, queries, corpus, CHUNK_ROWS);
  }

  /**
   * As above with chunks of at most {@code chunkRows} rows (tests use small chunks to cross their bounds). The pairs'
   * columns pass through as Spark's internal values, never as a {@code Row}'s, which would change some (a string that
   * is not UTF-8, a date of the Julian calendar's gap, an interval of days).
   */
  static Dataset<Row> score(Dataset<Row> pairs, String queryId, String docId, String scoreColumn,
      EmbeddingTable queries, EmbeddingTable corpus, int chunkRows) {
    check(pairs, queryId, docId, scoreColumn, queries, corpus);
    Dataset<Row> joined = joined(pairs, queryId, docId, queries, corpus);
    List<String> columns = Arrays.asList(pairs.columns());
    StructType types = pairs.schema();
    DataType[] all = Arrays.stream(joined.schema().fields()).map(StructField::dataType).toArray(DataType[]::new);
    Scorer scorer = new Scorer(columns.size(), columns.indexOf(queryId), columns.indexOf(docId), all, chunkRows);
    JavaRDD<InternalRow> scored = joined.queryExecution().toRdd().toJavaRDD().mapPartitions(scorer);
    return InternalRows.dataFrame(joined, scored, types.add(scoreColumn, DataTypes.FloatType, false));
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
    requireBatch(pairs, "pairs");
    requireBatch(queries.data(), "queries");
    requireBatch(corpus.data(), "corpus");
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

  /** The scorers plan their work on batch Datasets; each of a stream's micro-batches is one ({@code foreachBatch}). */
  static void requireBatch(Dataset<Row> data, String what) {
    if (data.isStreaming()) {
      throw new IllegalArgumentException(what + " is a streaming Dataset; expected a batch one (score a stream's"
          + " micro-batches with writeStream().foreachBatch)");
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
   * One partition of the joined rows ({@link #joined}, of column {@code types}): chunks of rows, grouped by query, one
   * call per query and chunk; each row leaves as its pairs' columns and its score.
   */
  record Scorer(int width, int queryId, int docId, DataType[] types, int chunkRows)
      implements FlatMapFunction<Iterator<InternalRow>, InternalRow> {
    @Override
    public Iterator<InternalRow> call(Iterator<InternalRow> rows) {
      IdReader queries = new IdReader(types[queryId], queryId, "a pair's or candidate's query id");
      IdReader documents = new IdReader(types[docId], docId, "a pair's or candidate's document id");
      InternalRows.WithScore withScore = new InternalRows.WithScore(types, width);
      return new Iterator<>() {
        private final ArrayDeque<InternalRow> ready = new ArrayDeque<>();

        @Override
        public boolean hasNext() {
          while (ready.isEmpty() && rows.hasNext()) {
            scoreChunk(rows, queries, documents, withScore, ready);
          }
          return !ready.isEmpty();
        }

        @Override
        public InternalRow next() {
          if (!hasNext()) {
            throw new NoSuchElementException();
          }
          return ready.poll();
        }
      };
    }

    /** A pair's row (a copy: Spark reuses the one it hands out) and its document id as the library reads it. */
    private record Member(InternalRow row, Object docId) {}

    private Object cell(InternalRow r, int column) {
      return r.isNullAt(column) ? null : types[column] instanceof BinaryType ? r.getBinary(column) : r.getArray(column);
    }

    private void scoreChunk(Iterator<InternalRow> rows, IdReader queries, IdReader documents,
        InternalRows.WithScore withScore, ArrayDeque<InternalRow> out) {
      Map<Object, List<Member>> byQuery = new LinkedHashMap<>();
      int taken = 0;
      long elements = 0;
      while (rows.hasNext() && taken < chunkRows && elements < CHUNK_ELEMENTS) {
        InternalRow r = rows.next().copy();
        Object query = queries.read(r);
        Object doc = documents.read(r);
        requireIds(query, doc);
        byQuery.computeIfAbsent(query, x -> new ArrayList<>()).add(new Member(r, doc));
        taken++;
        elements += heldElements(r);
      }
      MaxSim maxSim = ExecutorMaxSim.get();
      TokenRows query = new TokenRows("query");
      TokenRows docs = new TokenRows("document");
      for (Map.Entry<Object, List<Member>> group : byQuery.entrySet()) {
        List<Member> members = group.getValue();
        InternalRow first = members.get(0).row();
        query.clear();
        requireUnique(first, width + 4, "query " + IdText.quoted(group.getKey()), "query table");
        query.add(group.getKey(), cell(first, width), cell(first, width + 1));
        // one call per type the documents are stored in (a column's rows may differ) and, for a query of no
        // token, per d (TokenShape.batchOf: the query alone is the batch here), scores in the rows' order
        Map<TokenShape.Batch, List<Integer>> byBatch = new TreeMap<>();
        for (int i = 0; i < members.size(); i++) {
          InternalRow r = members.get(i).row();
          requireUnique(r, width + 5, "document " + IdText.quoted(members.get(i).docId()), "corpus");
          Object tokens = cell(r, width + 2);
          TokenShape.Batch batch = TokenShape.batchOf(TokenCodec.statedType(tokens), query.dim(),
              () -> TokenCodec.statedDim(tokens));
          byBatch.computeIfAbsent(batch, x -> new ArrayList<>()).add(i);
        }
        float[] scores = new float[members.size()];
        for (List<Integer> ofBatch : byBatch.values()) {
          docs.clear();
          docs.expectDim(query.dim(), "query " + IdText.quoted(group.getKey()));
          for (int i : ofBatch) {
            InternalRow r = members.get(i).row();
            docs.add(members.get(i).docId(), cell(r, width + 2), cell(r, width + 3));
          }
          int dim = query.dim() != 0 ? query.dim() : docs.dim() != 0 ? docs.dim() : 1;
          float[] batchScores = maxSim.scores(query.pack(dim).toBatch(), docs.pack(dim).toBatch())[0];
          for (int j = 0; j < batchScores.length; j++) {
            scores[ofBatch.get(j)] = batchScores[j];
          }
        }
        for (int i = 0; i < members.size(); i++) {
          out.add(withScore.of(members.get(i).row(), scores[i]));
        }
      }
    }

    /** {@code copies} is null where the id is missing, which adding its null tokens reports. */
    private static void requireUnique(InternalRow r, int copies, String what, String table) {
      if (!r.isNullAt(copies) && r.getLong(copies) > 1) {
        throw new IllegalArgumentException(what + " appears " + r.getLong(copies) + " times in the " + table
            + "; expected unique ids");
      }
    }

    /**
     * What a pair's row counts toward CHUNK_ELEMENTS, in 4-byte values: the copy the chunk holds, which carries the
     * query's tokens and the pairs' own columns beside the document's, and the document's values twice more, as
     * they are read from the copy and packed for the call.
     */
    long heldElements(InternalRow r) {
      long document = approximateElements(cell(r, width + 2));
      long copy = r instanceof UnsafeRow u ? u.getSizeInBytes() / Float.BYTES
          : approximateElements(cell(r, width)) + document;
      return copy + 2 * document;
    }

    /** L x d of a token cell as its header or first token states it (checked when the row is added). */
    private static long approximateElements(Object cell) {
      if (cell instanceof byte[] b) {
        if (b.length < TokenCodec.HEADER_BYTES) {
          return 0;
        }
        java.nio.ByteBuffer header = java.nio.ByteBuffer.wrap(b).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        return Math.max(0L, header.getInt(2)) * Math.max(0, header.getInt(6));
      }
      if (cell instanceof ArrayData a && a.numElements() > 0 && !a.isNullAt(0)) {
        return (long) a.numElements() * a.getArray(0).numElements();
      }
      return 0;
    }
  }
}
