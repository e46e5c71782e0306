package dev.maxsim4j.internal;

import dev.maxsim4j.Loss;
import dev.maxsim4j.TopK;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.function.ToLongFunction;

/**
 * One backend over several (the GPUs of a host): documents are split into shards of whole documents, in order,
 * equal where they fit each backend's capacity (else in proportion to it), and every shard is scored at once on
 * its own backend. All-pairs scores and top-k
 * broadcast the queries: scores are concatenated in document order, top-k merged exactly ({@link TopK#merge}).
 * Pairwise and candidate calls, forward and backward, split the queries with their own documents, so each
 * document's gradient comes from one backend and the result is deterministic; the all-pairs backward and
 * the projection run on the first backend, where nothing would have to be summed across backends. Each shard is a
 * part of the call to its backend, so where {@link dev.maxsim4j.MaxSim} says a pair's last bits depend on what else
 * its call holds (the queries' kernel), a split call's can differ from one backend's.
 *
 * <p>A batch made resident is sharded once and stays so until its last holder closes; calls that pass it
 * score its resident shards. Every other document batch is split by capacity for the call.
 */
public final class ShardedBackend implements Backend {
  private final List<Backend> backends;
  private final ToLongFunction<Backend> capacity;
  private final ExecutorService pool;
  private final Map<Tokens, Resident> resident = new IdentityHashMap<>();
  /** The last asynchronous call's future: each call completes after it, in submission order. */
  private CompletableFuture<?> lastAsync = CompletableFuture.completedFuture(null);

  /** A resident batch's shards, their handles on each backend, and how many holders share it. */
  private static final class Resident {
    final int[] bounds;
    final List<Tokens> shards;
    final List<Residency> handles;
    int holders = 1;

    Resident(int[] bounds, List<Tokens> shards, List<Residency> handles) {
      this.bounds = bounds;
      this.shards = shards;
      this.handles = handles;
    }
  }

  /**
   * Documents split for one call: shard {@code s} holds rows {@code bounds[s] ..} as {@code shards.get(s)}, and
   * {@code copied} bytes of their rows' metadata on the heap for the call (none for resident shards, held by their
   * handle).
   */
  private record Split(int[] bounds, List<Tokens> shards, long copied) {}

  /**
   * Shards over {@code backends} (two or more, each owned and closed by this one), bounded by {@code capacity}:
   * the bytes a backend can hold now (a device's free memory). Shards are equal where they fit, else in
   * proportion to the capacities ({@link TokenSlices#split}).
   */
  public ShardedBackend(List<Backend> backends, ToLongFunction<Backend> capacity) {
    if (backends == null || backends.size() < 2) {
      throw new IllegalArgumentException("backends " + backends + "; expected two or more to shard over");
    }
    this.backends = List.copyOf(backends);
    this.capacity = capacity;
    this.pool = Executors.newFixedThreadPool(backends.size() - 1, r -> LibraryThreads.unstarted("maxsim4j-shard", r));
  }

  /** Shards over {@code backends} in equal parts (CPU backends, which have no memory of their own). */
  public static ShardedBackend equalParts(List<Backend> backends) {
    return new ShardedBackend(backends, b -> Long.MAX_VALUE);
  }

  /** The backends, in shard order. */
  public List<Backend> backends() {
    return backends;
  }

  @Override
  public String name() {
    return backends.get(0).name();
  }

  @Override
  public String description() {
    StringBuilder s = new StringBuilder().append(backends.size()).append(" devices: ");
    for (int i = 0; i < backends.size(); i++) {
      s.append(i == 0 ? "" : "; ").append(backends.get(i).description());
    }
    return s.toString();
  }

  @Override
  public int threads() {
    return backends.get(0).threads();
  }

  // ------------------------------------------------------------------ residency

