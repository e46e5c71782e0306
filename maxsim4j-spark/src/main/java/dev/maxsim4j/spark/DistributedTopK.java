package dev.maxsim4j.spark;

import dev.maxsim4j.DType;
import dev.maxsim4j.TopK;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import scala.Tuple2;

/**
 * Exact top-k of broadcast queries over a partitioned corpus: each partition ranks its documents with
 * {@code MaxSim.topK} (in bounded chunks, merged as it goes), sends its best k per query, and a shuffle by
 * query brings every partition's k to one task, where {@link TopK#merge} keeps the global best k. Ties rank by
 * corpus order (partition, then position), as one {@code MaxSim.topK} call over the collected corpus ranks them.
 * Ids are checked where it costs no pass of its own: queries on the driver, documents as they are read (a null
 * id) and merged (one id twice in a query's top k).
 */
final class DistributedTopK {
  private DistributedTopK() {}

  static Dataset<Row> topK(EmbeddingTable queries, EmbeddingTable corpus, int k) {
    return topK(queries, corpus, k, PairScoring.CHUNK_ROWS);
  }

  /** As above with chunks of at most {@code chunkRows} documents (tests use small chunks to cross their bounds). */
  static Dataset<Row> topK(EmbeddingTable queries, EmbeddingTable corpus, int k, int chunkRows) {
    if (queries == null || corpus == null) {
      throw new IllegalArgumentException((queries == null ? "queries" : "corpus") + " is null; expected a table");
    }
    if (k < 1) {
      throw new IllegalArgumentException("k = " + k + "; expected k >= 1");
    }
    SparkSession spark = corpus.data().sparkSession();
    StructType schema = new StructType()
        .add("query_id", queries.idType(), true)
        .add("doc_id", corpus.idType(), true)
        .add("rank", DataTypes.IntegerType, false)
        .add("score", DataTypes.FloatType, false);
    PairScoring.requireBatch(queries.data(), "queries");
    PairScoring.requireBatch(corpus.data(), "corpus");
    QuerySet set = QuerySet.collect(queries);
    if (set.size() == 0) {
      return spark.createDataFrame(List.of(), schema);
    }
    Broadcast<QuerySet> broadcast = JavaSparkContext.fromSparkContext(spark.sparkContext()).broadcast(set);
    // Spark's internal rows: no conversion to Row, and array<array<float>> read unboxed
    JavaRDD<InternalRow> documents = corpus.data().select(TableColumns.read(corpus)).queryExecution().toRdd()
        .toJavaRDD();
    int reducers = Math.max(1, Math.min(set.size(), spark.sparkContext().defaultParallelism()));
    PartitionTopK ranking = new PartitionTopK(broadcast, k, chunkRows, corpus.idType(),
        corpus.data().schema().apply(corpus.tokens()).dataType() instanceof BinaryType);
    JavaRDD<Row> merged = documents.mapPartitionsWithIndex(ranking, false)
        .mapToPair(t -> t)
        .groupByKey(reducers)
        .flatMap(new MergeTopK(broadcast, k));
    return spark.createDataFrame(merged, schema);
  }

  /**
   * One partition's best k for one query: scores and partition-local indices in top-k order, and their ids. A
   * class, not a record: Kryo (spark.serializer) cannot write a record, whose fields refuse Unsafe's offsets.
   */
  static final class PartTop implements Serializable {
    private static final long serialVersionUID = 1L;
    private final int partition;
    private final float[] scores;
    private final int[] local;
    private final Object[] ids;

    PartTop(int partition, float[] scores, int[] local, Object[] ids) {
      this.partition = partition;
      this.scores = scores;
      this.local = local;
      this.ids = ids;
    }

    int partition() {
      return partition;
    }

    float[] scores() {
      return scores;
    }

    int[] local() {
      return local;
    }

    Object[] ids() {
      return ids;
    }
  }

