package dev.maxsim4j;

import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.BackendSelector;
import dev.maxsim4j.internal.Problem;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Late-interaction (MaxSim) scoring: for each valid query token the best dot product over the valid
 * document tokens, summed over query tokens.
 *
 * <pre>{@code
 * try (MaxSim maxSim = MaxSim.create()) {
 *   float[][] scores = maxSim.scores(queries, documents);   // [Nq][Nd]
 * }
 * }</pre>
 *
 * <p>Contract, identical on every backend: dot products of the vectors as given (no normalisation; see
 * {@link TokenBatch#l2Normalized()}); a masked query token leaves the sum; a masked document token leaves
 * the max; a document with no valid token scores {@code -1e9}; a query with no valid token scores 0 against
 * any non-empty document; NaN in a valid token makes the score NaN; scores are fp32; in the backward the
 * gradient of a max flows to one document token, the lowest slot among ties.
 *
 * <p>An instance owns a thread pool; it is thread-safe and should be closed. Using it after
 * {@link #close()} throws {@link IllegalStateException}.
 */
public final class MaxSim implements AutoCloseable {
  private final Backend backend;
  private final boolean deterministic;
  private volatile boolean closed;
  private ExecutorService asyncThread;

  private MaxSim(Backend backend, boolean deterministic) {
    this.backend = backend;
    this.deterministic = deterministic;
  }

  /** The automatically chosen backend (property {@code maxsim4j.backend}) on all available processors. */
  public static MaxSim create() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Configures backend and threads. */
  public static final class Builder {
    private String backend = BackendSelector.defaultName();
    private int threads = Integer.getInteger("maxsim4j.threads", Runtime.getRuntime().availableProcessors());
    private boolean deterministic = true;

    private Builder() {}

    /**
     * Whether the backward must be bitwise equal on every run (default true). {@code false} lets the GPU
     * add document gradients with atomics, which is faster when documents meet few queries; the CPU
     * backward is deterministic either way.
     */
    public Builder deterministic(boolean deterministic) {
      this.deterministic = deterministic;
      return this;
    }

    /** {@code auto} (default), {@code cpu}, {@code cuda}, {@code reference}, {@code scalar} or {@code vector}. */
    public Builder backend(String name) {
      this.backend = Objects.requireNonNull(name, "backend");
      return this;
    }

    public Builder threads(int threads) {
      if (threads < 1) {
        throw new IllegalArgumentException("threads = " + threads + "; expected >= 1");
      }
      this.threads = threads;
      return this;
    }

    public MaxSim build() {
      return new MaxSim(BackendSelector.create(backend, threads), deterministic);
    }
  }

  /** Name of the backend in use, e.g. {@code vector}. */
  public String backendName() {
    return backend.name();
  }

  public int threads() {
    return backend.threads();
  }

  // ------------------------------------------------------------------ inference

  /** All pairs: {@code Q [Nq, Lq, d] x D [Nd, Ld, d] -> [Nq][Nd]}. */
  public float[][] scores(TokenBatch queries, TokenBatch documents) {
    Problem p = allPairs(queries, documents);
    return backend().scoreRows(p, queries.size(), documents.size());
  }

  /** Pairwise: {@code Q [B, Lq, d] x D [B, Ld, d] -> [B]}, query {@code b} against document {@code b}. */
  public float[] pairwise(TokenBatch queries, TokenBatch documents) {
    return backend().score(pairwiseProblem(queries, documents), null);
  }

  /**
   * Candidates: {@code Q [B, Lq, d] x D [B, K, Ld, d] -> [B][K]}. {@code documents} holds {@code B*K} rows,
   * query {@code b}'s candidates at rows {@code b*K .. b*K+K-1}.
   */
  public float[][] candidates(TokenBatch queries, TokenBatch documents, int candidatesPerQuery) {
    Problem p = candidatesProblem(queries, documents, candidatesPerQuery);
    return backend().scoreRows(p, queries.size(), candidatesPerQuery);
  }

  /**
   * The {@code k} best documents per query, streaming over the documents: memory is O(Nq x k) per thread,
   * never Nq x Nd.
   */
  public TopK topK(TokenBatch queries, TokenBatch documents, int k) {
    checkPair(queries, documents);
    if (k <= 0) {
      throw new IllegalArgumentException("k = " + k + "; expected k >= 1");
    }
    Backend.TopKResult r = backend().topK(queries.tokens(), documents.tokens(), k);
    return new TopK(r.scores(), r.indices());
  }

  // ------------------------------------------------------------------ resident documents

  /**
   * Makes a document batch resident with this instance's backend (on a GPU: copied to device memory once)
   * so that many query batches can be scored against it without copying it again. A query batch can be
   * made resident the same way: while its handle is open, calls that pass that same {@code TokenBatch} as
   * queries copy nothing to the device. Close the handle to free it; it is also freed when this MaxSim
   * closes.
   */
  public ResidentBatch upload(TokenBatch documents) {
    Objects.requireNonNull(documents, "documents");
    return new ResidentBatch(this, documents, backend().makeResident(documents.tokens()));
  }

  /** All pairs against resident documents. */
  public float[][] scores(TokenBatch queries, ResidentBatch documents) {
    return scores(queries, documents.batchFor(this));
  }

  /** Top-k against resident documents. */
  public TopK topK(TokenBatch queries, ResidentBatch documents, int k) {
    return topK(queries, documents.batchFor(this), k);
  }

  /**
   * All pairs, asynchronously: returns at once, and the future completes with the scores. On the GPU the
   * call is staged and launched before this returns, its scores written straight to pinned memory, and
   * several calls (up to 8) stay in flight, so a caller that submits the next call before taking the last
   * one's scores keeps the device busy back to back; on the CPU the call runs on this instance's own
   * thread. Calls complete in submission order. Bad input still throws here, before anything is queued.
   */
  public CompletableFuture<float[][]> scoresAsync(TokenBatch queries, ResidentBatch documents) {
    return scoresAsync(queries, documents.batchFor(this));
  }

  /** As {@link #scoresAsync(TokenBatch, ResidentBatch)} for documents on the host. */
  public CompletableFuture<float[][]> scoresAsync(TokenBatch queries, TokenBatch documents) {
    Problem p = allPairs(queries, documents);
    return backend().scoreRowsAsync(p, queries.size(), documents.size(), r -> asyncExecutor().execute(r));
  }

  private synchronized ExecutorService asyncExecutor() {
    backend(); // closed check
    if (asyncThread == null) {
      asyncThread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "maxsim4j-async");
        t.setDaemon(true);
        return t;
      });
    }
    return asyncThread;
  }

  // ------------------------------------------------------------------ training

  /** All-pairs scores that can be differentiated with {@link TrainingScores#backward}. */
  public TrainingScores scoresForTraining(TokenBatch queries, TokenBatch documents) {
    Problem p = allPairs(queries, documents);
    return training(p, queries, documents, queries.size(), documents.size());
  }

  public TrainingScores pairwiseForTraining(TokenBatch queries, TokenBatch documents) {
    Problem p = pairwiseProblem(queries, documents);
    return training(p, queries, documents, queries.size(), 1);
  }

  public TrainingScores candidatesForTraining(TokenBatch queries, TokenBatch documents, int candidatesPerQuery) {
    Problem p = candidatesProblem(queries, documents, candidatesPerQuery);
    return training(p, queries, documents, queries.size(), candidatesPerQuery);
  }

  /**
   * Forward, {@code loss} and backward over all pairs in one call, e.g. in-batch contrastive training with
   * {@code Loss.contrastive(0.05f)}. On a GPU the scores, the argmax and {@code dL/dscores} stay on the
   * device; the loss, the scores and the gradients come back.
   */
  public TrainingStep lossAllPairs(TokenBatch queries, TokenBatch documents, Loss loss) {
    return lossAllPairs(queries, documents, loss, GradientPrecision.FLOAT32);
  }

  public TrainingStep lossAllPairs(TokenBatch queries, TokenBatch documents, Loss loss, GradientPrecision precision) {
    Problem p = allPairs(queries, documents);
    return lossStep(p, queries, documents, loss, precision);
  }

  /**
   * As {@link #lossAllPairs} over candidates {@code [B, K]}: contrastive against a positive candidate,
   * KL distillation against teacher scores, or margin-MSE with K = 2 (positive, negative).
   */
  public TrainingStep lossCandidates(TokenBatch queries, TokenBatch documents, int candidatesPerQuery, Loss loss) {
    return lossCandidates(queries, documents, candidatesPerQuery, loss, GradientPrecision.FLOAT32);
  }

  public TrainingStep lossCandidates(TokenBatch queries, TokenBatch documents, int candidatesPerQuery, Loss loss,
      GradientPrecision precision) {
    Problem p = candidatesProblem(queries, documents, candidatesPerQuery);
    return lossStep(p, queries, documents, loss, precision);
  }

  private TrainingStep lossStep(Problem p, TokenBatch q, TokenBatch d, Loss loss, GradientPrecision precision) {
    Objects.requireNonNull(loss, "loss");
    Objects.requireNonNull(precision, "precision");
    int columns = p.documentsPerQuery();
    loss.check(q.size(), columns);
    Backend.LossStep step = backend().lossStep(p, loss, deterministic);
    Gradients g = new Gradients(TrainingScores.asBatch(q, step.gradients().queries(), precision),
        TrainingScores.asBatch(d, step.gradients().documents(), precision));
    return new TrainingStep(step.loss(), Backend.rows(step.scores(), q.size(), columns), g);
  }

  boolean deterministicBackward() {
    return deterministic;
  }

  private TrainingScores training(Problem p, TokenBatch q, TokenBatch d, int rows, int columns) {
    int[] argmax = new int[Math.multiplyExact(p.pairs(), p.argmaxStride())];
    float[] scores = backend().score(p, argmax);
    return new TrainingScores(this, p, q, d, scores, argmax, rows, columns);
  }

  // ------------------------------------------------------------------ plumbing

  // ------------------------------------------------------------------ projection layer

  /**
   * {@code Y = X W} for row-major fp32 {@code X [rows, in]} and {@code W [in, out]}: the linear projection of
   * a late-interaction head (for example token features 384 -> 128), so training code can keep the whole
   * step on the backend's device (on the GPU backend a device kernel). Each output is summed over {@code in}
   * in order: the same bits on every run.
   */
  public float[] project(float[] x, int rows, int in, float[] w, int out) {
    checkMatrix("x", x, rows, in);
    checkMatrix("w", w, in, out);
    return backend().project(x, rows, in, w, out);
  }

  /** {@code dW = X^T dY [in, out]}: the gradient of {@link #project}'s {@code W}, summed over rows in order. */
  public float[] projectionGradient(float[] x, int rows, int in, float[] dy, int out) {
    checkMatrix("x", x, rows, in);
    checkMatrix("dy", dy, rows, out);
    return backend().projectionGradient(x, rows, in, dy, out);
  }

  private static void checkMatrix(String name, float[] m, int rows, int columns) {
    if (m == null) {
      throw new IllegalArgumentException(name + " is null; expected a row-major [" + rows + ", " + columns + "] array");
    }
    if (rows < 0 || columns < 1 || m.length != (long) rows * columns) {
      throw new IllegalArgumentException(name + " has " + m.length + " elements for shape [" + rows + ", " + columns
          + "]; expected rows >= 0, columns >= 1 and rows * columns elements");
    }
  }

  Backend backend() {
    if (closed) {
      throw new IllegalStateException("this MaxSim is closed");
    }
    return backend;
  }

  @Override
  public void close() {
    if (!closed) {
      synchronized (this) {
        if (asyncThread != null) {
          asyncThread.shutdown(); // queued calls finish first
          try {
            asyncThread.awaitTermination(1, java.util.concurrent.TimeUnit.MINUTES);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }
      closed = true;
      backend.close();
    }
  }

  private static Problem allPairs(TokenBatch q, TokenBatch d) {
    checkPair(q, d);
    return Problem.allPairs(q.tokens(), d.tokens());
  }

  private static Problem pairwiseProblem(TokenBatch q, TokenBatch d) {
    checkPair(q, d);
    if (q.size() != d.size()) {
      throw new IllegalArgumentException("pairwise needs as many documents as queries: queries " + q.shape()
          + " has B=" + q.size() + ", documents " + d.shape() + " has " + d.size());
    }
    return Problem.pairwise(q.tokens(), d.tokens());
  }

  private static Problem candidatesProblem(TokenBatch q, TokenBatch d, int k) {
    checkPair(q, d);
    if (k <= 0) {
      throw new IllegalArgumentException("candidatesPerQuery = " + k + "; expected K >= 1");
    }
    if ((long) q.size() * k != d.size()) {
      throw new IllegalArgumentException("candidates K mismatch: documents " + d.shape() + " has " + d.size()
          + " rows; expected B*K = " + q.size() + "*" + k + " = " + (long) q.size() * k);
    }
    return Problem.candidates(q.tokens(), d.tokens(), k);
  }

  private static void checkPair(TokenBatch q, TokenBatch d) {
    Objects.requireNonNull(q, "queries");
    Objects.requireNonNull(d, "documents");
    if (q.dim() != d.dim()) {
      throw new IllegalArgumentException("d mismatch: queries " + q.shape() + " have d=" + q.dim()
          + ", documents " + d.shape() + " have d=" + d.dim() + "; expected equal");
    }
  }
}