  @Override
  public Residency makeResident(Tokens documents) {
    synchronized (resident) {
      Resident r = resident.get(documents);
      if (r != null) {
        r.holders++;
        return releaser(documents);
      }
    }
    Split split = split(documents, "upload fewer documents at a time");
    // an empty shard holds nothing (a device cannot allocate 0 bytes)
    Outcome<Residency> made = attempt(s -> split.shards().get(s).rows == 0 ? Residency.NONE
        : backends.get(s).makeResident(split.shards().get(s)), split.copied());
    List<Residency> handles = made.results().stream().filter(h -> h != null).toList();
    if (made.failure() != null) {
      try {
        closeAll(handles, Residency::close); // the shards that did upload
      } catch (RuntimeException | Error e) { // the upload's failure is the one to report
        made.failure().addSuppressed(e);
      }
      throw made.rethrow();
    }
    boolean shared;
    synchronized (resident) {
      Resident r = resident.get(documents);
      shared = r != null;
      if (shared) { // another thread made it resident meanwhile: share that one
        r.holders++;
      } else {
        resident.put(documents, new Resident(split.bounds(), split.shards(), handles));
      }
    }
    Residency releaser = releaser(documents);
    if (shared) {
      try {
        closeAll(handles, Residency::close); // this thread's copies, outside the lock
      } catch (RuntimeException | Error e) { // no releaser reaches the caller: give back the hold taken above
        try {
          releaser.close();
        } catch (RuntimeException | Error suppressed) {
          e.addSuppressed(suppressed);
        }
        throw e;
      }
    }
    return releaser;
  }

  private Residency releaser(Tokens documents) {
    return new Residency() {
      private boolean released;

      @Override
      public void close() {
        Resident r;
        synchronized (resident) {
          if (released) {
            return;
          }
          released = true;
          r = resident.get(documents);
          if (r == null || --r.holders > 0) {
            return;
          }
          resident.remove(documents);
        }
        closeAll(r.handles, Residency::close);
      }
    };
  }

  /** Resident shards of {@code documents}, or a split by the backends' capacity now. */
  private Split shardsOf(Tokens documents) {
    synchronized (resident) {
      Resident r = resident.get(documents);
      if (r != null) {
        return new Split(r.bounds, r.shards, 0);
      }
    }
    return split(documents, "score fewer documents a call");
  }

  /**
   * Documents split by the backends' capacity now; where none has any left (each device below its headroom, say),
   * in equal parts, so that each device reports its own shortage, or streams, as one backend would.
   */
  private Split split(Tokens documents, String instead) {
    long[] capacities = new long[backends.size()];
    boolean none = true;
    for (int s = 0; s < capacities.length; s++) {
      capacities[s] = Math.max(0, capacity.applyAsLong(backends.get(s)));
      none &= capacities[s] == 0;
    }
    if (none) {
      Arrays.fill(capacities, Long.MAX_VALUE);
    }
    int[] bounds = TokenSlices.split(documents, capacities);
    long copied = 0;
    for (int s = 0; s < capacities.length; s++) {
      copied += TokenSlices.copiedBytes(documents, bounds[s], bounds[s + 1]);
    }
    requireCopies(copied, "the documents'", instead);
    List<Tokens> shards = new ArrayList<>();
    for (int s = 0; s < capacities.length; s++) {
      shards.add(TokenSlices.rows(documents, bounds[s], bounds[s + 1]));
    }
    return new Split(bounds, shards, copied);
  }

  /**
   * Refuses, naming them, {@code bytes} of the rows' metadata that the shards of {@code whose} rows copy where the
   * heap has no room for them beside what the call holds.
   */
  private void requireCopies(long bytes, String whose, String instead) {
    HeapLimit.requireBytes(bytes, "the starts, lengths, masks and scales of " + whose + " rows copied for "
        + backends.size() + " devices' shards", instead);
  }

  // ------------------------------------------------------------------ forward

