package dev.maxsim4j.spark;

import static org.apache.spark.sql.functions.array_sort;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.collect_list;
import static org.apache.spark.sql.functions.first;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.monotonically_increasing_id;
import static org.apache.spark.sql.functions.posexplode;
import static org.apache.spark.sql.functions.size;
import static org.apache.spark.sql.functions.struct;
import static org.apache.spark.sql.functions.when;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;

/**
 * Scores (query, K candidates) rows: the candidates are exploded into pairs, scored as {@link PairScoring}
 * scores pairs, and gathered back into each row in candidate order.
 */
final class CandidateScoring {
  private static final String ROW = PairScoring.PREFIX + "row";
  private static final String ORIGINAL = PairScoring.PREFIX + "original";
  private static final String POSITION = PairScoring.PREFIX + "pos";
  private static final String DOC = PairScoring.PREFIX + "doc";
  private static final String SCORE = PairScoring.PREFIX + "score";
  private static final String SCORED = PairScoring.PREFIX + "scored";

  private CandidateScoring() {}

  static Dataset<Row> score(Dataset<Row> rows, String queryId, String candidates, String scoresColumn,
      EmbeddingTable queries, EmbeddingTable corpus) {
    if (rows == null) {
      throw new IllegalArgumentException("rows is null; expected a Dataset of (query id, candidates) rows");
    }
    List<String> columns = Arrays.asList(rows.columns());
    for (String c : new String[] {queryId, candidates}) {
      if (!columns.contains(c)) {
        throw new IllegalArgumentException("rows has no column '" + c + "'; it has " + columns);
      }
    }
    EmbeddingTable.requireDistinct(rows, "rows");
    PairScoring.requireBatch(rows, "rows");
    DataType listType = rows.schema().apply(candidates).dataType();
    DataType queryType = rows.schema().apply(queryId).dataType();
    if (!(listType instanceof ArrayType list) || !EmbeddingTable.isSingleValue(list.elementType())) {
      throw new IllegalArgumentException("candidates column '" + candidates + "' is " + listType.simpleString()
          + "; expected an array of document ids, single values such as strings or numbers"
          + EmbeddingTable.collationNote(listType));
    }
    if (!EmbeddingTable.isSingleValue(queryType)) {
      throw new IllegalArgumentException("rows column '" + queryId + "' is " + queryType.simpleString()
          + "; expected query ids, single values such as strings or numbers" + EmbeddingTable.collationNote(queryType));
    }
    EmbeddingTable.requireNew(rows, scoresColumn, "rows");
    Column[] originals = columns.stream().map(c -> col(PairScoring.quoted(c))).toArray(Column[]::new);
    Column candidateList = col(PairScoring.quoted(candidates));
    Column nonEmpty = candidateList.isNotNull().and(size(candidateList).gt(0));
    // the row id is taken before the explode: in the same select Spark would evaluate it once per candidate
    Dataset<Row> pairs = rows.where(nonEmpty).withColumn(ROW, monotonically_increasing_id())
        .select(col(ROW), struct(originals).as(ORIGINAL), col(PairScoring.quoted(queryId)).as(PairScoring.PREFIX + "q"),
            posexplode(candidateList).as(new String[] {POSITION, DOC}));
    Dataset<Row> scored = PairScoring.score(pairs, PairScoring.PREFIX + "q", DOC, SCORE, queries, corpus);
    Dataset<Row> gathered = scored.groupBy(col(ROW))
        .agg(first(col(ORIGINAL)).as(ORIGINAL), array_sort(collect_list(struct(col(POSITION), col(SCORE))))
            .as(SCORED));
    List<Column> out = new ArrayList<>();
    // the aggregation that gathers the lists makes every column nullable (declaring the rows' schema again over its
    // internal rows would run the scoring when this is called, adaptive execution planning it) and drops metadata,
    // which is given back
    for (StructField f : rows.schema().fields()) {
      out.add(col(ORIGINAL).getField(f.name()).as(f.name(), f.metadata()));
    }
    out.add(col(SCORED).getField(SCORE).as(scoresColumn));
    Dataset<Row> withScores = gathered.select(out.toArray(Column[]::new));
    // rows with an empty candidate list get no scores, a null list null scores: no row is dropped
    List<Column> empty = new ArrayList<>(Arrays.asList(originals));
    empty.add(when(candidateList.isNull(), lit(null).cast("array<float>")).otherwise(lit(new float[0]))
        .as(scoresColumn));
    return withScores.unionByName(rows.where(nonEmpty.isNull().or(nonEmpty.equalTo(false)))
        .select(empty.toArray(Column[]::new)));
  }
}
