package dev.maxsim4j.internal.cpu;

import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.FdeEncoding;
import dev.maxsim4j.internal.FdeParameters;
import dev.maxsim4j.internal.HeapLimit;
import dev.maxsim4j.internal.Problem;
import dev.maxsim4j.internal.Tokens;
import java.util.Arrays;
import java.util.function.IntConsumer;

/**
 * A CPU backend: one {@link PairKernel} driven by the calling thread and a fixed pool ({@link ParallelLoop}). Work
 * is split by tiles of documents and queries (all pairs), by documents (top-k) or by pair (pairwise, candidates,
 * where a document meets one query), so each loaded document serves every query of its tile and no
 * Nq x Nd x Lq x Ld buffer ever exists; extra memory is the queries re-laid out once (as fp32 where the kernel
 * expands them: four times an int8 batch) and one staged document per thread.
 */
public final class CpuBackend implements Backend {
  private final PairKernel kernel;
  private final ParallelLoop loop;

  CpuBackend(PairKernel kernel, int threads) {
    this.kernel = kernel;
    this.loop = new ParallelLoop(threads);
  }

  /** Encodings on this backend's threads, not the common pool: a MaxSim built with threads(n) computes with n. */
  @Override
  public float[][] encodeFde(FdeParameters parameters, Tokens tokens, boolean queries) {
    return FdeEncoding.encode(parameters, tokens, queries, new FdeEncoding.Rows() {
      @Override
      public void forEach(int rows, IntConsumer row) {
        loop.forRange(rows, loop.grainFor(rows, 1), (from, to) -> {
          for (int r = from; r < to; r++) {
            row.accept(r);
          }
        });
      }

      @Override
      public int parallelism() {
        return loop.threads();
      }
    });
  }

  @Override
  public String name() {
    return kernel.name();
  }

  @Override
  public String description() {
    return kernel.description();
  }

  @Override
  public int threads() {
    return loop.threads();
  }

  // ------------------------------------------------------------------ forward

  private static final String SCORE_FEWER = "score fewer queries per call";

  @Override
  public float[] score(Problem problem, int[] argmax) {
    return score(problem, argmax, kernel);
  }

  private float[] score(Problem problem, int[] argmax, PairKernel kernel) {
    float[] out = new float[problem.pairs()];
    Tokens q = problem.queries();
    Tokens d = problem.documents();
    if (out.length == 0) {
      return out;
    }
    long kept = Float.BYTES * (long) out.length + (argmax == null ? 0 : Integer.BYTES * (long) argmax.length);
    int stride = problem.argmaxStride();
    if (problem.kind() == Problem.Kind.ALL_PAIRS) {
      // Tiles of (documents x queries): a document is loaded once per tile and meets the tile's queries.
      int docGrain = loop.grainFor(d.rows, 1);
      int docChunks = ParallelLoop.chunks(d.rows, docGrain);
      int queryChunks = Math.max(1, Math.min(q.rows, ParallelLoop.chunks(loop.threads() * 4, docChunks)));
      int queryGrain = ParallelLoop.chunks(q.rows, queryChunks);
      queryChunks = ParallelLoop.chunks(q.rows, queryGrain);
      int qc = queryChunks;
      requireWorkingMemory(kernel, q, d, Math.min(loop.threads(), docChunks * qc), kept, fewerQueries(q));
      Workers workers = new Workers(kernel.bind(q, d));
      loop.forRange(docChunks * qc, 1, (from, to) -> {
        PairKernel.Worker w = workers.take();
        for (int tile = from; tile < to; tile++) {
          int d0 = (tile / qc) * docGrain;
          int d1 = ParallelLoop.end(d.rows, docGrain, tile / qc);
          int q0 = (tile % qc) * queryGrain;
          int q1 = ParallelLoop.end(q.rows, queryGrain, tile % qc);
          for (int j = d0; j < d1; j++) {
            scoreDocument(w, problem, j, q0, q1, out, argmax, stride);
          }
        }
        workers.giveBack(w);
      });
    } else {
      // split by pair, not by query: one query's candidates (a reranker's call) are spread over every thread
      int perQuery = problem.documentsPerQuery();
      int grain = loop.grainFor(out.length, 1);
      int running = Math.min(loop.threads(), ParallelLoop.chunks(out.length, grain));
      if (argmax == null && q.rows > 1 && !HeapLimit.fits(kernel.workingMemory(q, d).total(running), kept)) {
        scoreInQueryGroups(problem, out, kernel.fixedFor(q, d));
        return out;
      }
      requireWorkingMemory(kernel, q, d, running, kept, fewerQueries(q));
      Workers workers = new Workers(kernel.bind(q, d));
      loop.forRange(out.length, grain, (from, to) -> {
        PairKernel.Worker w = workers.take();
        for (int p = from; p < to; p++) {
          int i = p / perQuery;
          scoreDocument(w, problem, problem.document(i, p % perQuery), i, i + 1, out, argmax, stride);
        }
        workers.giveBack(w);
      });
    }
    return out;
  }