  @Override
  public float[] score(Problem problem, int[] argmax) {
    if (problem.pairs() == 0) {
      return new float[0];
    }
    if (problem.kind() == Problem.Kind.ALL_PAIRS) {
      Split split = shardsOf(problem.documents());
      int stride = problem.argmaxStride();
      List<Problem> parts = new ArrayList<>();
      for (Tokens shard : split.shards()) {
        parts.add(Problem.allPairs(problem.queries(), shard));
      }
      List<int[]> argmaxes = new ArrayList<>();
      for (Problem p : parts) {
        argmaxes.add(argmax == null ? null : new int[p.pairs() * stride]);
      }
      List<float[]> scores = all(s -> parts.get(s).pairs() == 0 ? new float[0]
          : backends.get(s).score(parts.get(s), argmaxes.get(s)), split.copied());
      int queries = problem.queries().rows;
      int columns = problem.documents().rows;
      float[] out = new float[problem.pairs()];
      for (int s = 0; s < parts.size(); s++) {
        int first = split.bounds()[s];
        int width = split.bounds()[s + 1] - first;
        for (int i = 0; i < queries; i++) {
          System.arraycopy(scores.get(s), i * width, out, i * columns + first, width);
          if (argmax != null) {
            System.arraycopy(argmaxes.get(s), i * width * stride, argmax, (i * columns + first) * stride,
                width * stride);
          }
        }
      }
      return out;
    }
    QuerySplit split = splitQueries(problem);
    if (split == null) {
      return backends.get(0).score(problem, argmax);
    }
    List<int[]> argmaxes = new ArrayList<>();
    for (Problem p : split.parts()) {
      argmaxes.add(argmax == null ? null : new int[p.pairs() * p.argmaxStride()]);
    }
    List<float[]> scores = all(s -> split.parts().get(s).pairs() == 0 ? new float[0]
        : backends.get(s).score(split.parts().get(s), argmaxes.get(s)), split.copied());
    float[] out = new float[problem.pairs()];
    if (argmax != null) {
      Arrays.fill(argmax, NO_ARGMAX);
    }
    int perQuery = problem.documentsPerQuery();
    for (int s = 0; s < split.parts().size(); s++) {
      int firstPair = split.bounds()[s] * perQuery;
      float[] part = scores.get(s);
      System.arraycopy(part, 0, out, firstPair, part.length);
      if (argmax != null) {
        int from = split.parts().get(s).argmaxStride();
        int to = problem.argmaxStride();
        for (int p = 0; p < part.length; p++) {
          System.arraycopy(argmaxes.get(s), p * from, argmax, (firstPair + p) * to, from);
        }
      }
    }
    return out;
  }

  @Override
  public float[][] scoreRows(Problem problem, int rows, int columns) {
    if (problem.kind() != Problem.Kind.ALL_PAIRS || problem.pairs() == 0) {
      return Backend.rows(score(problem, null), rows, columns);
    }
    Split split = shardsOf(problem.documents());
    List<float[][]> parts = all(s -> split.shards().get(s).rows == 0 ? null
        : backends.get(s).scoreRows(Problem.allPairs(problem.queries(), split.shards().get(s)), rows,
            split.shards().get(s).rows), split.copied());
    return concatenate(parts, split.bounds(), rows, columns);
  }

  private static float[][] concatenate(List<float[][]> parts, int[] bounds, int rows, int columns) {
    float[][] out = new float[rows][columns];
    for (int s = 0; s < parts.size(); s++) {
      int width = bounds[s + 1] - bounds[s];
      for (int i = 0; i < rows && width > 0; i++) { // an empty shard has no rows to copy
        System.arraycopy(parts.get(s)[i], 0, out[i], bounds[s], width);
      }
    }
    return out;
  }

  /**
   * Every shard's call is submitted before this returns, each backend keeping its calls in order; the
   * future completes with the concatenated rows, after the previous call's future. A shard whose submission fails
   * once others' calls are queued fails the future, after those calls end: thrown here, it would end the call while
   * they still run, and a close could free their devices under them.
   */
  @Override
  public CompletableFuture<float[][]> scoreRowsAsync(Problem problem, int rows, int columns, Executor executor,
      BooleanSupplier cancelled) {
    if (problem.kind() != Problem.Kind.ALL_PAIRS) {
      return Backend.super.scoreRowsAsync(problem, rows, columns, executor, cancelled);
    }
    if (problem.pairs() == 0) { // no device work, but not before the calls submitted earlier
      synchronized (this) {
        CompletableFuture<float[][]> empty = lastAsync.thenApplyAsync(done -> scoreRows(problem, rows, columns),
            executor);
        lastAsync = empty.handle((r, e) -> null);
        return empty;
      }
    }
    Split split = shardsOf(problem.documents());
    synchronized (this) { // submitters take turns, so every device queues the calls in the same order
      List<CompletableFuture<float[][]>> parts = new ArrayList<>();
      Throwable failedSubmitting = null;
      try {
        // each device's checks count the shards' copies too, on submitting and on the executor's thread alike
        long held = HeapLimit.held() + split.copied();
        Executor counting = r -> executor.execute(() -> HeapLimit.beside(() -> held, () -> {
          r.run();
          return null;
        }));
        for (int s = 0; s < backends.size(); s++) {
          Tokens shard = split.shards().get(s);
          Backend device = backends.get(s);
          parts.add(shard.rows == 0 ? CompletableFuture.completedFuture(null) : HeapLimit.beside(() -> held,
              () -> device.scoreRowsAsync(Problem.allPairs(problem.queries(), shard), rows, shard.rows, counting,
                  cancelled)));
        }
      } catch (RuntimeException | Error e) {
        if (parts.stream().allMatch(CompletableFuture::isDone)) {
          throw e; // nothing of this call runs
        }
        failedSubmitting = e;
      }
      CompletableFuture<?>[] waits = new CompletableFuture<?>[parts.size() + 1];
      for (int s = 0; s < parts.size(); s++) {
        waits[s] = parts.get(s);
      }
      waits[parts.size()] = lastAsync;
      Throwable failure = failedSubmitting;
      CompletableFuture<float[][]> merged = failure != null
          ? CompletableFuture.allOf(waits).handle((done, e) -> null).thenCompose(ended ->
              CompletableFuture.<float[][]>failedFuture(failure))
          : CompletableFuture.allOf(waits).thenApply(done ->
              concatenate(parts.stream().map(CompletableFuture::join).toList(), split.bounds(), rows, columns));
      lastAsync = merged.handle((r, e) -> null); // the next call waits for this one, not for its scores or failure
      return merged;
    }
  }

