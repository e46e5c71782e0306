package dev.maxsim4j.spark;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.lit;

import dev.maxsim4j.MaxSim;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.expressions.Window;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Scores (query id, document id) rows without moving document tokens: the pairs' distinct ids and the queries
 * they name are collected and broadcast, each corpus partition scores the pairs of its own documents (one call
 * per query and chunk), and the scores, ids only, are joined back to the pairs.
 */
final class ScanPairScoring {
  private static final String QUERY_KEY = PairScoring.PREFIX + "sq";
  private static final String DOC_KEY = PairScoring.PREFIX + "sd";
  private static final String SCORE = PairScoring.PREFIX + "ss";
  private static final String COPIES = PairScoring.PREFIX + "sc";

  private ScanPairScoring() {}

  static Dataset<Row> score(Dataset<Row> pairs, String queryId, String docId, String scoreColumn,
      EmbeddingTable queries, EmbeddingTable corpus, int chunkRows) {
    PairScoring.check(pairs, queryId, docId, scoreColumn, queries, corpus);
    SparkSession spark = corpus.data().sparkSession();
    Dataset<Row> keys = pairs.select(PairScoring.idAs(pairs, queryId, queries.idType()).as(QUERY_KEY),
        PairScoring.idAs(pairs, docId, corpus.idType()).as(DOC_KEY)).distinct();
    // the key column taken from its own Dataset: the query table may hold a column of the same name
    Dataset<Row> queryKeys = keys.select(QUERY_KEY).distinct();
    Dataset<Row> named = queries.data().join(queryKeys,
        queries.data().col(PairScoring.quoted(queries.id())).equalTo(queryKeys.col(QUERY_KEY)), "left_semi");
    QuerySet set = QuerySet.collect(new EmbeddingTable(named, queries.id(), queries.tokens(), queries.mask()));
    Map<Object, Integer> queryIndex = new HashMap<>();
    for (int i = 0; i < set.size(); i++) {
      queryIndex.putIfAbsent(lookupKey(set.ids()[i]), i);
    }
    Map<Object, List<Integer>> byDocument = new HashMap<>();
    DataType queryType = queries.idType();
    DataType docType = corpus.idType();
    for (Row key : keys.select(IdValues.collected(col(QUERY_KEY), queryType), IdValues.collected(col(DOC_KEY),
        docType)).collectAsList()) {
      Integer q = queryIndex.get(lookupKey(IdValues.external(key.get(0), queryType, "a pair's query id")));
      if (q != null && !key.isNullAt(1)) {
        byDocument.computeIfAbsent(lookupKey(IdValues.external(key.get(1), docType, "a pair's document id")),
            d -> new ArrayList<>()).add(q);
      }
    }
    Map<Object, int[]> plan = new HashMap<>();
    byDocument.forEach((d, qs) -> plan.put(d, qs.stream().mapToInt(Integer::intValue).toArray()));
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    Broadcast<Plan> broadcast = jsc.broadcast(new Plan(set, plan));
    JavaRDD<InternalRow> documents = corpus.data().select(TableColumns.of(corpus)).queryExecution().toRdd()
        .toJavaRDD();
    boolean binary = corpus.data().schema().apply(corpus.tokens()).dataType() instanceof BinaryType;
    JavaRDD<Row> scored = documents.mapPartitions(new Scan(broadcast, chunkRows, corpus.idType(), binary));
    // a document id held by several corpus rows scores once per row: counted where the join partitions by it
    Dataset<Row> scores = spark.createDataFrame(scored, new StructType()
        .add(QUERY_KEY, queries.idType()).add(DOC_KEY, corpus.idType()).add(SCORE, DataTypes.FloatType))
        .withColumn(COPIES, count(lit(1)).over(Window.partitionBy(col(QUERY_KEY), col(DOC_KEY))));
    Dataset<Row> joined = pairs.join(scores, PairScoring.idAs(pairs, queryId, queries.idType())
        .equalTo(scores.col(QUERY_KEY))
        .and(PairScoring.idAs(pairs, docId, corpus.idType()).equalTo(scores.col(DOC_KEY))), "left");
    List<Column> out = new ArrayList<>();
    StructType types = pairs.schema();
    for (String c : pairs.columns()) {
      out.add(pairs.col(PairScoring.quoted(c)));
    }
    out.add(scores.col(SCORE));
    out.add(scores.col(COPIES));
    out.add(IdValues.collected(PairScoring.idAs(pairs, queryId, queries.idType()), queries.idType())
        .as(QUERY_KEY + "p"));
    List<String> columns = Arrays.asList(pairs.columns());
    Dataset<Row> rows = joined.select(out.toArray(Column[]::new));
    DataType[] all = Arrays.stream(rows.schema().fields()).map(StructField::dataType).toArray(DataType[]::new);
    // internal rows: the pairs' columns pass through as Spark holds them (InternalRows says why)
    JavaRDD<InternalRow> checked = rows.queryExecution().toRdd().toJavaRDD().mapPartitions(new RequireScore(
        broadcast, columns.indexOf(queryId), columns.indexOf(docId), columns.size(), queries.idType(), all));
    return InternalRows.dataFrame(rows, checked, types.add(scoreColumn, DataTypes.FloatType, false));
  }