  /**
   * Ranks one partition in chunks, one chunk per type its documents are stored in (a batch holds one type, and a
   * binary column's cells may differ) and, for queries of no token, per d ({@link TokenShape#batchOf}); emits
   * (query index, its best k here) for every query.
   */
  private record PartitionTopK(Broadcast<QuerySet> queries, int k, int chunkRows, DataType idType,
      boolean binaryTokens)
      implements Function2<Integer, Iterator<InternalRow>, Iterator<Tuple2<Integer, PartTop>>> {
    @Override
    public Iterator<Tuple2<Integer, PartTop>> call(Integer partition, Iterator<InternalRow> rows) {
      if (!rows.hasNext()) {
        return Collections.emptyIterator();
      }
      IdReader idReader = new IdReader(idType, "document id");
      QuerySet set = queries.value();
      Map<TokenShape.Batch, Pending> byBatch = new TreeMap<>();
      int queryDim = set.tokens().dim();
      Ranked ranked = new Ranked();
      int position = 0;
      while (rows.hasNext()) {
        InternalRow r = rows.next(); // a reused buffer: the chunk copies what it keeps
        Object id = idReader.read(r);
        if (id == null) {
          throw new IllegalArgumentException("a document's id is null (partition " + partition + ", row "
              + position + "); expected every document to have an id (results name them by id)");
        }
        Object mask = r.numFields() > 2 && !r.isNullAt(2) ? r.getArray(2) : null;
        TokenShape.Batch batch = TokenShape.batchOf(binaryTokens ? CellChunk.statedType(r) : DType.FLOAT32,
            queryDim, () -> binaryTokens ? CellChunk.statedDim(r)
                : TokenCodec.statedDim(r.isNullAt(1) ? null : r.getArray(1)));
        Pending p = byBatch.computeIfAbsent(batch,
            b -> new Pending(DocumentChunk.of(binaryTokens, chunkRows, PairScoring.CHUNK_ELEMENTS, queryDim)));
        if (!p.chunk.add(id, r, mask)) {
          ranked.rank(set, p, k);
          p.chunk.add(id, r, mask);
        }
        p.add(id, position++);
      }
      for (Pending p : byBatch.values()) {
        ranked.rank(set, p, k);
        p.chunk.release();
      }
      TopK best = ranked.best;
      Map<Integer, Object> bestIds = ranked.ids;
      List<Tuple2<Integer, PartTop>> out = new ArrayList<>(set.size());
      for (int q = 0; q < set.size(); q++) {
        Object[] ids = new Object[best.indices()[q].length];
        for (int r = 0; r < ids.length; r++) {
          ids[r] = bestIds.get(best.indices()[q][r]);
        }
        out.add(new Tuple2<>(q, new PartTop(partition, best.scores()[q], best.indices()[q], ids)));
      }
      return out.iterator();
    }
  }

  /** A chunk of one type's documents, with their ids and positions in the partition. */
  private static final class Pending {
    private final DocumentChunk chunk;
    private final List<Object> ids = new ArrayList<>();
    private int[] positions = new int[16];

    Pending(DocumentChunk chunk) {
      this.chunk = chunk;
    }

    void add(Object id, int position) {
      if (ids.size() == positions.length) {
        positions = Arrays.copyOf(positions, 2 * positions.length);
      }
      positions[ids.size()] = position;
      ids.add(id);
    }
  }

  /** A partition's best k so far, over the chunks ranked, indexed by position, with the ids of the documents. */
  private static final class Ranked {
    private TopK best;
    private Map<Integer, Object> ids = Map.of();

    /** Ranks the chunk's documents, merges them into the best so far and empties the chunk. */
    void rank(QuerySet set, Pending p, int k) {
      if (p.chunk.rows() == 0) {
        return;
      }
      int dim = set.tokens().dim() != 0 ? set.tokens().dim() : Math.max(1, p.chunk.dim());
      TopK part = ExecutorMaxSim.get().topK(set.batch(dim), p.chunk.batch(dim), k);
      // chunk indices to partition positions, which keep the chunk's order, so ties rank as in one call
      int[][] placed = new int[part.indices().length][];
      Map<Integer, Object> fresh = new HashMap<>();
      for (int q = 0; q < placed.length; q++) {
        placed[q] = new int[part.indices()[q].length];
        for (int r = 0; r < placed[q].length; r++) {
          int local = part.indices()[q][r];
          placed[q][r] = p.positions[local];
          fresh.put(placed[q][r], p.ids.get(local));
        }
      }
      TopK ranked = new TopK(part.scores(), placed);
      best = best == null ? ranked : TopK.merge(k, List.of(best, ranked), new int[] {0, 0});
      Map<Integer, Object> kept = new HashMap<>();
      for (int[] row : best.indices()) {
        for (int position : row) {
          kept.put(position, fresh.containsKey(position) ? fresh.get(position) : ids.get(position));
        }
      }
      ids = kept;
      p.chunk.clear();
      p.ids.clear();
    }
  }