  @Override
  public TopKResult topK(Tokens queries, Tokens documents, int k) {
    Split split = shardsOf(documents);
    // every shard's k best per query are held at once beside their merge: each backend checks only its own
    long held = Math.min(k, documents.rows);
    int shards = 0;
    for (Tokens shard : split.shards()) {
      held += Math.min(k, shard.rows);
      shards += shard.rows == 0 ? 0 : 1;
    }
    long entries = held;
    int devices = shards;
    HeapLimit.alsoHolding(split.copied(), () -> HeapLimit.requireRows(queries.rows, entries,
        Float.BYTES + Integer.BYTES, 2 * (devices + 1), false, "topK's entries held at once, queries x (k + each"
        + " device's k), k = " + Math.min(k, documents.rows) + ", " + devices + " devices",
        "ask for a smaller k, or rank the queries in smaller batches"));
    List<TopKResult> parts = all(s -> split.shards().get(s).rows == 0 ? null
        : backends.get(s).topK(queries, split.shards().get(s), k), split.copied());
    List<TopK> present = new ArrayList<>();
    List<Integer> firsts = new ArrayList<>();
    for (int s = 0; s < parts.size(); s++) {
      if (parts.get(s) != null) {
        present.add(new TopK(parts.get(s).scores(), parts.get(s).indices()));
        firsts.add(split.bounds()[s]);
      }
    }
    if (present.isEmpty()) {
      return new TopKResult(new float[queries.rows][0], new int[queries.rows][0]);
    }
    TopK merged = TopK.merge(k, present, firsts.stream().mapToInt(Integer::intValue).toArray());
    return new TopKResult(merged.scores(), merged.indices());
  }

  // ------------------------------------------------------------------ training

  @Override
  public Gradients backward(Problem problem, int[] argmax, float[] dScores, boolean deterministic) {
    if (problem.kind() == Problem.Kind.ALL_PAIRS || problem.pairs() == 0) {
      return backends.get(0).backward(problem, argmax, dScores, deterministic);
    }
    QuerySplit split = splitQueries(problem);
    if (split == null) {
      return backends.get(0).backward(problem, argmax, dScores, deterministic);
    }
    int perQuery = problem.documentsPerQuery();
    List<Gradients> parts = all(s -> {
      Problem part = split.parts().get(s);
      if (part.pairs() == 0) {
        return new Gradients(new float[part.queries().storedTokens * part.queries().dim],
            new float[part.documents().storedTokens * part.documents().dim]);
      }
      int firstPair = split.bounds()[s] * perQuery;
      int pairs = part.pairs();
      int from = problem.argmaxStride();
      int to = part.argmaxStride();
      int[] a = new int[pairs * to];
      for (int p = 0; p < pairs; p++) {
        System.arraycopy(argmax, (firstPair + p) * from, a, p * to, to);
      }
      float[] d = Arrays.copyOfRange(dScores, firstPair, firstPair + pairs);
      return backends.get(s).backward(part, a, d, deterministic);
    }, split.copied());
    Tokens q = problem.queries();
    Tokens docs = problem.documents();
    float[] dq = new float[Math.multiplyExact(q.storedTokens, q.dim)];
    float[] dd = new float[Math.multiplyExact(docs.storedTokens, docs.dim)];
    for (int s = 0; s < parts.size(); s++) {
      int from = split.bounds()[s];
      int to = split.bounds()[s + 1];
      place(parts.get(s).queries(), dq, TokenSlices.firstSlot(q, from, to), q.dim);
      place(parts.get(s).documents(), dd, TokenSlices.firstSlot(docs, from * perQuery, to * perQuery), docs.dim);
    }
    return new Gradients(dq, dd);
  }

