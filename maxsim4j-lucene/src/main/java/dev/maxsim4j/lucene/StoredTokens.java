package dev.maxsim4j.lucene;

import dev.maxsim4j.TokenBatch;
import org.apache.lucene.util.BytesRef;

/** A reusable buffer that gathers the stored token vectors of many documents into one packed batch. */
interface StoredTokens {
  /** Empties the buffer (keeping its capacity) for values of {@code field} with token vectors of {@code dim}. */
  StoredTokens reset(String field, int dim);

  /** Appends one stored value as the next row; {@code docId} names it in errors. */
  void add(BytesRef value, int docId);

  /**
   * Whether {@code value} can be added with each array of the buffer at most {@code maxEntries} long; a value of
   * a size it cannot tell, which {@link #add} refuses, fits.
   */
  boolean fits(BytesRef value, int maxEntries);

  int rows();

  /** The rows gathered so far as one packed batch (a view of the buffer where the type allows). */
  TokenBatch batch();

  /** The bytes the rows gathered so far take in the buffer. */
  long usedBytes();

  /** The bytes this buffer holds on to, whatever it holds now. */
  long capacityBytes();
}
