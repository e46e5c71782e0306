package dev.maxsim4j.spark;

import dev.maxsim4j.DType;
import java.util.Arrays;
import java.util.function.IntSupplier;

/**
 * The one type and d that the token rows of a batch share, set by the first row that holds a token, and the d
 * every row must have; a row that differs is an error naming it rather than a mismatch of two whole batches.
 */
final class TokenShape {
  private final String role;
  private DType type;
  private int dim;
  private int expectedDim; // 0: any
  private String expectedOf;

  /** {@code role} names the rows in errors: "query" or "document". */
  TokenShape(String role) {
    this.role = role;
  }

  String role() {
    return role;
  }

  /** The rows' type; null while none held a token. */
  DType type() {
    return type;
  }

  /** d of the rows; 0 while none held a token. */
  int dim() {
    return dim;
  }

  /** Rows must have d = {@code d} ({@code 0}: any), as {@code of} has, e.g. "the queries"; kept by reset. */
  void expectDim(int d, String of) {
    expectedDim = d;
    expectedOf = of;
  }

  /** Forgets the type and d of the rows so far, for the next batch. */
  void reset() {
    type = null;
    dim = 0;
  }

  /** Accepts a row of {@code t} and {@code d} named {@code what}, or fails naming it. */
  void accept(DType t, int d, String what) {
    // checked on every row, not the first alone: which row comes first in a chunk depends on the partitioning
    if (expectedDim != 0 && d != expectedDim) {
      throw new IllegalArgumentException(what + " have d = " + d + "; expected d = " + expectedDim + " like "
          + expectedOf);
    }
    if (type == null) {
      type = t;
      dim = d;
      return;
    }
    if (t != type) {
      throw new IllegalArgumentException(what + " are " + t + "; expected " + type + " like the " + plural()
          + " before it (a batch holds one type: the queries of a top-k or scan job are one batch; convert"
          + " the column with TokenColumns.encode)");
    }
    if (d != dim) {
      throw new IllegalArgumentException(what + " have d = " + d + "; expected d = " + dim + " like the "
          + plural() + " before it");
    }
  }

  /**
   * The batch a document joins: one per type it is stored in and, where the queries hold no token
   * ({@code queryDim} 0), one per d, read from {@code documentDim} only then. Such queries score a document of any
   * d (as the core scores it against an empty query of its own d), but one batch holds one d; keyed so, documents
   * of several d score alike whichever of them share a partition or chunk. Where the queries hold a token every
   * document must have their d, so d splits nothing, and a document of another d is refused naming it.
   */
  static Batch batchOf(DType type, int queryDim, IntSupplier documentDim) {
    return queryDim != 0 ? Batch.OF_TYPE[type.ordinal()] : new Batch(type, documentDim.getAsInt());
  }

  /** A batch of documents: their type, and their d where the queries hold no token (else 0). */
  record Batch(DType type, int dim) implements Comparable<Batch> {
    /** The batch of each type at any d, the usual case, made once rather than for every document read. */
    private static final Batch[] OF_TYPE =
        Arrays.stream(DType.values()).map(t -> new Batch(t, 0)).toArray(Batch[]::new);

    @Override
    public int compareTo(Batch o) {
      int byType = type.compareTo(o.type);
      return byType != 0 ? byType : Integer.compare(dim, o.dim);
    }
  }

  private String plural() {
    return role.endsWith("y") ? role.substring(0, role.length() - 1) + "ies" : role + "s";
  }
}
