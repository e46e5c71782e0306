package dev.maxsim4j.spark;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * MaxSim over Spark Datasets, the batched API: scores pairs or candidate lists whose embeddings come from
 * joins with a query and a corpus table, and ranks a partitioned corpus for a set of queries exactly. Every
 * partition makes fused calls on its executor's one {@code MaxSim} ({@link ExecutorMaxSim}); the SQL function of
 * {@link MaxSimFunctions} scores one pair per call and is for ad-hoc use.
 *
 * <pre>{@code
 * EmbeddingTable queries = EmbeddingTable.of(spark.read().parquet("queries.parquet"));
 * EmbeddingTable corpus = EmbeddingTable.of(spark.read().parquet("corpus/"));
 * Dataset<Row> labels = SparkMaxSim.scorePairs(pairs, queries, corpus);   // pairs + score
 * Dataset<Row> run = SparkMaxSim.topK(queries, corpus, 100);              // query_id, doc_id, rank, score
 * TrecRun.write(run, "run.trec", "maxsim4j");
 * }</pre>
 *
 * <p>Results are Datasets that each action recomputes, so {@code persist()} a result that feeds several actions.
 * A call plans its work when made: the pair and candidate scorers their joins, whose shuffle stages Spark's adaptive
 * execution (its default) runs then; the scan scorer and top-k collect the queries. Inputs are batch Datasets: score
 * a stream's micro-batches with {@code writeStream().foreachBatch}. A failure on an executor (a document of the wrong
 * d, a malformed cell) fails the job with Spark's {@code SparkException}, whose cause is the
 * {@code IllegalArgumentException} naming the row.
 *
 * <p>A document must have the d of the queries where they hold a token (the broadcast queries of top-k and the
 * scan, a pair's own query for the join): one of another d fails the job in every partitioning. Queries of no
 * token score a document of any d as the core scores it against an empty query of its d (0, or -1e9 for a
 * document of no valid token), whichever documents share its partition.
 */
public final class SparkMaxSim {
  private SparkMaxSim() {}

  /**
   * {@code pairs} with a {@code score} column: columns {@code query_id} and {@code doc_id} name a query of
   * {@code queries} and a document of {@code corpus}. A pair whose id is null, missing from its table, or held by
   * two of its rows, fails the job with an error naming the id, rather than dropping the pair or scoring it twice.
   */
  public static Dataset<Row> scorePairs(Dataset<Row> pairs, EmbeddingTable queries, EmbeddingTable corpus) {
    return scorePairs(pairs, "query_id", "doc_id", queries, corpus);
  }

  /** As {@link #scorePairs(Dataset, EmbeddingTable, EmbeddingTable)} with other id columns. */
  public static Dataset<Row> scorePairs(Dataset<Row> pairs, String queryIdColumn, String docIdColumn,
      EmbeddingTable queries, EmbeddingTable corpus) {
    PairScoring.refuseReserved(pairs, "pairs");
    return PairScoring.score(pairs, queryIdColumn, docIdColumn, "score", queries, corpus);
  }

  /**
   * As {@link #scorePairs(Dataset, EmbeddingTable, EmbeddingTable)}, without moving any document: the pairs'
   * distinct ids and the queries they name are collected on the driver and broadcast, each corpus partition
   * scores the pairs of its own documents, and only (query, document, score) rows are joined back to the pairs.
   * Much faster where the pairs' ids and their queries fit in memory (millions of pairs do); the corpus is read
   * in full either way.
   */
  public static Dataset<Row> scorePairsByScan(Dataset<Row> pairs, EmbeddingTable queries, EmbeddingTable corpus) {
    return scorePairsByScan(pairs, "query_id", "doc_id", queries, corpus);
  }

  /** As {@link #scorePairsByScan(Dataset, EmbeddingTable, EmbeddingTable)} with other id columns. */
  public static Dataset<Row> scorePairsByScan(Dataset<Row> pairs, String queryIdColumn, String docIdColumn,
      EmbeddingTable queries, EmbeddingTable corpus) {
    PairScoring.refuseReserved(pairs, "pairs");
    return ScanPairScoring.score(pairs, queryIdColumn, docIdColumn, "score", queries, corpus,
        PairScoring.CHUNK_ROWS);
  }

  /**
   * {@code rows} with a {@code scores} column ({@code array<float>}, in the order of the candidates): column
   * {@code query_id} names a query, column {@code candidates} an array of document ids. A row with an empty
   * list gets no scores, one with a null list null. Columns named {@code __maxsim4j_...} are refused here and by
   * the pair scorers, which name their own columns so.
   */
  public static Dataset<Row> scoreCandidates(Dataset<Row> rows, EmbeddingTable queries, EmbeddingTable corpus) {
    return scoreCandidates(rows, "query_id", "candidates", queries, corpus);
  }

  /** As {@link #scoreCandidates(Dataset, EmbeddingTable, EmbeddingTable)} with other columns. */
  public static Dataset<Row> scoreCandidates(Dataset<Row> rows, String queryIdColumn, String candidatesColumn,
      EmbeddingTable queries, EmbeddingTable corpus) {
    PairScoring.refuseReserved(rows, "rows");
    return CandidateScoring.score(rows, queryIdColumn, candidatesColumn, "scores", queries, corpus);
  }

  /**
   * The exact {@code k} best documents of {@code corpus} for every query: rows {@code (query_id, doc_id, rank,
   * score)}, rank 1 the best, {@code min(k, documents)} per query, ordered as {@code MaxSim.topK} orders (higher
   * scores first, ties by corpus order: Spark's order of the corpus's rows, partition then position, which for a
   * Parquet folder or a hash repartition is not the ids' order; docs/scaling.md). The queries are collected to the
   * driver and broadcast, so they must fit in memory; the corpus stays partitioned, and only k entries per query and
   * partition cross the network. A null or repeated query id fails here, a null document id or one that two rows
   * bring into a query's top k fails the job, each naming the id; -0.0 and 0.0 are one id, as to Spark's joins.
   */
  public static Dataset<Row> topK(EmbeddingTable queries, EmbeddingTable corpus, int k) {
    return DistributedTopK.topK(queries, corpus, k);
  }
}