  /**
   * Pairwise or candidate scores of more queries than the heap holds staged at once: groups of query rows, each
   * staged and scored after the one before, as large as fit (each query meets only its own documents, so no group
   * stages a document or query another stages), by {@code kernel} fixed as for the whole call, so that each score
   * has the bits the call would give it. A group of one query that does not fit is refused as a call would be.
   */
  private void scoreInQueryGroups(Problem problem, float[] out, PairKernel kernel) {
    Tokens q = problem.queries();
    Tokens d = problem.documents();
    int perQuery = problem.documentsPerQuery();
    long held = Float.BYTES * (long) out.length;
    // groups of a quarter of the heap left, by the queries' average row: small arrays, freed group by group
    long perRow = kernel.workingMemory(q, d).queries() / q.rows + groupBytes(1, perQuery);
    int size = (int) Math.max(1, Math.min(q.rows / 2, HeapLimit.room(held) / 4 / perRow));
    for (int from = 0; from < q.rows; ) {
      Problem group = queryGroup(problem, from, Math.min(q.rows, from + size));
      while (size > 1 && !HeapLimit.fits(groupBytes(size, perQuery)
          + kernel.workingMemory(group.queries(), group.documents()).total(loop.threads()), held)) {
        size /= 2;
        group = queryGroup(problem, from, Math.min(q.rows, from + size));
      }
      Problem scored = group;
      int at = from * perQuery;
      HeapLimit.alsoHolding(held + groupBytes(scored.queries().rows, perQuery), () -> {
        float[] s = score(scored, null, kernel);
        System.arraycopy(s, 0, out, at, s.length);
      });
      from += scored.queries().rows;
    }
  }

  /**
   * The advice where the queries' part of a call's working memory is too large: one query (a call's, or the last
   * group's) cannot be fewer, its tokens are what is too many.
   */
  private static String fewerQueries(Tokens q) {
    return q.rows > 1 ? SCORE_FEWER : "score a shorter query (split its tokens over several rows and add their scores)";
  }

  /** What a group of {@code rows} queries holds beside the call: its row arrays, its documents' and its scores. */
  private static long groupBytes(int rows, int perQuery) {
    long documents = (long) rows * perQuery;
    return 3L * Integer.BYTES * (rows + documents) + Float.BYTES * documents + 6 * HeapLimit.ARRAY_OVERHEAD;
  }

  /** Queries {@code [from, to)} of a pairwise or candidates problem, with their documents. */
  private static Problem queryGroup(Problem problem, int from, int to) {
    int k = problem.documentsPerQuery();
    Tokens q = problem.queries().rows(from, to);
    Tokens d = problem.documents().rows(from * k, to * k);
    return problem.kind() == Problem.Kind.PAIRWISE ? Problem.pairwise(q, d) : Problem.candidates(q, d, k);
  }

  /**
   * Refuses a call whose kernel would hold more on {@code running} threads ({@link PairKernel#workingMemory}) than
   * the heap has room for beside the {@code kept} bytes of results the call holds already; returns the kernel's
   * bytes. {@code fewerQueries} is the advice where the queries' part is the larger.
   */
  private long requireWorkingMemory(Tokens q, Tokens d, int running, long kept, String fewerQueries) {
    return requireWorkingMemory(kernel, q, d, running, kept, fewerQueries);
  }