  /**
   * An id as Spark compares it: -0.0 and 0.0 (float or double) are one id to its joins and distinct(), two to
   * Java's equals, so the executor's lookup takes them as Spark does (two such documents are then a duplicate id,
   * refused as on the join path).
   */
  static Object lookupKey(Object id) {
    if (id instanceof Double d && d == 0) {
      return 0.0;
    }
    if (id instanceof Float f && f == 0) {
      return 0f;
    }
    return id;
  }

  /**
   * The documents of one call: those of one query in one batch ({@link TokenShape#batchOf}: one type, as a column's
   * rows may differ in type, and one d where the queries hold no token).
   */
  private record Group(int query, TokenShape.Batch batch) {}

  /**
   * The broadcast: the queries, and for every document id the indices of the queries it is paired with. A class,
   * not a record: Kryo (spark.serializer) cannot write a record, whose fields refuse Unsafe's offsets.
   */
  static final class Plan implements Serializable {
    private static final long serialVersionUID = 1L;
    private final QuerySet queries;
    private final Map<Object, int[]> queriesOfDocument;

    Plan(QuerySet queries, Map<Object, int[]> queriesOfDocument) {
      this.queries = queries;
      this.queriesOfDocument = queriesOfDocument;
    }

    QuerySet queries() {
      return queries;
    }

    Map<Object, int[]> queriesOfDocument() {
      return queriesOfDocument;
    }
  }

