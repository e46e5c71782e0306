package dev.maxsim4j.internal.cpu;

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

  /** Queries prepared against one document batch; shared by all threads, read-only. */
  interface Bound {
    Worker newWorker();
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
