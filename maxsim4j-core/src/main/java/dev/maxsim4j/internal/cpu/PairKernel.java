package dev.maxsim4j.internal.cpu;

import dev.maxsim4j.internal.HeapLimit;
import dev.maxsim4j.internal.Tokens;

/**
 * How one CPU backend scores a single (query, document) pair. The drivers in {@link CpuBackend} decide
 * which pairs, in which order and on which thread; a kernel only knows the arithmetic.
 *
 * <p>Lifecycle: {@link #bind} prepares all queries once (a kernel may re-lay them out, for example
 * transpose them); a thread takes a {@link Worker} no other thread holds (idle ones are kept for the next chunk),
 * loads one document at a time and scores queries against it, so a document is read from memory once for all
 * queries that meet it.
 */
interface PairKernel {

  String name();

  /** How it computes, e.g. {@code Vector API, 512-bit float lanes}. */
  String description();

  Bound bind(Tokens queries, Tokens documents);

  /**
   * This kernel with what it chooses from a whole call's queries (which arithmetic serves them) fixed as it chooses
   * for {@code queries} against {@code documents}: groups of those queries, each scored alone, then give each pair
   * the bits the whole call would.
   */
  default PairKernel fixedFor(Tokens queries, Tokens documents) {
    return this;
  }

  /**
   * The heap a call on this kernel holds beside its inputs and results, which {@link CpuBackend} checks before it
   * binds: the queries staged for the whole call and each running thread's worker (a document staged for its turn,
   * widened where the kernel widens it: a 1-bit token 32 times).
   */
  WorkingMemory workingMemory(Tokens queries, Tokens documents);

  /** Bytes held once for a call ({@code queries}) and by each running thread ({@code perThread}). */
  record WorkingMemory(long queries, long perThread) {
    long total(int threads) {
      try {
        return Math.addExact(queries, Math.multiplyExact(threads, perThread));
      } catch (ArithmeticException e) {
        return Long.MAX_VALUE; // past any heap
      }
    }
  }

  /** {@code n} rounded up to whole vectors of {@code lanes}. */
  static long padded(long n, int lanes) {
    return (n + lanes - 1) / lanes * lanes;
  }

  /** Queries prepared against one document batch; shared by all threads, read-only. */
  interface Bound {
    Worker newWorker();
  }

  /** The heap the queries' fp32 copy takes: each row's valid tokens padded to {@code lanes}, with its arrays. */
  static long stagedQueryBytes(Tokens q, int lanes) {
    long bytes = 0;
    for (int i = 0; i < q.rows; i++) {
      long padded = padded(q.validCount[i], lanes);
      bytes += padded * q.dim * Float.BYTES + padded * Float.BYTES + (long) q.validCount[i] * Integer.BYTES
          + 3 * HeapLimit.ARRAY_OVERHEAD + ROW_VALUES;
    }
    return bytes;
  }

  /** A staged row's values beside its arrays: two scale bounds, a flag and a sum of magnitudes. */
  long ROW_VALUES = 2 * Float.BYTES + 1 + Double.BYTES;

  /**
   * A worker's arrays of one entry per valid document token ({@code perToken} bytes each: a staged token, its slot
   * and its scale) and of one per query lane ({@code lanes}: running maxima and their arguments).
   */
  static long workerBytes(Tokens documents, long perToken, long lanes) {
    return documents.maxValidCount * perToken + lanes * 2 * Float.BYTES + 5 * HeapLimit.ARRAY_OVERHEAD;
  }

  /** Thread-confined scratch space and the loaded document. */
  interface Worker {
    /** Makes {@code doc} current. The driver never loads a document without valid tokens. */
    void load(int doc);

    /**
     * MaxSim of {@code query} against the current document. When {@code argmax} is not null, writes the
     * winning document slot of each of the query's slots at {@code argmax[offset + slot]} and
     * {@link dev.maxsim4j.internal.Backend#NO_ARGMAX} for masked slots.
     */
    float score(int query, int[] argmax, int offset);
  }
}
