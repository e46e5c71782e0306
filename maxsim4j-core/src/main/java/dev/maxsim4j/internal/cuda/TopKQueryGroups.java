package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.internal.Backend.TopKResult;
import dev.maxsim4j.internal.TokenSlices;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cuda.plan.GpuCapabilities;
import java.util.function.Function;

/**
 * The device top-k in groups of queries: its kernels run one grid row ({@code blockIdx.y}) per query, and a
 * grid has at most 65,535 rows, so a call of more queries is made of calls of at most that many, whose results
 * are each query's own and are put back in query order.
 */
final class TopKQueryGroups {
  /** The queries of one call: a grid row each. */
  static final int MAX_QUERIES = GpuCapabilities.MAX_GRID_Y;

  private TopKQueryGroups() {}

  /** {@code select} over {@code queries} in groups of at most {@code groupRows} rows, in query order. */
  static TopKResult select(Tokens queries, int groupRows, Function<Tokens, TopKResult> select) {
    if (queries.rows <= groupRows) {
      return select.apply(queries);
    }
    float[][] scores = new float[queries.rows][];
    int[][] indices = new int[queries.rows][];
    for (int from = 0; from < queries.rows; from += groupRows) {
      int to = (int) Math.min(queries.rows, (long) from + groupRows);
      TopKResult part = select.apply(TokenSlices.rows(queries, from, to));
      System.arraycopy(part.scores(), 0, scores, from, to - from);
      System.arraycopy(part.indices(), 0, indices, from, to - from);
    }
    return new TopKResult(scores, indices);
  }
}
