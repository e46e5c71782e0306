package dev.maxsim4j.internal;

import dev.maxsim4j.MaxSim;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;

/**
 * One way of computing MaxSim (a CPU kernel or the GPU). Every backend honours the same contract:
 * masked query tokens leave the sum, masked document tokens leave the max, a document without a valid
 * token scores {@link #EMPTY_DOCUMENT_SCORE}, NaN in a valid token makes the score NaN (and a zero score is +0, as
 * {@link #canonicalScores} leaves them), ties in the max give the argmax (and so the gradient) to the lowest
 * document slot.
 */
public interface Backend extends AutoCloseable {

  /** Score of a document that has no valid token (the API's constant). */
  float EMPTY_DOCUMENT_SCORE = MaxSim.EMPTY_DOCUMENT_SCORE;

  /** Argmax entry of a query slot that is masked, or of any slot when the document is empty. */
  int NO_ARGMAX = -1;

  String name();

  /** What computes, for {@code MaxSim.backendInfo()}: e.g. {@code Vector API, 512-bit float lanes}. */
  default String description() {
    return name();
  }

  /**
   * Scores every pair of {@code problem} into a new flat array (see {@link Problem}). When {@code argmax}
   * is not null it receives, for each pair and query slot, the winning document slot.
   */
  float[] score(Problem problem, int[] argmax);

  /**
   * Whether {@link #scoreRows} holds the scores as one flat array beside the rows it copies them into (the heap a
   * result of several rows needs, {@link HeapLimit#requireRows}): true unless it fills the rows from off-heap.
   */
  default boolean rowsFromFlatScores() {
    return true;
  }

  /**
   * The scores of {@code problem} as {@code rows} rows of {@code columns} (pair {@code i * columns + j} in
   * row i). A backend whose scores land off-heap overrides it to fill the rows from there, without a flat
   * array in between.
   */
  default float[][] scoreRows(Problem problem, int rows, int columns) {
    return rows(score(problem, null), rows, columns);
  }

  /**
   * {@link #scoreRows}, asynchronously: returns at once, the future completes with the rows; calls complete
   * in submission order. By default the call runs on {@code executor}, and one whose turn comes when {@code
   * cancelled} answers true fails with a {@link CancellationException} instead of running (a caller that gave up
   * on it should not wait behind it); a device backend overrides it to keep several calls in flight on the device,
   * where a call launched runs to its end.
   */
  default CompletableFuture<float[][]> scoreRowsAsync(Problem problem, int rows, int columns, Executor executor,
      BooleanSupplier cancelled) {
    return CompletableFuture.supplyAsync(() -> {
      if (cancelled.getAsBoolean()) {
        throw new CancellationException("the caller cancelled this call before it ran");
      }
      return scoreRows(problem, rows, columns);
    }, executor);
  }

  /**
   * Every NaN of {@code values} (scores, gradients, encodings) as {@link Float#NaN}'s bits: a kernel's NaN carries
   * the sign and payload its operands left, which the order of its operations (JIT-compiled or on a GPU) decides,
   * and the same call would otherwise return different bits from one run or backend to another. Returns
   * {@code values}.
   */
  static float[] canonicalNaN(float[] values) {
    for (int i = 0; i < values.length; i++) {
      if (values[i] != values[i]) {
        values[i] = Float.NaN;
      }
    }
    return values;
  }

  /** As {@link #canonicalNaN(float[])} for every row. Returns {@code rows}. */
  static float[][] canonicalNaN(float[][] rows) {
    for (float[] row : rows) {
      canonicalNaN(row);
    }
    return rows;
  }

  /**
   * The first {@code length} scores as the contract returns them: {@link #canonicalNaN(float[])}, and a zero as +0
   * (a kernel's sum of zeros that are all -0 would otherwise keep the sign, which top-k orders below +0). Returns
   * {@code scores}.
   */
  static float[] canonicalScores(float[] scores, int length) {
    for (int i = 0; i < length; i++) {
      float v = scores[i];
      if (v != v) {
        scores[i] = Float.NaN;
      } else if (v == 0f) {
        scores[i] = 0f;
      }
    }
    return scores;
  }

