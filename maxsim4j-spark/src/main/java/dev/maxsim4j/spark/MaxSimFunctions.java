package dev.maxsim4j.spark;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.types.DataTypes;

/**
 * SQL functions for ad-hoc queries:
 * <ul>
 *   <li>{@code maxsim(query_tokens, doc_tokens)}: the MaxSim score of one pair, float; each argument
 *       {@code array<array<float>>} or a {@link TokenCodec} {@code binary} cell;
 *   <li>{@code maxsim_encode(tokens, 'bf16')}: {@code array<array<float>>} as a binary cell (fp32, fp16, bf16,
 *       int8, fp8, binary);
 *   <li>{@code maxsim_decode(cell)}: a binary cell as {@code array<array<float>>}.
 * </ul>
 *
 * <pre>{@code
 * MaxSimFunctions.register(spark);
 * spark.sql("SELECT q.id, d.id, maxsim(q.tokens, d.tokens) AS score FROM q JOIN d ON ...");
 * }</pre>
 *
 * <p>{@code maxsim} makes one call per row: fine for exploring, slow for millions of pairs, where
 * {@link SparkMaxSim}'s batched scoring makes one fused call per query and chunk.
 */
public final class MaxSimFunctions {
  private MaxSimFunctions() {}

  /** Registers the functions with {@code spark}'s session. */
  public static void register(SparkSession spark) {
    if (spark == null) {
      throw new IllegalArgumentException("spark is null; expected a SparkSession");
    }
    spark.udf().register("maxsim", (UDF2<Object, Object, Float>) MaxSimFunctions::score, DataTypes.FloatType);
    spark.udf().register("maxsim_encode", TokenColumns.ENCODE);
    spark.udf().register("maxsim_decode", TokenColumns.DECODE);
  }

  /** One pair's score; null when either side is null, as SQL functions treat null. */
  static Float score(Object query, Object document) {
    if (query == null || document == null) {
      return null;
    }
    var q = Cells.toBatch(query, "query", 0);
    boolean emptyQuery = q.length(0) == 0;
    // the document's d is checked against the query's here, so the error names the argument, not two batches
    var d = Cells.toBatch(document, "document", emptyQuery ? 0 : q.dim());
    if (emptyQuery && d.dim() != q.dim()) {
      q = Cells.toBatch(query, "query", d.dim());
    }
    return ExecutorMaxSim.get().scores(q, d)[0][0];
  }
}
