package dev.maxsim4j;

import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.BackendSelector;
import dev.maxsim4j.internal.DecimalText;
import dev.maxsim4j.internal.HeapLimit;
import dev.maxsim4j.internal.Internals;
import dev.maxsim4j.internal.LibraryThreads;
import dev.maxsim4j.internal.Problem;
import dev.maxsim4j.internal.Termination;
import dev.maxsim4j.internal.Tokens;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;

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
 * <p>Contract, identical on every backend: dot products of the vectors as given (no normalisation; see {@link
 * TokenBatch#l2Normalized()}); a masked query token leaves the sum; a masked document token leaves the max; a document
 * with no valid token scores {@code -1e9} ({@link #EMPTY_DOCUMENT_SCORE}); a query with no valid token scores 0 against
 * any non-empty document; otherwise NaN in a valid token makes the score NaN (an empty side's rule comes first,
 * whatever NaN the other side holds), always {@link Float#NaN}'s bits (and a NaN loss {@link Double#NaN}'s, a NaN
 * gradient {@link Float#NaN}'s); a score that rounds to zero is +0; scores are fp32; in the backward the gradient of a
 * max flows to one document token, the lowest slot among ties.
 *
 * <p>Ties are those of the dot products as a backend computes them: fp32 sums in the kernel's order (float64 on the
 * {@code reference} backend), so document tokens whose dot products lie within that rounding of each other (or
 * underflow to the same zero) may send the gradient to different slots on different backends, with equal scores.
 * Gradients are fp32 sums of fp32 products, on every backend: where a step's partial sums pass fp32's range the
 * gradient holds infinities or NaN though float64's would be finite, and terms far below the largest are rounded
 * away, as in any fp32 training step.
 *
 * <p>Range: a score is the float64 MaxSim rounded once to fp32 (the {@code reference} backend, which takes a pair
 * exactly where its products pass 2^64 and cancel, so that float64's own rounding leaves no remainder), within the
 * roundings of fp32 dot products. Dot products are summed in fp32, so values near {@code 1e19} can pass fp32's
 * largest value part way through a sum; on the CPU a pair whose fp32 score comes out infinite or NaN is scored
 * again in float64, so such a sum does not stick at an infinity, nor sum infinities of both signs to NaN, where
 * the exact score is finite; and a pair whose fp32 partial sums could pass {@code -3.4e38} (a query token's sum of
 * |values| times a document's largest |value| above half fp32's largest), where no later term would bring a dot
 * product back from -infinity and its token would drop out of the max, is scored in float64 from the start. The GPU
 * kernels keep the fp32 result.
 *
 * <p>On the CPU a pair scores the same bits whatever else its call holds, but for fp32, fp16 or bf16 queries
 * against 1-bit documents: there the call reads the documents through per-query tables where every query's
 * table fits 1 MiB together (counted as 16-float lanes pad them, on every machine) and every query value is finite,
 * with each token's {@code sum |q|} at most a quarter of fp32's largest, and expands the bits otherwise; the two
 * round differently, so a query scored alone and the same query in a larger batch can differ in their low bits,
 * within fp32 rounding of a d-term dot product: {@code d x 2^-24 x sum |q| x scale}, which for a score near 0 can be
 * hundreds of units in its last place. The vector backend gives a call the same bits on every machine of up to
 * 512-bit vectors (the scalar loops, without the Vector API, round otherwise, within the same bound). On a
 * GPU the kernel a call takes depends on its shape: for int8 or e4m3 documents of 64 dims or more, int8 or e4m3
 * queries, and (rarely) 1-bit documents of 32 or 64 dims, the kernel of many short queries in one call (query
 * groups) rounds otherwise than that of one query, candidates or pairwise calls, so the same pair can differ in the
 * last bits between such calls (within the same bound; docs/compressed.md).
 *
 * <p>Results are Java arrays, so a call whose result (or, for training, saved argmax or gradients) would
 * pass the largest Java array (2^31 - 9 elements), or whose longest row of tokens, padded by up to 64, times d would
 * ({@code (L + 64) x d}, the stage a kernel reads a row into), throws
 * {@link IllegalArgumentException} naming the sizes before any work; {@link #topK} needs only Nq x k. So does a
 * call whose result or working memory the heap ({@code -Xmx}) has no room for beside what the call holds there:
 * its inputs' heap arrays (per-row bookkeeping, masks, scales, tokens given as Java arrays) and the arrays it keeps
 * at the same time, and as much again, up to an eighth of the heap, for the JVM around it. A result counts each
 * row's array of a {@code float[][]} (a header and a reference each) and the copy the rows are filled from where a
 * backend holds one (the CPU, several GPUs); working memory is what a CPU kernel stages (the queries, widened to fp32
 * where it widens them, 1-bit ones 32 times, and a document for each thread), top-k's collectors, a training step's
 * argmax, scores and gradients, an FDE row encoded in float64. Each call checks the heap as it finds it: calls
 * running at once on other threads, each within it alone, can still exhaust it together ({@link OutOfMemoryError}).
 *
 * <p>An instance owns a thread pool (on a GPU, device memory); it is thread-safe and should be closed (one left
 * unclosed keeps its device memory and the GPU backends' threads until the JVM exits; on the CPU its threads, the
 * computing threads and the thread of asynchronous calls, end on their own after a minute idle: one made for each
 * call and never closed holds each one's threads for that minute; make one and share it).
 * {@link #close()} waits for calls running on other threads to return normally, then frees; calls that do work made
 * after it throw {@link IllegalStateException} ("MaxSim is closed"), while {@link #backendName()},
 * {@link #backendInfo()} and {@link #threads()} still answer. On the CPU, a scoring, training or encoding call
 * with work to do whose calling thread is interrupted takes no more work, waits for the work under way and throws
 * {@link IllegalStateException} ("interrupted while scoring"), the thread keeping its interrupt; a call on a GPU,
 * and a projection call, runs to its end.
 */
public final class MaxSim implements AutoCloseable {
  /** ForkJoinPool's limit on parallelism. */
  public static final int MAX_THREADS = 32767;
  /**
   * The score of a document with no valid token, on every backend: below any score of unit-length tokens (those
   * lie within +-Lq), not below every score: tokens of large values can score lower, and rank below an empty document.
   */
  public static final float EMPTY_DOCUMENT_SCORE = -1e9f;

  /** The backend names {@link Builder#backend} takes (case and surrounding blanks aside). */
  public static List<String> backendNames() {
    return BackendSelector.NAMES;
  }
  static final String THREADS_PROPERTY = "maxsim4j.threads";

  static {
    Internals.install(new InternalAccess());
  }

  private final Backend backend;
  private final String requestedBackend;
  private final boolean deterministic;
  private final CallGate gate = new CallGate(this::release);
  /** Guards {@link #asyncThread}: a private lock, as a caller may hold this instance's own monitor. */
  private final Object asyncLock = new Object();
  private ExecutorService asyncThread;
  /**
   * The thread {@link #asyncThread} runs its calls on, once started: held apart from this instance, so that the thread
   * (whose factory writes it) does not keep an instance nobody closed from being collected.
   */
  private final AsyncWorker asyncWorker = new AsyncWorker();
  /** Whether {@link #asyncWorker} runs the callbacks chained to an asynchronous call (it alone writes this). */
  private volatile boolean workerInCallbacks;

  private MaxSim(Backend backend, String requestedBackend, boolean deterministic) {
    this.backend = backend;
    this.requestedBackend = requestedBackend;
    this.deterministic = deterministic;
  }

  /** A deterministic MaxSim over {@code backend}, built apart from the selector (tests force CUDA kernels so). */
  static MaxSim over(Backend backend) {
    return new MaxSim(backend, backend.name(), true);
  }

  /**
   * The automatically chosen backend (property {@code maxsim4j.backend}) on all available processors (at most
   * {@value #MAX_THREADS}), or on the threads the property {@code maxsim4j.threads} names.
   *
   * @throws IllegalArgumentException where a property is malformed, as {@link Builder#build()} says
   * @throws IllegalStateException where the backend the property names cannot run here
   */
  public static MaxSim create() {
    return builder().build();
  }

  /** A builder for an instance of chosen backend, threads and options; {@link Builder#build()} makes it. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Whether the fast CPU path, the Vector API kernel, can run in this JVM: false when it was started
   * without {@code --add-modules jdk.incubator.vector}, and CPU scoring then runs scalar loops, an order of magnitude
   * slower (docs/benchmarks.md).
   */
  public static boolean vectorApiAvailable() {
    return BackendSelector.vectorApiAvailable();
  }

  /** Configures backend and threads. */
  public static final class Builder {
    private String backend = BackendSelector.defaultName();
    /** Whether {@link #backend} is still the system property's: an unknown name is then reported as that property. */
    private boolean backendFromProperty = System.getProperty(BackendSelector.PROPERTY) != null;
    private int threads; // 0: the property maxsim4j.threads, else all available processors
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

    /**
     * {@code auto}, {@code cpu}, {@code cuda}, {@code reference}, {@code scalar} or {@code vector}; not set, the
     * system property {@code maxsim4j.backend}, else {@code auto}.
     * {@code cuda} uses every visible GPU, or those the system property {@code maxsim4j.cuda.devices} names
     * (e.g. {@code 0,1}): resident documents are split across them in equal parts where those fit, else by free
     * memory; calls score every part at once and merge, with the API and results of one GPU.
     */
    public Builder backend(String name) {
      this.backend = Arguments.nonNull(name, "backend");
      this.backendFromProperty = false;
      return this;
    }

    /**
     * Threads a CPU call computes with, {@code 1 ..} {@value MaxSim#MAX_THREADS}: the calling thread and
     * {@code threads - 1} of this instance's own, which calls from several threads share. Not set, they are the
     * property {@code maxsim4j.threads}, or all available processors (at most {@value MaxSim#MAX_THREADS}).
     */
    public Builder threads(int threads) {
      this.threads = checkThreads(threads, "threads = " + threads);
      return this;
    }

    /**
     * A MaxSim of the backend and threads chosen (for {@code auto}: CUDA where a usable GPU is present, else the
     * Vector API kernels, else the scalar ones; {@link MaxSim#backendInfo()} says which and why), to be closed after
     * use.
     *
     * @throws IllegalArgumentException where the backend's name (given, or the system property
     *     {@code maxsim4j.backend}) names none, the property {@code maxsim4j.threads} is no thread count, or, for
     *     {@code auto} and {@code cuda}, the property {@code maxsim4j.cuda.devices} or {@code
     *     maxsim4j.cuda.memoryLimit} is malformed (checked where no GPU is present too, so that a setting wrong on
     *     one machine is wrong on all)
     * @throws IllegalStateException where the backend named cannot run here (no GPU, no driver), saying why
     */
    public MaxSim build() {
      if (backendFromProperty && !BackendSelector.isKnown(backend)) {
        throw new IllegalArgumentException("system property " + BackendSelector.PROPERTY + " = '" + backend
            + "'; expected one of " + String.join(", ", BackendSelector.NAMES)
            + " (or call backend(name) on the builder)");
      }
      int n = threads > 0 ? threads : defaultThreads();
      Backend made;
      try {
        made = BackendSelector.create(backend, n);
      } catch (IllegalStateException e) {
        if (!backendFromProperty || backend.isBlank()) {
          throw e;
        }
        // a name set far from the code (JAVA_OPTS, a launcher) is named with the way out
        throw new IllegalStateException(e.getMessage() + " (backend '" + backend + "' from system property "
            + BackendSelector.PROPERTY + "; unset it for auto, or call backend(name) on the builder)", e);
      }
      return new MaxSim(made, backend, deterministic);
    }

    private static int defaultThreads() {
      String property = System.getProperty(THREADS_PROPERTY);
      if (property == null) {
        return Math.min(MAX_THREADS, Runtime.getRuntime().availableProcessors());
      }
      String seen = "system property " + THREADS_PROPERTY + " = '" + property + "'";
      try {
        return checkThreads(DecimalText.parseInt(property.trim()), seen);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(seen + "; expected an integer, 1 <= threads <= " + MAX_THREADS);
      }
    }

    private static int checkThreads(int threads, String seen) {
      if (threads < 1 || threads > MAX_THREADS) {
        throw new IllegalArgumentException(seen + "; expected 1 <= threads <= " + MAX_THREADS);
      }
      return threads;
    }
  }

  /** Name of the backend in use, e.g. {@code vector}. */
  public String backendName() {
    return backend.name();
  }

  /**
   * The threads {@link Builder#threads} set (or the default): a CPU call computes on its calling thread and
   * {@code threads() - 1} of this instance's; the GPU backend keeps the number and computes on none of them (it
   * starts a few threads of its own: from the first asynchronous call, to complete such calls and run their
   * callbacks, and over several GPUs, to drive the GPUs at once).
   */
  public int threads() {
    return backend.threads();
  }

  /** The backend, its threads and whether this instance is closed, e.g. {@code MaxSim[vector, 2 threads]}. */
  @Override
  public String toString() {
    return "MaxSim[" + backendName() + ", " + threads() + (threads() == 1 ? " thread" : " threads")
        + (gate.isClosed() ? ", closed" : "") + "]";
  }

  /**
   * The backend in use, what computes and on how many threads, and why each faster backend was passed over,
   * e.g. {@code vector (Vector API, 512-bit float lanes, 2 threads); cuda not used: libcuda.so.1 (the CUDA
   * driver) cannot be loaded}. Nothing about this is logged above DEBUG, except a missing Vector API module and,
   * for {@code auto}, a GPU the driver reports that maxsim4j cannot use (a WARNING each, once).
   */
  public String backendInfo() {
    return BackendSelector.describe(backend, requestedBackend);
  }

  // ------------------------------------------------------------------ inference

  /**
   * All pairs: {@code Q [Nq, Lq, d] x D [Nd, Ld, d] -> [Nq][Nd]}. Nq x Nd must fit one Java array; beyond
   * that use {@link #topK} or score the documents in chunks.
   */
  public float[][] scores(TokenBatch queries, TokenBatch documents) {
    return call(queries, documents, b -> {
      Problem p = allPairs(queries, documents);
      requireScoreRows(b, queries.size(), documents.size(), SCORES, SCORE_FEWER);
      return b.scoreRows(p, queries.size(), documents.size());
    });
  }

  /** Pairwise: {@code Q [B, Lq, d] x D [B, Ld, d] -> [B]}, query {@code b} against document {@code b}. */
  public float[] pairwise(TokenBatch queries, TokenBatch documents) {
    return call(queries, documents, b -> {
      Problem p = pairwiseProblem(queries, documents);
      Arguments.resultSize(queries.size(), 1, Float.BYTES, "pairwise scores of pairs", "score fewer pairs per call");
      return b.score(p, null);
    });
  }

  /**
   * Candidates: {@code Q [B, Lq, d] x D [B, K, Ld, d] -> [B][K]}. {@code documents} holds {@code B*K} rows,
   * query {@code b}'s candidates at rows {@code b*K .. b*K+K-1}.
   */
  public float[][] candidates(TokenBatch queries, TokenBatch documents, int candidatesPerQuery) {
    return call(queries, documents, b -> {
      Problem p = candidatesProblem(queries, documents, candidatesPerQuery);
      requireScoreRows(b, queries.size(), candidatesPerQuery, "candidates' scores of queries x candidatesPerQuery",
          "score the queries in smaller batches");
      return b.scoreRows(p, queries.size(), candidatesPerQuery);
    });
  }

  /**
   * The {@code k} best documents per query, streaming over the documents: memory is O(Nq x k) per thread,
   * never Nq x Nd.
   */
  public TopK topK(TokenBatch queries, TokenBatch documents, int k) {
    return call(queries, documents, b -> {
      checkPair(queries, documents);
      if (k <= 0) {
        throw new IllegalArgumentException("k = " + k + "; expected k >= 1");
      }
      // each query keeps min(k, Nd) entries, as the backends clamp k: the result is Nq x that, checked before work
      Arguments.rowsResultSize(queries.size(), Math.min(k, documents.size()), Float.BYTES + Integer.BYTES, 2, false,
          "topK's results of queries x min(k,"
          + " documents) = " + queries.size() + " x min(" + k + ", " + documents.size() + ")",
          "ask for a smaller k, or rank the queries in smaller batches");
      Backend.TopKResult r = b.topK(queries.tokens(), documents.tokens(), k);
      return new TopK(r.scores(), r.indices());
    });
  }

  // ------------------------------------------------------------------ resident documents

  /**
   * Makes a document batch resident with this instance's backend (on a GPU: copied to device memory once)
   * so that many query batches can be scored against it without copying it again. A query batch can be
   * made resident the same way: while its handle is open, calls that pass that same {@code TokenBatch} as
   * queries copy nothing to the device (on one GPU; over several, queries are staged on every device whatever
   * their residency). Close the handle to free it; it is also freed when this MaxSim
   * closes. A call running with the batch when its handle closes still completes. The handle keeps {@code
   * documents} (the CPU backends score it in place): a batch over a {@code MemorySegment} needs that memory open
   * while the handle is used.
   */
  public ResidentBatch upload(TokenBatch documents) {
    Arguments.nonNull(documents, "documents");
    checkRows("documents", documents.tokens());
    return call(null, documents, b -> new ResidentBatch(this, documents, b.makeResident(documents.tokens())));
  }

  /** All pairs against resident documents. */
  public float[][] scores(TokenBatch queries, ResidentBatch documents) {
    return scores(queries, resident(documents));
  }

  /** Top-k against resident documents. */
  public TopK topK(TokenBatch queries, ResidentBatch documents, int k) {
    return topK(queries, resident(documents), k);
  }

  /**
   * All pairs, asynchronously: returns at once, and the future completes with the scores. On the GPU the
   * call is staged and launched before this returns, its scores written straight to pinned memory, and
   * several calls (up to 8) stay in flight, so a caller that submits the next call before taking the last
   * one's scores keeps the device busy back to back; on the CPU the call runs on this instance's own
   * thread. Calls complete in submission order. Bad input still throws here, before anything is queued; over
   * several GPUs, a device that refuses its share once others have queued theirs fails the future instead.
   * Calls submitted before {@link #close()} still complete; the instance frees once the last one has. A callback
   * chained without an executor ({@code thenApply}) runs on the thread that completes the call, before later calls
   * complete: one that blocks there on a later call of this instance ({@code join}) waits forever; chain that call
   * with {@code thenCompose}, or pass the callback an executor of its own ({@code thenApplyAsync(fn, executor)}).
   * Cancelling the future ({@code cancel}) skips the call if it has not started when its turn comes (on the CPU,
   * where calls wait for the one before); a call under way, or launched on a GPU, runs to its end unseen, reading its
   * batches until then. A cancelled call is in flight until its turn has passed or it has ended: {@link #close()}
   * frees the instance after that.
   */
  public CompletableFuture<float[][]> scoresAsync(TokenBatch queries, ResidentBatch documents) {
    return scoresAsync(queries, resident(documents));
  }

  /** As {@link #scoresAsync(TokenBatch, ResidentBatch)} for documents on the host. */
  public CompletableFuture<float[][]> scoresAsync(TokenBatch queries, TokenBatch documents) {
    gate.enter();
    try {
      Problem p = allPairs(queries, documents);
      // the call's heap checks count its inputs here and on the thread that runs it
      LongSupplier held = () -> heldBy(queries, documents);
      HeapLimit.beside(held, () -> {
        requireScoreRows(backend, queries.size(), documents.size(), SCORES, SCORE_FEWER);
        return null;
      });
      CompletableFuture<float[][]> result = new CompletableFuture<>();
      CompletableFuture<float[][]> f = HeapLimit.beside(held, () -> backend.scoreRowsAsync(p, queries.size(),
          documents.size(), r -> asyncExecutor().execute(() -> HeapLimit.beside(held, () -> {
            r.run();
            return null;
          })), result::isCancelled));
      gate.submitted();
      f.whenComplete((scores, failure) -> {
        // the caller's callbacks run in this completion: close() need not wait for the async thread while it runs
        // only them (marked before the call lands, so that a close the landing lets through sees it; only that thread
        // marks itself, and restores the mark, since a callback may complete a later call inline)
        boolean onWorker = Thread.currentThread() == asyncWorker.thread;
        boolean marked = workerInCallbacks;
        if (onWorker) {
          workerInCallbacks = true;
        }
        try {
          Throwable outcome = failure;
          try {
            gate.landed(); // the last call landing after close() frees the instance here, which can fail
            outcome = failure == null ? null : closedMemory(failure, queries, documents);
          } catch (RuntimeException | Error e) {
            if (failure != null) {
              e.addSuppressed(failure);
            }
            outcome = e;
          }
          if (outcome != null) {
            result.completeExceptionally(outcome);
          } else {
            result.complete(scores);
          }
        } finally {
          if (onWorker) {
            workerInCallbacks = marked;
          }
        }
      });
      return result;
    } catch (IllegalStateException e) {
      gate.exit();
      throw closedMemory(e, queries, documents);
    } catch (RuntimeException | Error e) {
      gate.exit();
      throw e;
    }
  }

  /** The async thread of an instance, once started (a new one after each minute idle). */
  private static final class AsyncWorker {
    volatile Thread thread;
  }

  /** How long the async thread waits idle for the next call before it ends (a later call starts another). */
  private static final long ASYNC_IDLE_SECONDS = 60;

  private ExecutorService asyncExecutor() {
    synchronized (asyncLock) {
      if (asyncThread == null) {
        AsyncWorker worker = asyncWorker; // the factory holds this, not the instance
        ThreadPoolExecutor one = new ThreadPoolExecutor(1, 1, ASYNC_IDLE_SECONDS, TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(), r -> {
              Thread t = LibraryThreads.unstarted("maxsim4j-async", r);
              worker.thread = t;
              return t;
            });
        one.allowCoreThreadTimeOut(true); // as the computing threads do: an instance nobody closed keeps none
        asyncThread = one;
      }
      return asyncThread;
    }
  }

  // ------------------------------------------------------------------ training

  /**
   * All-pairs scores that can be differentiated with {@link TrainingScores#backward}: on the CPU the same bits as
   * {@link #scores}, with each query token's winning document slot kept for the backward (fp32, fp16 or bf16
   * tokens; compressed types are refused).
   */
  public TrainingScores scoresForTraining(TokenBatch queries, TokenBatch documents) {
    return call(queries, documents, b -> training(b, allPairs(queries, documents), queries, documents,
        documents.size()));
  }

  /** As {@link #scoresForTraining}, for query {@code i} against document {@code i} ({@link #pairwise}). */
  public TrainingScores pairwiseForTraining(TokenBatch queries, TokenBatch documents) {
    return call(queries, documents, b -> training(b, pairwiseProblem(queries, documents), queries, documents, 1));
  }

  /**
   * As {@link #scoresForTraining}, for each query against its {@code candidatesPerQuery} documents ({@link
   * #candidates}): scores {@code [B][K]}. {@link TrainingScores#evaluate} reads a loss over them as {@link
   * #lossCandidates} does; {@link Loss#evaluate} on their matrix needs the positives named.
   */
  public TrainingScores candidatesForTraining(TokenBatch queries, TokenBatch documents, int candidatesPerQuery) {
    return call(queries, documents, b -> training(b, candidatesProblem(queries, documents, candidatesPerQuery),
        queries, documents, candidatesPerQuery));
  }

  /**
   * Forward, {@code loss} and backward over all pairs in one call, e.g. in-batch contrastive training with
   * {@code Loss.contrastive(0.05f)}. On a GPU the scores, the argmax and {@code dL/dscores} stay on the
   * device; the loss, the scores and the gradients come back.
   */
  public TrainingStep lossAllPairs(TokenBatch queries, TokenBatch documents, Loss loss) {
    return lossAllPairs(queries, documents, loss, GradientPrecision.FLOAT32);
  }

  /** As above, with the gradients returned in the type {@code precision} names (fp32, or the inputs' own). */
  public TrainingStep lossAllPairs(TokenBatch queries, TokenBatch documents, Loss loss, GradientPrecision precision) {
    return call(queries, documents, b -> lossStep(b, allPairs(queries, documents), queries, documents, loss,
        precision));
  }

  /**
   * As {@link #lossAllPairs} over candidates {@code [B, K]}: contrastive against a positive candidate (each
   * query's first candidate where the loss names no positives), KL distillation against teacher scores, or
   * margin-MSE with K = 2 (positive, negative).
   */
  public TrainingStep lossCandidates(TokenBatch queries, TokenBatch documents, int candidatesPerQuery, Loss loss) {
    return lossCandidates(queries, documents, candidatesPerQuery, loss, GradientPrecision.FLOAT32);
  }

  /** As above, with the gradients returned in the type {@code precision} names (fp32, or the inputs' own). */
  public TrainingStep lossCandidates(TokenBatch queries, TokenBatch documents, int candidatesPerQuery, Loss loss,
      GradientPrecision precision) {
    return call(queries, documents, b -> lossStep(b, candidatesProblem(queries, documents, candidatesPerQuery),
        queries, documents, firstCandidatePositive(loss, queries.size()), precision));
  }

  /** Over candidates a contrastive loss without positives means column 0, not the all-pairs diagonal. */
  static Loss firstCandidatePositive(Loss loss, int queries) {
    return loss instanceof Loss.Contrastive c && c.positives() == null
        ? Loss.contrastive(new int[queries], c.temperature()) : loss;
  }

  private TrainingStep lossStep(Backend b, Problem p, TokenBatch q, TokenBatch d, Loss loss,
      GradientPrecision precision) {
    Arguments.nonNull(loss, "loss");
    Arguments.nonNull(precision, "precision");
    checkTraining(p);
    int columns = p.documentsPerQuery();
    // the loss would name its scores [rows][columns], which the caller never passed
    if (q.size() == 0 || columns == 0) {
      throw new IllegalArgumentException((q.size() == 0 ? "queries have no row" : "documents have no row for a"
          + " query") + " (queries " + q.shape() + ", documents " + d.shape() + "); a loss needs at least one"
          + " query and one document per query");
    }
    loss.check(q.size(), columns);
    // the step's flat scores are copied into rows
    Arguments.rowsResultSize(q.size(), columns, Float.BYTES, 1, q.size() > 1, "the loss step's scores of queries x"
        + " documents per query", HeapLimit.TRAIN_SMALLER);
    Backend.LossStep step = b.lossStep(p, loss, deterministic);
    Gradients g = new Gradients(TrainingScores.asBatch(q, step.gradients().queries(), precision),
        TrainingScores.asBatch(d, step.gradients().documents(), precision));
    return new TrainingStep(Loss.Value.canonical(step.loss()), Backend.rows(step.scores(), q.size(), columns), g);
  }

  boolean deterministicBackward() {
    return deterministic;
  }

  /** Whether {@link #close()} has been called. */
  boolean isClosed() {
    return gate.isClosed();
  }

  private TrainingScores training(Backend b, Problem p, TokenBatch q, TokenBatch d, int columns) {
    checkTraining(p);
    Arguments.resultSize(p.pairs(), 1, Float.BYTES, "training scores of pairs", HeapLimit.TRAIN_SMALLER);
    HeapLimit.alsoHolding(Float.BYTES * (long) p.pairs(), () -> HeapLimit.requireArgmax(p.pairs(), p.argmaxStride()));
    int[] argmax = new int[p.pairs() * p.argmaxStride()];
    float[] scores = b.score(p, argmax);
    return new TrainingScores(this, p, q, d, scores, argmax, q.size(), columns);
  }

  /**
   * The argmax a training forward saves and the gradients its backward returns must fit Java arrays, the gradients
   * the heap too; the argmax is checked against the heap where it is allocated there (a GPU loss step keeps it on
   * the device).
   */
  private static void checkTraining(Problem p) {
    Tokens q = p.queries();
    Tokens d = p.documents();
    for (Tokens t : new Tokens[] {q, d}) {
      if (t.dtype.isQuantized()) {
        throw new IllegalArgumentException((t == q ? "queries" : "documents") + " are " + t.dtype
            + "; training takes FLOAT32, FLOAT16 or BFLOAT16 inputs (quantize for retrieval, not for training)");
      }
    }
    Arguments.arraySize(p.pairs(), p.argmaxStride(), HeapLimit.SAVED_ARGMAX, HeapLimit.TRAIN_SMALLER
        + HeapLimit.ARGMAX_HINT);
    Arguments.resultSize(q.storedTokens, q.dim, Float.BYTES, "query gradients of stored tokens x d",
        HeapLimit.TRAIN_SMALLER);
    Arguments.resultSize(d.storedTokens, d.dim, Float.BYTES, "document gradients of stored tokens x d",
        HeapLimit.TRAIN_SMALLER);
  }

  // ------------------------------------------------------------------ projection layer

  /**
   * {@code Y = X W} for row-major fp32 {@code X [rows, in]} and {@code W [in, out]}: the linear projection of
   * a late-interaction head (for example token features 384 -> 128), so training code can keep the whole
   * step on the backend's device (on the GPU backend a device kernel). Each output is summed over {@code in}
   * in order: the same bits on every run (a NaN output is {@link Float#NaN}'s). The sum is an fp32 running sum of
   * fused multiply-adds, as in any fp32 matrix product: unlike scores, a partial sum that passes fp32's range stays
   * infinite (or turns NaN when an opposite infinity meets it) even where the whole sum would fit.
   */
  public float[] project(float[] x, int rows, int in, float[] w, int out) {
    checkMatrix("x", x, rows, in);
    checkMatrix("w", w, in, out);
    HeapLimit.alsoHolding(Float.BYTES * ((long) x.length + w.length), () -> Arguments.resultSize(rows, out,
        Float.BYTES, "project's output of rows x out", "project fewer rows at a time"));
    return call(b -> Backend.canonicalNaN(b.project(x, rows, in, w, out)));
  }

  /**
   * {@code dW = X^T dY [in, out]}: the gradient of {@link #project}'s {@code W}, summed over rows in order (a NaN
   * output is {@link Float#NaN}'s), in fp32 as {@link #project} sums.
   */
  public float[] projectionGradient(float[] x, int rows, int in, float[] dy, int out) {
    checkMatrix("x", x, rows, in);
    checkMatrix("dy", dy, rows, out);
    HeapLimit.alsoHolding(Float.BYTES * ((long) x.length + dy.length), () -> Arguments.resultSize(in, out,
        Float.BYTES, "projectionGradient's output of in x out", "use a smaller projection"));
    return call(b -> Backend.canonicalNaN(b.projectionGradient(x, rows, in, dy, out)));
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

  // ------------------------------------------------------------------ fixed dimensional encodings

  /**
   * {@code encoder}'s encodings of {@code queries} ({@link FixedDimensionalEncoder#encodeQueries}), computed on this
   * instance's backend: on a GPU by device kernels, rows in chunks that keep device memory bounded, bit for bit the
   * encoder's own result; on the CPU the encoder's own code on this instance's threads. The GPU pays for large
   * batches (an index build); arguments are checked as the encoder checks them.
   */
  public float[][] encodeQueries(FixedDimensionalEncoder encoder, TokenBatch queries) {
    return encode(encoder, queries, "queries", true);
  }

  /** As {@link #encodeQueries}, the documents' encodings ({@link FixedDimensionalEncoder#encodeDocuments}). */
  public float[][] encodeDocuments(FixedDimensionalEncoder encoder, TokenBatch documents) {
    return encode(encoder, documents, "documents", false);
  }

  private float[][] encode(FixedDimensionalEncoder encoder, TokenBatch batch, String name, boolean queries) {
    Arguments.nonNull(encoder, "encoder");
    Arguments.nonNull(batch, name);
    // checked inside the call, whose heap checks count the batch; a sum's NaN carries the payload its operands'
    // order left: canonical, it is the same on every backend and run
    return call(queries ? batch : null, queries ? null : batch,
        b -> Backend.canonicalNaN(b.encodeFde(encoder.parameters(), encoder.checked(batch, name), queries)));
  }

  // ------------------------------------------------------------------ plumbing

  /** Runs {@code body} as one call admitted by the gate, so {@link #close()} never frees under it. */
  <T> T call(Function<Backend, T> body) {
    return call(null, null, body);
  }

  /**
   * As {@link #call(Function)} for a call that reads {@code queries} and {@code documents} (null where it has no such
   * side): a batch whose memory is closed while the call reads it fails as one closed before the call does.
   */
  <T> T call(TokenBatch queries, TokenBatch documents, Function<Backend, T> body) {
    gate.enter();
    try {
      return HeapLimit.beside(() -> heldBy(queries, documents), () -> body.apply(backend));
    } catch (IllegalStateException e) {
      throw closedMemory(e, queries, documents);
    } finally {
      gate.exit();
    }
  }

  /** The heap {@code queries} and {@code documents} (either may be null) hold, each array once. */
  static long heldBy(TokenBatch queries, TokenBatch documents) {
    return queries == null ? (documents == null ? 0 : Tokens.heapBytes(documents.tokens(), null))
        : Tokens.heapBytes(queries.tokens(), documents == null ? null : documents.tokens());
  }

  /** The backend, for tests and tools that reach past the public API; throws when closed. */
  Backend backend() {
    if (gate.isClosed()) {
      throw new IllegalStateException("MaxSim is closed");
    }
    return backend;
  }

  /**
   * Refuses new calls, waits for calls running on other threads to return (they complete normally), then
   * frees the thread pool and any device memory, resident batches included, and returns once they are freed.
   * Asynchronous calls already submitted complete too: while one is in flight close() returns at once, and the
   * instance frees when the last one lands. Where close() frees, no thread of a CPU backend outlives it but the
   * async thread while the callbacks chained to a call are found waiting on something (a lock, a condition, native
   * I/O such as a socket's read; perhaps for the closing thread) or still run after a minute: it ends when they
   * return. Idempotent.
   */
  @Override
  public void close() {
    gate.close();
  }

  private void release() {
    ExecutorService async;
    synchronized (asyncLock) {
      async = asyncThread;
    }
    if (async != null) {
      async.shutdown(); // idle: every submitted call has landed
      Thread worker = asyncWorker.thread;
      // not waited for where the last asynchronous call releases the instance on that thread itself
      if (worker != null && worker != Thread.currentThread() && callbacksReturn(worker)) {
        Termination.await(async, java.util.List.of(worker), WORKER_WAIT);
      }
    }
    backend.close();
  }

  private static final java.time.Duration WORKER_WAIT = java.time.Duration.ofMinutes(1);

  /** Consecutive polls, a millisecond apart, that find a callback in a native method: it waits for I/O. */
  private static final int NATIVE_POLLS = 20;

  /**
   * Whether the async thread, where it runs the caller's callbacks, leaves them within {@link #WORKER_WAIT} without
   * waiting on anything: a callback that waits may wait for the closing thread, so the thread is left to end once it
   * returns. A thread still completing a future (a joining caller woken, nothing to wait for) is waited for.
   */
  private boolean callbacksReturn(Thread worker) {
    long deadline = System.nanoTime() + WORKER_WAIT.toNanos();
    boolean interrupted = Thread.interrupted(); // a set interrupt would turn the pauses below into a busy loop
    try {
      int inNative = 0;
      for (int polls = 0; workerInCallbacks && worker.isAlive(); polls++) {
        Thread.State state = worker.getState();
        if (state == Thread.State.BLOCKED || state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING
            || System.nanoTime() - deadline > 0) {
          return false;
        }
        if (polls < 1000) {
          Thread.onSpinWait(); // a future's completion takes microseconds
        } else {
          // a thread blocked in native I/O (a socket's read, perhaps from the closing thread) reports RUNNABLE: one
          // found in a native method poll after poll is taken to wait
          inNative = inNativeMethod(worker) ? inNative + 1 : 0;
          if (inNative == NATIVE_POLLS) {
            return false;
          }
          interrupted |= Thread.interrupted(); // one that arrives now would end every pause at once
          java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // a callback that computes, for longer
        }
      }
      return true;
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static boolean inNativeMethod(Thread t) {
    StackTraceElement[] stack = t.getStackTrace();
    return stack.length > 0 && stack[0].isNativeMethod();
  }

  private TokenBatch resident(ResidentBatch documents) {
    return Arguments.nonNull(documents, "documents").batchFor(this);
  }

  private static final String SCORES = "scores of queries x documents";
  private static final String SCORE_FEWER = "use topK(queries, documents, k), or score the documents in chunks";

  private static Problem allPairs(TokenBatch q, TokenBatch d) {
    checkPair(q, d);
    Arguments.arraySize(q.size(), d.size(), SCORES, SCORE_FEWER);
    return Problem.allPairs(q.tokens(), d.tokens());
  }

  /** {@code rows x columns} scores as {@code b} returns them, in rows, within the heap ({@link HeapLimit}). */
  private static void requireScoreRows(Backend b, int rows, int columns, String what, String instead) {
    Arguments.rowsResultSize(rows, columns, Float.BYTES, 1, rows > 1 && b.rowsFromFlatScores(), what, instead);
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
    Arguments.nonNull(q, "queries");
    Arguments.nonNull(d, "documents");
    if (q.dim() != d.dim()) {
      TokenBatch tokenless = d.tokens().storedTokens == 0 ? d : q.tokens().storedTokens == 0 ? q : null;
      String placeholder = tokenless == null ? "" : " (" + (tokenless == d ? "documents" : "queries") + " hold no"
          + " token, so their d is a placeholder: build them with the other side's d, e.g. TokenBatch.ofFloats(new"
          + " float[0], n, 0, d))";
      throw new IllegalArgumentException("d mismatch: queries " + q.shape() + " have d=" + q.dim()
          + ", documents " + d.shape() + " have d=" + d.dim() + "; expected equal" + placeholder);
    }
    checkRows("queries", q.tokens());
    checkRows("documents", d.tokens());
  }

  /**
   * A kernel stages one row at a time, padded to a whole number of vectors, in a Java array; and a batch over a
   * MemorySegment needs its memory still open (else the JDK's bare "Already closed" would name neither).
   */
  private static void checkRows(String name, Tokens t) {
    requireOpenMemory(name, t);
    long staged = ((long) t.maxRowLength + 64) * t.dim;
    if (t.maxRowLength > 0 && staged > Arguments.MAX_ARRAY) {
      throw new IllegalArgumentException("the longest row of " + name + " holds tokens x d = " + t.maxRowLength
          + " x " + t.dim + " = " + (long) t.maxRowLength * t.dim + " elements, but scoring stages a row, padded by"
          + " up to 64 tokens, in one Java array: (" + t.maxRowLength + " + 64) x " + t.dim + " = " + staged
          + " elements, at most " + Arguments.MAX_ARRAY + "; split such rows into several shorter ones"
          + (65L * t.dim > Arguments.MAX_ARRAY ? ", or use fewer dimensions" : ""));
    }
  }

  /** A batch over a MemorySegment needs its memory still open: else the JDK's bare "Already closed". */
  static void requireOpenMemory(String name, Tokens t) {
    if (memoryClosed(t)) {
      throw new IllegalStateException(name + CLOSED_MEMORY);
    }
  }

  private static final String CLOSED_MEMORY = " read their tokens from a MemorySegment whose arena was closed after"
      + " the batch was made; expected that memory to stay open while the batch is used";

  private static boolean memoryClosed(Tokens t) {
    return t != null && t.segment != null && !t.segment.scope().isAlive();
  }

  /** As the other, for the failure of an asynchronous call (the JDK's error wrapped in a CompletionException). */
  private static Throwable closedMemory(Throwable failure, TokenBatch queries, TokenBatch documents) {
    Throwable cause = failure instanceof CompletionException c && c.getCause() != null ? c.getCause() : failure;
    if (cause instanceof IllegalStateException e) {
      IllegalStateException named = closedMemory(e, queries, documents);
      return named != e ? named : failure;
    }
    return failure;
  }

  private static IllegalStateException closedMemory(IllegalStateException e, TokenBatch queries, TokenBatch documents) {
    IllegalStateException named = closedMemory(e, "queries", queries == null ? null : queries.tokens());
    return named != e ? named : closedMemory(e, "documents", documents == null ? null : documents.tokens());
  }

  /**
   * {@code e} as {@link #requireOpenMemory} names it where {@code t}'s arena is now closed: closed after that check,
   * while the call read it, the JDK's "Already closed" (the cause) names no batch; else {@code e} itself.
   */
  static IllegalStateException closedMemory(IllegalStateException e, String name, Tokens t) {
    boolean named = e.getMessage() != null && e.getMessage().endsWith(CLOSED_MEMORY);
    return named || !memoryClosed(t) ? e : new IllegalStateException(name + CLOSED_MEMORY, e);
  }
}
