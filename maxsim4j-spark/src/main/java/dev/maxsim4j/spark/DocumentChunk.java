package dev.maxsim4j.spark;

import dev.maxsim4j.TokenBatch;
import org.apache.spark.sql.catalyst.InternalRow;

/**
 * Documents read from Spark's internal rows (id, tokens[, mask]) into one packed batch of bounded size, which a
 * partition ranks before it reads the next chunk.
 */
interface DocumentChunk {
  /**
   * Adds the document of {@code row} (a reused buffer: what is kept is copied); false, adding nothing, when the
   * chunk holds documents and this one would take it past its bounds. An empty chunk takes any document.
   */
  boolean add(Object id, InternalRow row, Object maskCell);

  int rows();

  /** d of the documents so far; 0 while none held a token. */
  int dim();

  /** The documents so far; {@code fallbackDim} is d when none held a token. Valid until the next add or clear. */
  TokenBatch batch(int fallbackDim);

  /** Empties the chunk for the next documents. */
  void clear();

  /** Empties the chunk once its partition is done: what it holds may serve the thread's next chunk. */
  default void release() {
    clear();
  }

  /** A chunk for the {@code tokens} column's cells: binary cells are packed straight from the rows. */
  static DocumentChunk of(boolean binaryTokens, int maxRows, long maxElements, int queryDim) {
    return binaryTokens ? new CellChunk(maxRows, maxElements, queryDim)
        : new ArrayChunk(maxRows, maxElements, queryDim);
  }
}
