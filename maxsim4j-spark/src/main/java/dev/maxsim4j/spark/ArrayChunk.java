package dev.maxsim4j.spark;

import dev.maxsim4j.TokenBatch;
import org.apache.spark.sql.catalyst.InternalRow;

/** A {@link DocumentChunk} of {@code array<array<float>>} cells, kept by {@link TokenRows} and packed once. */
final class ArrayChunk implements DocumentChunk {
  private final TokenRows rows = new TokenRows("document");
  private final int maxRows;
  private final long maxElements;

  ArrayChunk(int maxRows, long maxElements, int queryDim) {
    this.maxRows = maxRows;
    this.maxElements = maxElements;
    rows.expectDim(queryDim, "the queries");
  }

  @Override
  public boolean add(Object id, InternalRow row, Object maskCell) {
    // this document's tokens counted too, as CellChunk counts them: the chunk stays within its bound
    long incoming = row.isNullAt(1) ? 0 : row.getArray(1).numElements();
    if (rows.rows() > 0 && (rows.rows() >= maxRows
        || ((long) rows.tokens() + incoming) * Math.max(1, rows.dim()) > maxElements)) {
      return false;
    }
    rows.add(id, row.isNullAt(1) ? null : row.getArray(1), maskCell);
    return true;
  }

  @Override
  public int rows() {
    return rows.rows();
  }

  @Override
  public int dim() {
    return rows.dim();
  }

  @Override
  public TokenBatch batch(int fallbackDim) {
    return rows.pack(fallbackDim).toBatch();
  }

  @Override
  public void clear() {
    rows.clear();
  }
}