  /** All partitions' best k for one query, merged into the global best k as (query, doc, rank, score) rows. */
  private record MergeTopK(Broadcast<QuerySet> queries, int k)
      implements FlatMapFunction<Tuple2<Integer, Iterable<PartTop>>, Row> {
    @Override
    public Iterator<Row> call(Tuple2<Integer, Iterable<PartTop>> query) {
      List<PartTop> parts = new ArrayList<>();
      query._2().forEach(parts::add);
      return merge(queries.value().ids()[query._1()], parts, k).iterator();
    }
  }

  /**
   * The global best {@code k} of one query over its partitions' best k, as (query, doc, rank, score) rows. Corpus
   * order is (partition, position): each part's entries are numbered by position among themselves and the parts
   * follow one another, so ties rank as in one call over the collected corpus, and the numbers stay below the
   * entries merged however many rows the partitions hold (positions summed over the parts would pass 2^31 on a corpus
   * of billions).
   */
  static List<Row> merge(Object queryId, List<PartTop> parts, int k) {
    List<PartTop> sorted = new ArrayList<>(parts.size());
    for (PartTop part : parts) {
      if (part.local().length > 0) { // a part of no entry would share its offset with the next
        sorted.add(part);
      }
    }
    sorted.sort(Comparator.comparingInt(PartTop::partition));
    int[] first = new int[sorted.size()];
    int[][] entryAt = new int[sorted.size()][]; // part p's entry at each number, its positions ascending
    List<TopK> tops = new ArrayList<>(sorted.size());
    long next = 0;
    for (int p = 0; p < sorted.size(); p++) {
      PartTop part = sorted.get(p);
      int n = part.local().length;
      Integer[] order = new Integer[n];
      for (int i = 0; i < n; i++) {
        order[i] = i;
      }
      Arrays.sort(order, Comparator.comparingInt(i -> part.local()[i]));
      int[] numbered = new int[n];
      entryAt[p] = new int[n];
      for (int r = 0; r < n; r++) {
        numbered[order[r]] = r;
        entryAt[p][r] = order[r];
      }
      if (next + n > Integer.MAX_VALUE) {
        throw new IllegalArgumentException("query " + IdText.quoted(queryId)
            + " gathers more than 2^31 - 1 entries from "
            + parts.size() + " partitions' top " + k + "; expected fewer partitions or a smaller k");
      }
      first[p] = (int) next;
      next += n;
      tops.add(new TopK(new float[][] {part.scores()}, new int[][] {numbered}));
    }
    if (tops.isEmpty()) {
      return List.of();
    }
    TopK merged = TopK.merge(k, tops, first);
    List<Row> rows = new ArrayList<>(merged.indices()[0].length);
    Set<Object> listed = new HashSet<>();
    for (int r = 0; r < merged.indices()[0].length; r++) {
      int global = merged.indices()[0][r];
      int p = Arrays.binarySearch(first, global); // offsets rise strictly: every part holds an entry
      if (p < 0) {
        p = -p - 2;
      }
      Object docId = sorted.get(p).ids()[entryAt[p][global - first[p]]];
      if (!listed.add(ScanPairScoring.lookupKey(docId))) {
        throw new IllegalArgumentException("document id " + IdText.quoted(docId)
            + " appears more than once in the corpus" + zeroNote(docId) + " (twice in the top " + k + " of query "
            + IdText.quoted(queryId) + "); expected unique ids");
      }
      rows.add(RowFactory.create(queryId, docId, r + 1, merged.scores()[0][r]));
    }
    return rows;
  }

  /** Says why a zero id repeats where the table may hold it once with each sign. */
  static String zeroNote(Object id) {
    boolean zero = id instanceof Double d && d == 0 || id instanceof Float f && f == 0;
    return zero ? " (Spark compares -0.0 and 0.0 as one id)" : "";
  }
}