  /** One corpus partition: its documents that pairs name, grouped by query, one call per query and chunk. */
  private record Scan(Broadcast<Plan> plan, int chunkRows, DataType idType, boolean binaryTokens)
      implements FlatMapFunction<Iterator<InternalRow>, Row> {
    @Override
    public Iterator<Row> call(Iterator<InternalRow> rows) {
      IdReader idReader = new IdReader(idType, "document id");
      Plan p = plan.value();
      Map<Group, TokenRows> documents = new LinkedHashMap<>();
      Map<Group, List<Object>> documentIds = new HashMap<>();
      List<Row> out = new ArrayList<>();
      int pending = 0;
      long elements = 0;
      while (rows.hasNext()) {
        InternalRow r = rows.next(); // a reused buffer: add copies what it keeps
        Object id = idReader.read(r);
        int[] queries = id == null ? null : p.queriesOfDocument().get(lookupKey(id));
        if (queries == null) {
          continue;
        }
        Object cell = r.isNullAt(1) ? null : binaryTokens ? r.getBinary(1) : r.getArray(1);
        Object mask = r.isNullAt(2) ? null : r.getArray(2);
        TokenShape.Batch batch = TokenShape.batchOf(TokenCodec.statedType(cell), p.queries().tokens().dim(),
            () -> TokenCodec.statedDim(cell));
        for (int q : queries) {
          Group group = new Group(q, batch);
          TokenRows rowsOfQuery = documents.computeIfAbsent(group, x -> expecting(p.queries().tokens().dim()));
          int before = rowsOfQuery.tokens();
          rowsOfQuery.add(id, cell, mask);
          elements += (long) (rowsOfQuery.tokens() - before) * rowsOfQuery.dim();
          documentIds.computeIfAbsent(group, x -> new ArrayList<>()).add(id);
          pending++;
          // checked per query: each query's group holds its own copy of the document, and one document may be
          // named by every query
          if (pending >= chunkRows || elements >= PairScoring.CHUNK_ELEMENTS) {
            score(p.queries(), documents, documentIds, out);
            pending = 0;
            elements = 0;
          }
        }
      }
      score(p.queries(), documents, documentIds, out);
      return out.iterator();
    }

    private static TokenRows expecting(int queryDim) {
      TokenRows rows = new TokenRows("document");
      rows.expectDim(queryDim, "the queries");
      return rows;
    }

    private static void score(QuerySet queries, Map<Group, TokenRows> documents,
        Map<Group, List<Object>> documentIds, List<Row> out) {
      MaxSim maxSim = ExecutorMaxSim.get();
      for (Map.Entry<Group, TokenRows> e : documents.entrySet()) {
        int q = e.getKey().query();
        TokenRows rows = e.getValue();
        int queryDim = queries.tokens().dim();
        int dim = queryDim != 0 ? queryDim : rows.dim() != 0 ? rows.dim() : 1;
        float[] scores = maxSim.scores(queries.query(q, dim), rows.pack(dim).toBatch())[0];
        List<Object> ids = documentIds.get(e.getKey());
        for (int i = 0; i < scores.length; i++) {
          out.add(RowFactory.create(queries.ids()[q], ids.get(i), scores[i]));
        }
      }
      documents.clear();
      documentIds.clear();
    }
  }

  /**
   * Every pair gets one score; one without names the id its tables lack, rather than being dropped, and one
   * scored against several corpus rows names the id they share; the count and cast query id columns are dropped.
   * Rows arrive as the pairs' columns (of column {@code types}), the score, the count and the query id as the query
   * table types it, collected ({@link IdValues#collected}).
   */
  private record RequireScore(Broadcast<Plan> plan, int queryId, int docId, int width, DataType queryType,
      DataType[] types) implements FlatMapFunction<Iterator<InternalRow>, InternalRow> {
    @Override
    public Iterator<InternalRow> call(Iterator<InternalRow> rows) {
      IdReader queries = new IdReader(types[queryId], queryId, "a pair's query id");
      IdReader documents = new IdReader(types[docId], docId, "a pair's document id");
      InternalRows.WithScore withScore = new InternalRows.WithScore(types, width);
      return new Iterator<>() {
        @Override
        public boolean hasNext() {
          return rows.hasNext();
        }

        @Override
        public InternalRow next() {
          return checked(rows.next().copy(), queries, documents, withScore);
        }
      };
    }

    private InternalRow checked(InternalRow row, IdReader queries, IdReader documents,
        InternalRows.WithScore withScore) {
      Object q = queries.read(row);
      Object d = documents.read(row);
      PairScoring.requireIds(q, d);
      if (row.isNullAt(width)) {
        // the pair's id as the query table types it: a string "1" is query 1 of an int table
        Object asTable = IdValues.external(row.isNullAt(width + 2) ? null : row.get(width + 2, types[width + 2]),
            queryType, "a pair's query id");
        boolean knownQuery = asTable != null && Arrays.stream(plan.value().queries().ids())
            .anyMatch(id -> lookupKey(id).equals(lookupKey(asTable)));
        throw new IllegalArgumentException(knownQuery
            ? "document " + IdText.quoted(d) + " of a pair with query " + IdText.quoted(asTable)
                + " is not in the corpus"
            : "query " + IdText.quoted(q) + " of a pair is not in the query table");
      }
      if (row.getLong(width + 1) > 1) {
        throw new IllegalArgumentException("document " + IdText.quoted(d) + " appears " + row.getLong(width + 1)
            + " times in the corpus; expected unique ids");
      }
      return withScore.of(row, row.getFloat(width));
    }
  }
}
