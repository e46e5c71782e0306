package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Function;
import org.apache.spark.SparkException;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/**
 * A corpus of documents of several d against queries of no token: any d scores against such queries, so the result
 * must not depend on which documents share a partition or chunk; against a query of a token the other d is refused
 * in every partitioning.
 */
class HostileMixedDimTest extends WithLocalSpark {
  private static final List<String> DOCS = List.of("x", "y", "e", "m", "z");
  // d = 2, d = 3, no token, d = 4 with its one token masked, d = 2 again after the others
  private static final List<float[][]> TOKENS = List.of(new float[][] {{1, 2}}, new float[][] {{1, 2, 3}, {4, 5, 6}},
      new float[0][], new float[][] {{1, 1, 1, 1}}, new float[][] {{-1, 0}});
  private static final List<boolean[]> MASKS = List.of(new boolean[] {true}, new boolean[] {true, true},
      new boolean[0], new boolean[] {false}, new boolean[] {true});

  private static Dataset<Row> table(List<String> ids, List<float[][]> tokens, List<boolean[]> masks, int slices) {
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < ids.size(); i++) {
      rows.add(RowFactory.create(ids.get(i), tokens.get(i), masks.get(i)));
    }
    return spark.createDataFrame(JavaSparkContext.fromSparkContext(spark.sparkContext()).parallelize(rows, slices),
        Corpus.ARRAYS);
  }

  private static EmbeddingTable corpus(int slices, boolean binary) {
    return corpus(DOCS, slices, binary);
  }

  /** The documents of {@code ids} alone, in corpus order. */
  private static EmbeddingTable corpus(List<String> ids, int slices, boolean binary) {
    List<Integer> at = ids.stream().map(DOCS::indexOf).toList();
    Dataset<Row> data = table(ids, at.stream().map(TOKENS::get).toList(), at.stream().map(MASKS::get).toList(),
        slices);
    if (binary) {
      data = data.withColumn("tokens", TokenColumns.encode(functions.col("tokens"), DType.FLOAT32));
    }
    return EmbeddingTable.of(data).withMask("mask");
  }

  private static EmbeddingTable emptyQueries() {
    return EmbeddingTable.of(table(List.of("q1", "q2"), List.of(new float[0][], new float[0][]),
        List.of(new boolean[0], new boolean[0]), 1)).withMask("mask");
  }

  /** What the core scores each document against a query of no token of the document's own d. */
  private static List<Float> coreScores() {
    List<Float> scores = new ArrayList<>();
    try (MaxSim core = MaxSim.create()) {
      for (int i = 0; i < DOCS.size(); i++) {
        TokenBatch doc = TokenBatch.of(new float[][][] {TOKENS.get(i)}).withMask(MASKS.get(i));
        scores.add(core.scores(TokenBatch.ofFloats(new float[0], 1, 0, doc.dim()), doc)[0][0]);
      }
    }
    return scores;
  }

  /** Every query with every document of {@code docs}. */
  private static Dataset<Row> allPairs(List<String> docs) {
    List<Row> pairs = new ArrayList<>();
    for (String q : List.of("q1", "q2")) {
      for (String d : docs) {
        pairs.add(RowFactory.create(q, d));
      }
    }
    return spark.createDataFrame(pairs, new StructType().add("query_id", DataTypes.StringType)
        .add("doc_id", DataTypes.StringType));
  }

  private static List<String> sortedPairs(Dataset<Row> scored) {
    return scored.collectAsList().stream()
        .sorted(Comparator.comparing((Row r) -> r.getString(0)).thenComparing(r -> r.getString(1)))
        .map(Row::toString).toList();
  }

  @Test
  void queriesOfNoTokenScoreDocumentsOfAnyDAsTheCoreDoesInEveryPartitioning() {
    List<Float> core = coreScores();
    assertEquals(List.of(0f, 0f, MaxSim.EMPTY_DOCUMENT_SCORE, MaxSim.EMPTY_DOCUMENT_SCORE, 0f), core);
    // top k: higher scores first, ties in corpus order, as one MaxSim.topK call over the corpus ranks them
    List<Integer> order = new ArrayList<>(List.of(0, 1, 2, 3, 4));
    order.sort(Comparator.comparing((Integer i) -> -core.get(i)).thenComparing(Function.identity()));
    List<String> wantTop = new ArrayList<>();
    List<String> wantPairs = new ArrayList<>();
    for (String q : List.of("q1", "q2")) {
      for (int r = 0; r < order.size(); r++) {
        wantTop.add(RowFactory.create(q, DOCS.get(order.get(r)), r + 1, core.get(order.get(r))).toString());
      }
      DOCS.stream().sorted().forEach(d -> wantPairs.add(RowFactory.create(q, d, core.get(DOCS.indexOf(d)))
          .toString()));
    }
    for (boolean binary : new boolean[] {false, true}) {
      for (int slices = 1; slices <= 3; slices++) {
        String where = (binary ? "binary" : "arrays") + " in " + slices + " partitions";
        EmbeddingTable corpus = corpus(slices, binary);
        List<String> top = SparkMaxSim.topK(emptyQueries(), corpus, DOCS.size()).collectAsList().stream()
            .sorted(Comparator.comparing((Row r) -> r.getString(0)).thenComparing(r -> r.getInt(2)))
            .map(Row::toString).toList();
        assertEquals(wantTop, top, "topK, " + where);
        assertEquals(wantPairs, sortedPairs(SparkMaxSim.scorePairs(allPairs(DOCS), emptyQueries(), corpus)),
            "scorePairs, " + where);
        assertEquals(wantPairs, sortedPairs(SparkMaxSim.scorePairsByScan(allPairs(DOCS), emptyQueries(), corpus)),
            "scorePairsByScan, " + where);
      }
    }
  }

  @Test
  void aQueryOfATokenRefusesADocumentOfAnotherDInEveryPartitioning() {
    // q1 holds a token of d = 2; y (d = 3) is refused naming it, whichever documents share its partition (m, of
    // d = 4, is left out: which of two bad documents a job meets first does depend on the partitioning)
    EmbeddingTable queries = EmbeddingTable.of(table(List.of("q1", "q2"), List.of(new float[][] {{1, 0}},
        new float[0][]), List.of(new boolean[] {true}, new boolean[0]), 1)).withMask("mask");
    String y = "tokens of document 'y' have d = 3; expected d = 2 like ";
    for (boolean binary : new boolean[] {false, true}) {
      for (int slices = 1; slices <= 3; slices++) {
        String where = (binary ? "binary" : "arrays") + " in " + slices + " partitions";
        List<String> docs = List.of("x", "y", "e", "z");
        EmbeddingTable corpus = corpus(docs, slices, binary);
        String top = SparkTopKTest.causeOf(assertThrows(SparkException.class,
            () -> SparkMaxSim.topK(queries, corpus, 2).collectAsList(), where));
        assertEquals(y + "the queries", top, "topK, " + where);
        String scan = SparkTopKTest.causeOf(assertThrows(SparkException.class,
            () -> SparkMaxSim.scorePairsByScan(allPairs(docs), queries, corpus).collectAsList(), where));
        assertEquals(y + "the queries", scan, "scorePairsByScan, " + where);
        // the join scores each pair with its own query: the pair of q1 and y is refused, naming q1
        String join = SparkTopKTest.causeOf(assertThrows(SparkException.class,
            () -> SparkMaxSim.scorePairs(allPairs(docs), queries, corpus).collectAsList(), where));
        assertEquals(y + "query 'q1'", join, "scorePairs, " + where);
      }
    }
  }
}