  private static long requireWorkingMemory(PairKernel kernel, Tokens q, Tokens d, int running, long kept,
      String fewerQueries) {
    PairKernel.WorkingMemory m = kernel.workingMemory(q, d);
    long total = m.total(running);
    String instead = m.queries() >= total / 2 ? fewerQueries : running > 1
        ? "split the longest documents, or build the MaxSim with fewer threads"
        : "split the longest documents into shorter rows";
    HeapLimit.requireBytes(total, kept, () -> "the " + kernel.name() + " kernel's working memory for the call: the"
        + " queries staged once (" + q.rows + " rows, " + Arrays.stream(q.validCount).asLongStream().sum()
        + " valid tokens of d = " + q.dim + ", " + m.queries() + " bytes) and a document staged by each of "
        + threads(running) + " (the longest row " + d.maxValidCount + " valid tokens of d = " + d.dim + ", "
        + m.perThread() + " bytes a thread)", instead);
    return total;
  }

  private static String threads(int n) {
    return n + (n == 1 ? " thread" : " threads");
  }

  /** Scores document {@code j} against queries {@code [q0, q1)} that meet it. */
  private static void scoreDocument(PairKernel.Worker w, Problem problem, int j, int q0, int q1,
      float[] out, int[] argmax, int stride) {
    Tokens d = problem.documents();
    if (d.validCount[j] == 0) {
      for (int i = q0; i < q1; i++) {
        int p = problem.pairOf(i, j);
        out[p] = EMPTY_DOCUMENT_SCORE;
        if (argmax != null) {
          Arrays.fill(argmax, p * stride, (p + 1) * stride, NO_ARGMAX);
        }
      }
      return;
    }
    w.load(j);
    for (int i = q0; i < q1; i++) {
      int p = problem.pairOf(i, j);
      if (argmax != null) {
        Arrays.fill(argmax, p * stride, (p + 1) * stride, NO_ARGMAX);
      }
      out[p] = finiteOrReference(w.score(i, argmax, p * stride), problem.queries(), i, d, j, argmax, p * stride);
    }
  }

  /**
   * {@code score} as the kernel gave it, or scored again in float64 where it is infinite or NaN: there an fp32
   * partial sum may have passed fp32's largest value part way and stuck at an infinity (or met one of the other
   * sign and made NaN) where the float64 reference, the contract, stays finite. Checking the result rather than
   * bounding each pair's values first keeps the kernels' loops as they are; a pair whose inputs hold NaN or an
   * infinity gives the same score (and argmax) on both paths. The kernels keep the NaN and tie rules themselves all
   * the same, so that each is right alone and tested so. A NaN score without an argmax whose pair holds a NaN value
   * is taken as NaN: the reference can only say NaN again, and a corpus with a few corrupt tokens would otherwise
   * score each of their pairs at the reference's speed (a scan of the pair's values costs a product's pass over one
   * side, the reference one over both).
   */
  private static float finiteOrReference(float score, Tokens q, int i, Tokens d, int j, int[] argmax, int offset) {
    if (Float.isFinite(score)) {
      return score;
    }
    if (argmax == null && Float.isNaN(score) && (holdsNaN(q, i) || holdsNaN(d, j))) {
      return Float.NaN; // one NaN on every backend, whichever the kernel's order of operations made
    }
    return ReferenceKernel.score(q, i, d, j, argmax, offset);
  }

  /** Whether a valid token of row {@code row} holds a NaN value (for compressed tokens, its dequantized value). */
  static boolean holdsNaN(Tokens t, int row) {
    for (int s = 0; s < t.rowLength[row]; s++) {
      if (!t.isValid(row, s)) {
        continue;
      }
      int token = t.rowStart[row] + s;
      for (int k = 0; k < t.dim; k++) {
        if (Float.isNaN(t.element(token, k))) {
          return true;
        }
      }
    }
    return false;
  }

  // ------------------------------------------------------------------ top-k