  /** A shard's gradients into the whole batch's, at its first slot; a shard's slots are its rows' alone. */
  private static void place(float[] part, float[] whole, int firstSlot, int dim) {
    System.arraycopy(part, 0, whole, firstSlot * dim, part.length);
  }

  /**
   * All pairs on the first backend (a query's gradient sums over every document, which a split would
   * reorder); pairwise and candidates split by queries, the loss taken over all of them on the host.
   */
  @Override
  public LossStep lossStep(Problem problem, Loss loss, boolean deterministic) {
    if (problem.kind() == Problem.Kind.ALL_PAIRS || queryBounds(problem) == null) {
      return backends.get(0).lossStep(problem, loss, deterministic);
    }
    return Backend.super.lossStep(problem, loss, deterministic);
  }

  /**
   * Queries split with their documents: shard {@code s} scores queries {@code bounds[s] ..}; {@code copied} bytes of
   * their rows' metadata on the heap.
   */
  private record QuerySplit(int[] bounds, List<Problem> parts, long copied) {}

  /**
   * The pairwise or candidate problem split by queries in equal parts, with each query's documents; null
   * when the shards' slots would interleave (a packed batch whose rows are out of order), which the
   * gradients, laid out like the storage, could not be put back from.
   */
  private QuerySplit splitQueries(Problem problem) {
    int[] bounds = queryBounds(problem);
    if (bounds == null) {
      return null;
    }
    int perQuery = problem.documentsPerQuery();
    long copied = 0;
    for (int s = 0; s + 1 < bounds.length; s++) {
      copied += TokenSlices.copiedBytes(problem.queries(), bounds[s], bounds[s + 1])
          + TokenSlices.copiedBytes(problem.documents(), bounds[s] * perQuery, bounds[s + 1] * perQuery);
    }
    requireCopies(copied, "the queries' and documents'", "train on smaller batches of queries or documents");
    List<Problem> parts = new ArrayList<>();
    for (int s = 0; s + 1 < bounds.length; s++) {
      Tokens qs = TokenSlices.rows(problem.queries(), bounds[s], bounds[s + 1]);
      Tokens ds = TokenSlices.rows(problem.documents(), bounds[s] * perQuery, bounds[s + 1] * perQuery);
      parts.add(problem.kind() == Problem.Kind.PAIRWISE ? Problem.pairwise(qs, ds) : Problem.candidates(qs, ds,
          perQuery));
    }
    return new QuerySplit(bounds, parts, copied);
  }

  /** The first query of each shard, equal parts, and the end; null when {@link #splitQueries} cannot split. */
  private int[] queryBounds(Problem problem) {
    int n = backends.size();
    int[] bounds = new int[n + 1];
    for (int s = 0; s <= n; s++) {
      bounds[s] = (int) ((long) problem.queries().rows * s / n);
    }
    return inOrder(problem.queries(), bounds, 1) && inOrder(problem.documents(), bounds, problem.documentsPerQuery())
        ? bounds : null;
  }

  /** Whether the shards of rows {@code bounds[s] * per ..} own slot ranges in shard order, none overlapping. */
  private static boolean inOrder(Tokens t, int[] bounds, int per) {
    int end = 0;
    for (int s = 0; s + 1 < bounds.length; s++) {
      int from = bounds[s] * per;
      int to = bounds[s + 1] * per;
      if (from == to) {
        continue;
      }
      if (TokenSlices.firstSlot(t, from, to) < end) {
        return false;
      }
      end = TokenSlices.endSlot(t, from, to);
    }
    return true;
  }

  // ------------------------------------------------------------------ on the first backend

  @Override
  public float[] project(float[] x, int rows, int in, float[] w, int out) {
    return backends.get(0).project(x, rows, in, w, out);
  }

