package dev.maxsim4j;

import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.HeapLimit;
import dev.maxsim4j.internal.Problem;

/**
 * Scores from a forward that will be differentiated, with what the backward needs: the winning document
 * slot per (pair, query token), never the similarity grid. {@link #backward} turns {@code dL/dscores}
 * into {@code dL/dQ} and {@code dL/dD}. Scores are laid out row-major as the op returns them
 * ({@code [Nq*Nd]}, {@code [B]} or {@code [B*K]}). The backward reads the batches' tokens again (a batch is a
 * view of its array or memory), so they must hold what the forward saw: changed in between, the saved argmax no
 * longer matches them and the gradients are those of no score. Immutable and safe to share between threads: its
 * accessors return copies, and backwards on several threads may run at once.
 */
public final class TrainingScores {
  private final MaxSim owner;
  private final Problem problem;
  private final TokenBatch queries;
  private final TokenBatch documents;
  private final float[] scores;
  private final int[] argmax;
  private final int rows;
  private final int columns;

  TrainingScores(MaxSim owner, Problem problem, TokenBatch queries, TokenBatch documents, float[] scores,
      int[] argmax, int rows, int columns) {
    this.owner = owner;
    this.problem = problem;
    this.queries = queries;
    this.documents = documents;
    this.scores = scores;
    this.argmax = argmax;
    this.rows = rows;
    this.columns = columns;
  }

  /** The call that made these scores and their shape, e.g. {@code TrainingScores[CANDIDATES, 2 x 3]}. */
  @Override
  public String toString() {
    return "TrainingScores[" + problem.kind() + ", " + rows + " x " + columns + "]";
  }

  /** Flat scores (a copy). */
  public float[] scores() {
    return scores.clone();
  }

  /** Scores as {@code [rows][columns]}: {@code [Nq][Nd]}, {@code [B][1]} or {@code [B][K]}. */
  public float[][] scoreMatrix() {
    float[][] m = new float[rows][columns];
    for (int i = 0; i < rows; i++) {
      System.arraycopy(scores, i * columns, m[i], 0, columns);
    }
    return m;
  }

  /**
   * {@code loss} over all pairs' or candidates' scores, read as {@link MaxSim#lossAllPairs} and {@link
   * MaxSim#lossCandidates} read it (pairwise scores, one column, are refused):
   * over candidates' scores {@link Loss#contrastive(float)} takes each query's first candidate as its positive,
   * where {@link Loss#evaluate} on {@link #scoreMatrix()} would take the diagonal. Its {@link Loss.Value#dScores()}
   * is what {@link #backward(float[])} takes.
   */
  public Loss.Value evaluate(Loss loss) {
    Arguments.nonNull(loss, "loss");
    if (problem.kind() == Problem.Kind.PAIRWISE) {
      // a [B][1] matrix: a loss over one column would read 0 or refuse the shape, saying nothing of pairs
      throw new IllegalArgumentException("loss " + loss + " over pairwise scores [" + rows + "] (one document per"
          + " query); expected all pairs' or candidates' scores, or Loss.evaluateFlat on a shape of your own");
    }
    Loss read = problem.kind() == Problem.Kind.CANDIDATES ? MaxSim.firstCandidatePositive(loss, rows) : loss;
    return read.evaluateFlat(scores, rows, columns);
  }

  /**
   * Winning document slot of query slot {@code querySlot} ({@code 0 <= querySlot < queries.maxLength()}) in
   * pair {@code pair}, or -1 where there is none: a masked query token, a slot past the query's length, an
   * empty document.
   */
  public int argmax(int pair, int querySlot) {
    Arguments.index(pair, scores.length, "pair");
    Arguments.index(querySlot, queries.maxLength(), "querySlot");
    int stride = problem.argmaxStride(); // the longest query: slots beyond it hold nothing
    return querySlot < stride ? argmax[pair * stride + querySlot] : -1;
  }

  /** {@link #backward(float[], GradientPrecision)} with fp32 gradients. */
  public Gradients backward(float[] dScores) {
    return backward(dScores, GradientPrecision.FLOAT32);
  }

  /** {@link #backward(float[][], GradientPrecision)} with fp32 gradients. */
  public Gradients backward(float[][] dScores) {
    return backward(dScores, GradientPrecision.FLOAT32);
  }

  /** As {@link #backward(float[], GradientPrecision)}, {@code dScores} in rows like {@link #scoreMatrix()}. */
  public Gradients backward(float[][] dScores, GradientPrecision precision) {
    Arguments.nonNull(dScores, "dScores");
    if (dScores.length != rows) {
      throw new IllegalArgumentException("dScores has " + dScores.length + " rows; expected " + rows);
    }
    float[] flat = new float[rows * columns];
    for (int i = 0; i < rows; i++) {
      float[] row = dScores[i]; // read once: the caller's could change between a check and the copy
      if (row == null || row.length != columns) {
        throw new IllegalArgumentException("dScores[" + i + "] " + (row == null ? "is null" : "has length "
            + row.length) + "; expected " + columns);
      }
      System.arraycopy(row, 0, flat, i * columns, columns);
    }
    return backward(flat, precision);
  }

  /** Gradients of {@code sum(dScores * scores)}; {@code dScores} flat like {@link #scores()}. */
  public Gradients backward(float[] dScores, GradientPrecision precision) {
    Arguments.nonNull(dScores, "dScores");
    Arguments.nonNull(precision, "precision");
    if (dScores.length != scores.length) {
      throw new IllegalArgumentException("dScores has length " + dScores.length + "; expected " + scores.length
          + " (" + rows + " x " + columns + ")");
    }
    MaxSim.requireOpenMemory("queries", queries.tokens());
    MaxSim.requireOpenMemory("documents", documents.tokens());
    Backend.Gradients g = owner.call(queries, documents, b -> {
      // the gradients beside the forward's argmax and scores and the dScores, all held while they are made
      HeapLimit.alsoHolding(Integer.BYTES * (long) argmax.length + 2L * Float.BYTES * scores.length,
          () -> HeapLimit.requireBytes(Float.BYTES * ((long) problem.queries().storedTokens * problem.queries().dim
              + (long) problem.documents().storedTokens * problem.documents().dim), "the backward's gradients of"
              + " stored tokens x d, queries and documents", HeapLimit.TRAIN_SMALLER));
      return b.backward(problem, argmax, dScores, owner.deterministicBackward());
    });
    return new Gradients(asBatch(queries, g.queries(), precision), asBatch(documents, g.documents(), precision));
  }

  /**
   * {@code grad} as a batch laid out like {@code like}. Its NaNs are {@link Float#NaN}'s bits: a NaN's payload is
   * what the order of the kernel's sums left, and the same step would otherwise differ from one run to another.
   */
  static TokenBatch asBatch(TokenBatch like, float[] grad, GradientPrecision precision) {
    Backend.canonicalNaN(grad);
    DType type = precision == GradientPrecision.INPUT ? like.dtype() : DType.FLOAT32;
    if (type == DType.FLOAT32) {
      return like.withStorage(DType.FLOAT32, grad, null);
    }
    short[] bits = new short[grad.length];
    for (int i = 0; i < grad.length; i++) {
      bits[i] = type.narrow(grad[i]);
    }
    return like.withStorage(type, null, bits);
  }
}