  @Override
  public TopKResult topK(Tokens q, Tokens d, int k) {
    int keep = Math.min(k, d.rows);
    if (q.rows == 0 || keep == 0) {
      return new TopKResult(new float[q.rows][0], new int[q.rows][0]);
    }
    int grain = loop.grainFor(d.rows, 1);
    int chunks = ParallelLoop.chunks(d.rows, grain);
    // each chunk keeps at most its own documents and is merged as soon as it is done, so memory stays about
    // (threads + 1) x Nq x k, whatever k and the corpus (the order is total: the merge order does not matter): the
    // merged collector beside a chunk's collector per running thread, then beside the result it is sorted into
    int running = Math.min(loop.threads(), chunks);
    long beside = Math.max(keep, (long) running * Math.min(keep, grain));
    // beside the kernel's working memory, which it holds while the entries are collected
    long working = requireWorkingMemory(q, d, running, 0, "rank the queries in smaller batches");
    HeapLimit.alsoHolding(working, () -> HeapLimit.requireRows(q.rows, keep + beside,
        Float.BYTES + Integer.BYTES, 2 * (1 + Math.max(1, running)), false, "topK's entries held at once, queries x"
        + " (k + max(k, a chunk's k x threads)), k = " + keep + ", " + threads(running), "ask for a smaller k, or"
        + " rank the queries in smaller batches"));
    Workers workers = new Workers(kernel.bind(q, d));
    TopKCollector merged = new TopKCollector(q.rows, keep);
    loop.forRange(chunks, 1, (from, to) -> {
      PairKernel.Worker w = workers.take();
      for (int c = from; c < to; c++) {
        int end = ParallelLoop.end(d.rows, grain, c);
        TopKCollector collector = new TopKCollector(q.rows, Math.min(keep, end - c * grain));
        for (int j = c * grain; j < end; j++) {
          if (d.validCount[j] == 0) {
            for (int i = 0; i < q.rows; i++) {
              collector.offer(i, EMPTY_DOCUMENT_SCORE, j);
            }
            continue;
          }
          w.load(j);
          for (int i = 0; i < q.rows; i++) {
            collector.offer(i, finiteOrReference(w.score(i, null, 0), q, i, d, j, null, 0), j);
          }
        }
        synchronized (merged) {
          merged.mergeFrom(collector);
        }
      }
      workers.giveBack(w);
    });
    return merged.result();
  }

  // ------------------------------------------------------------------ backward

  @Override
  public Gradients backward(Problem problem, int[] argmax, float[] dScores, boolean deterministic) {
    Tokens q = problem.queries();
    Tokens d = problem.documents();
    int dim = q.dim;
    int stride = problem.argmaxStride();
    float[] dq = new float[Math.multiplyExact(q.storedTokens, dim)];
    float[] dd = new float[Math.multiplyExact(d.storedTokens, dim)];
    // dQ: each query owns its rows; its pairs are visited in pair order, so the sum order is fixed. A pair whose
    // dScore is 0 still adds its products, as the GPU does: 0 times an infinite or NaN token is NaN.
    loop.forRange(q.rows, loop.grainFor(q.rows, 1), (from, to) -> {
      for (int i = from; i < to; i++) {
        int slots = q.rowLength[i];
        for (int c = 0; c < problem.documentsPerQuery(); c++) {
          int p = problem.pair(i, c);
          float g = dScores[p];
          int j = problem.document(i, c);
          for (int s = 0; s < slots; s++) {
            int a = argmax[p * stride + s];
            if (a >= 0) {
              Gradient.axpy(g, d, d.rowStart[j] + a, dq, (q.rowStart[i] + s) * dim);
            }
          }
        }
      }
    });
    // dD: each document owns its rows (destination-owned, no atomics); queries visited in index order.
    loop.forRange(d.rows, loop.grainFor(d.rows, 1), (from, to) -> {
      for (int j = from; j < to; j++) {
        for (int i = problem.firstQueryOf(j); i < problem.endQueryOf(j); i++) {
          int p = problem.pairOf(i, j);
          float g = dScores[p];
          for (int s = 0; s < q.rowLength[i]; s++) {
            int a = argmax[p * stride + s];
            if (a >= 0) {
              Gradient.axpy(g, q, q.rowStart[i] + s, dd, (d.rowStart[j] + a) * dim);
            }
          }
        }
      }
    });
    return new Gradients(dq, dd);
  }

  @Override
  public void close() {
    loop.close();
  }
}