  /** {@code flat} as {@code rows} rows of {@code columns}; one row is {@code flat} itself, not a copy. */
  static float[][] rows(float[] flat, int rows, int columns) {
    if (rows == 1) {
      return new float[][] {flat};
    }
    float[][] out = new float[rows][columns];
    for (int i = 0; i < rows; i++) {
      System.arraycopy(flat, i * columns, out[i], 0, columns);
    }
    return out;
  }

  /** Top-k documents per query over all documents, never holding Nq x Nd scores at once. */
  TopKResult topK(Tokens queries, Tokens documents, int k);

  /**
   * Gradients of {@code sum(dScores * scores)} with respect to the query and document embeddings, in fp32,
   * laid out like the inputs' storage; masked tokens get exactly zero. {@code deterministic}: bitwise equal
   * on every run (backends without a faster non-deterministic path are always deterministic).
   */
  Gradients backward(Problem problem, int[] argmax, float[] dScores, boolean deterministic);

  /**
   * Forward, {@code loss} over the {@code [queries][documentsPerQuery]} scores, and backward, in one call.
   * Backends with a device override this to keep scores, argmax and dScores on it.
   */
  default LossStep lossStep(Problem problem, dev.maxsim4j.Loss loss, boolean deterministic) {
    // the argmax beside the step's scores, dScores and gradients, all held at once
    long gradients = Float.BYTES * ((long) problem.queries().storedTokens * problem.queries().dim
        + (long) problem.documents().storedTokens * problem.documents().dim);
    HeapLimit.alsoHolding(2L * Float.BYTES * problem.pairs() + gradients,
        () -> HeapLimit.requireArgmax(problem.pairs(), problem.argmaxStride()));
    int[] argmax = new int[Math.multiplyExact(problem.pairs(), problem.argmaxStride())];
    float[] scores = score(problem, argmax);
    dev.maxsim4j.Loss.Value v = loss.evaluateFlat(scores, problem.queries().rows, problem.documentsPerQuery());
    return new LossStep(v.loss(), scores, backward(problem, argmax, v.dScores(), deterministic));
  }

  /**
   * Keeps {@code documents} ready for repeated scoring until the returned handle is closed: on a GPU, in
   * device memory, so later calls with the same batch copy nothing. On the CPU there is nothing to do.
   */
  default Residency makeResident(Tokens documents) {
    return Residency.NONE;
  }

  /** {@code Y = X W} ({@link Projection#forward}); a device backend runs it there. */
  default float[] project(float[] x, int rows, int in, float[] w, int out) {
    return Projection.forward(x, rows, in, w, out);
  }

  /** {@code dW = X^T dY} ({@link Projection#weightGradient}); a device backend runs it there. */
  default float[] projectionGradient(float[] x, int rows, int in, float[] dy, int out) {
    return Projection.weightGradient(x, rows, in, dy, out);
  }

  /**
   * Fixed dimensional encodings of every row of {@code tokens} ({@code queries}: as queries, else as documents),
   * bit for bit {@link FdeEncoding}'s; a device backend computes them there.
   */
  default float[][] encodeFde(FdeParameters parameters, Tokens tokens, boolean queries) {
    return FdeEncoding.encode(parameters, tokens, queries, FdeEncoding.COMMON_POOL);
  }

  /** Threads this backend computes with. */
  int threads();

  @Override
  void close();

  /** Per-query best documents: {@code scores[i][r]} and {@code indices[i][r]} for rank r. */
  record TopKResult(float[][] scores, int[][] indices) {}

  /** The loss, the flat scores and the gradients of one {@link #lossStep}. */
  record LossStep(double loss, float[] scores, Gradients gradients) {}

  /** dQ ({@code queries.storedTokens * dim}) and dD ({@code documents.storedTokens * dim}). */
  record Gradients(float[] queries, float[] documents) {}
}