  @Override
  public float[] projectionGradient(float[] x, int rows, int in, float[] dy, int out) {
    return backends.get(0).projectionGradient(x, rows, in, dy, out);
  }

  // ------------------------------------------------------------------ fixed dimensional encodings

  /** Rows split in equal parts, each encoded on its own backend at once; a row's encoding is the same anywhere. */
  @Override
  public float[][] encodeFde(FdeParameters parameters, Tokens tokens, boolean queries) {
    int n = backends.size();
    int[] bounds = new int[n + 1];
    for (int s = 0; s <= n; s++) {
      bounds[s] = (int) ((long) tokens.rows * s / n);
    }
    long copied = 0;
    for (int s = 0; s < n; s++) {
      copied += TokenSlices.copiedBytes(tokens, bounds[s], bounds[s + 1]);
    }
    requireCopies(copied, queries ? "the queries'" : "the documents'", "encode fewer rows a call");
    List<float[][]> parts = all(s -> backends.get(s).encodeFde(parameters,
        TokenSlices.rows(tokens, bounds[s], bounds[s + 1]), queries), copied);
    float[][] out = new float[tokens.rows][];
    for (int s = 0; s < n; s++) {
      System.arraycopy(parts.get(s), 0, out, bounds[s], bounds[s + 1] - bounds[s]);
    }
    return out;
  }

  // ------------------------------------------------------------------ plumbing

  /**
   * {@code body} for every shard at once, shard 0 on the calling thread, and their results in shard order;
   * waits for every shard before throwing the first failure, so no shard still runs when the call returns.
   */
  private <T> List<T> all(IntFunction<T> body, long alsoHeld) {
    Outcome<T> o = attempt(body, alsoHeld);
    if (o.failure() != null) {
      throw o.rethrow();
    }
    return o.results();
  }

  /** Every shard's result (null where it failed) and the first failure (the later ones suppressed in it), or null. */
  private record Outcome<T>(List<T> results, Throwable failure) {
    RuntimeException rethrow() {
      if (failure instanceof Error e) {
        throw e;
      }
      return failure instanceof RuntimeException r ? r : new CompletionException(failure);
    }
  }

  /**
   * As {@link #all}, the failure returned rather than thrown. Every shard's heap checks count what the call holds
   * and {@code alsoHeld} bytes beside it (the shards' copies): a pool thread does not inherit the caller's binding.
   */
  private <T> Outcome<T> attempt(IntFunction<T> body, long alsoHeld) {
    List<Future<T>> others = new ArrayList<>();
    long held = HeapLimit.held() + alsoHeld;
    for (int s = 1; s < backends.size(); s++) {
      int shard = s;
      others.add(pool.submit(() -> HeapLimit.beside(() -> held, () -> body.apply(shard))));
    }
    List<T> out = new ArrayList<>();
    Throwable failure = null;
    Set<Throwable> reported = Collections.newSetFromMap(new IdentityHashMap<>());
    try {
      out.add(HeapLimit.beside(() -> held, () -> body.apply(0)));
    } catch (RuntimeException | Error e) {
      failure = e;
      reported.add(e);
      out.add(null);
    }
    boolean interrupted = false;
    for (Future<T> f : others) {
      while (true) {
        try {
          out.add(f.get());
          break;
        } catch (InterruptedException e) {
          interrupted = true; // the shard still runs: wait for it, then restore the flag
        } catch (ExecutionException e) {
          if (failure == null) {
            failure = e.getCause();
            reported.add(failure);
          } else if (reported.add(e.getCause())) {
            failure.addSuppressed(e.getCause()); // every device's failure is reported once, the first one thrown
          }
          out.add(null);
          break;
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    return new Outcome<>(out, failure);
  }

  /** Closes every one, whatever the others threw; throws the first failure, the others suppressed in it. */
  private static <T> void closeAll(List<T> all, Consumer<T> close) {
    Throwable first = null;
    for (T one : all) {
      try {
        close.accept(one);
      } catch (RuntimeException | Error e) { // an Error too: the other devices' memory is still freed
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first instanceof RuntimeException e) {
      throw e;
    }
    if (first != null) {
      throw (Error) first;
    }
  }

  @Override
  public void close() {
    pool.shutdown();
    synchronized (resident) {
      resident.clear(); // each backend frees its resident shards as it closes
    }
    closeAll(backends, Backend::close);
  }
}
