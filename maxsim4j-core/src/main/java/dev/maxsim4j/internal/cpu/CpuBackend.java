package dev.maxsim4j.internal.cpu;

import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.Problem;
import dev.maxsim4j.internal.Tokens;
import java.util.Arrays;

/**
 * A CPU backend: one {@link PairKernel} driven over a fixed thread pool. Work is split by document (all
 * pairs) or by query (pairwise, candidates), so each loaded document serves every query that meets it and
 * no Nq x Nd x Lq x Ld buffer ever exists; extra memory is one document and one query block per thread.
 */
public final class CpuBackend implements Backend {
  /** Documents scored per top-k block: bounds the per-thread score buffer to Nq x this. */
  private static final int TOPK_BLOCK = 256;

  private final PairKernel kernel;
  private final ParallelLoop loop;

  CpuBackend(PairKernel kernel, int threads) {
    this.kernel = kernel;
    this.loop = new ParallelLoop(threads);
  }

  public static CpuBackend reference(int threads) {
    return new CpuBackend(new ReferenceKernel(), threads);
  }

  public static CpuBackend scalar(int threads) {
    return new CpuBackend(new ScalarKernel(), threads);
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

  @Override
  public float[] score(Problem problem, int[] argmax) {
    float[] out = new float[problem.pairs()];
    Tokens q = problem.queries();
    Tokens d = problem.documents();
    if (out.length == 0) {
      return out;
    }
    PairKernel.Bound bound = kernel.bind(q, d);
    Range range = new Range(q, d);
    int stride = problem.argmaxStride();
    if (problem.kind() == Problem.Kind.ALL_PAIRS) {
      // Tiles of (documents x queries): a document is loaded once per tile and meets the tile's queries.
      int docGrain = loop.grainFor(d.rows, 1);
      int docChunks = (d.rows + docGrain - 1) / docGrain;
      int queryChunks = Math.max(1, Math.min(q.rows, (loop.threads() * 4 + docChunks - 1) / docChunks));
      int queryGrain = (q.rows + queryChunks - 1) / queryChunks;
      queryChunks = (q.rows + queryGrain - 1) / queryGrain;
      int qc = queryChunks;
      loop.forRange(docChunks * qc, 1, (from, to) -> {
        PairKernel.Worker w = bound.newWorker();
        for (int tile = from; tile < to; tile++) {
          int d0 = (tile / qc) * docGrain;
          int d1 = Math.min(d.rows, d0 + docGrain);
          int q0 = (tile % qc) * queryGrain;
          int q1 = Math.min(q.rows, q0 + queryGrain);
          for (int j = d0; j < d1; j++) {
            scoreDocument(w, range, problem, j, q0, q1, out, argmax, stride);
          }
        }
      });
    } else {
      int perQuery = problem.documentsPerQuery();
      loop.forRange(q.rows, loop.grainFor(q.rows, 1), (from, to) -> {
        PairKernel.Worker w = bound.newWorker();
        for (int i = from; i < to; i++) {
          for (int c = 0; c < perQuery; c++) {
            scoreDocument(w, range, problem, problem.document(i, c), i, i + 1, out, argmax, stride);
          }
        }
      });
    }
    return out;
  }

  /** Scores document {@code j} against queries {@code [q0, q1)} that meet it. */
  private void scoreDocument(PairKernel.Worker w, Range range, Problem problem, int j, int q0, int q1,
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
    double magnitude = range.exact ? 0 : w.documentMagnitude();
    for (int i = q0; i < q1; i++) {
      int p = problem.pairOf(i, j);
      if (argmax != null) {
        Arrays.fill(argmax, p * stride, (p + 1) * stride, NO_ARGMAX);
      }
      out[p] = range.score(w, magnitude, i, j, argmax, p * stride);
    }
  }

  // ------------------------------------------------------------------ top-k

  @Override
  public TopKResult topK(Tokens q, Tokens d, int k) {
    int keep = Math.min(k, d.rows);
    if (q.rows == 0 || keep == 0) {
      return new TopKResult(new float[q.rows][0], new int[q.rows][0]);
    }
    PairKernel.Bound bound = kernel.bind(q, d);
    Range range = new Range(q, d);
    int grain = Math.max(TOPK_BLOCK, loop.grainFor(d.rows, 1));
    int chunks = (d.rows + grain - 1) / grain;
    // each chunk keeps at most its own documents and is merged as soon as it is done, so memory stays about
    // (threads + 1) x Nq x k, whatever k and the corpus (the order is total: the merge order does not matter)
    TopKCollector merged = new TopKCollector(q.rows, keep);
    loop.forRange(chunks, 1, (from, to) -> {
      PairKernel.Worker w = bound.newWorker();
      for (int c = from; c < to; c++) {
        int end = Math.min(d.rows, (c + 1) * grain);
        TopKCollector collector = new TopKCollector(q.rows, Math.min(keep, end - c * grain));
        for (int j = c * grain; j < end; j++) {
          if (d.validCount[j] == 0) {
            for (int i = 0; i < q.rows; i++) {
              collector.offer(i, EMPTY_DOCUMENT_SCORE, j);
            }
            continue;
          }
          w.load(j);
          double magnitude = range.exact ? 0 : w.documentMagnitude();
          for (int i = 0; i < q.rows; i++) {
            collector.offer(i, range.score(w, magnitude, i, j, null, 0), j);
          }
        }
        synchronized (merged) {
          merged.mergeFrom(collector);
        }
      }
    });
    return merged.result();
  }

  /**
   * Where a kernel's fp32 dot products may leave fp32's range: there an overflowed partial sum sticks at an
   * infinity (and infinities of both signs sum to NaN) where the float64 reference, the contract, stays finite, so
   * such a pair is scored in float64 instead. A pair is safe when its largest query token |values| sum times the
   * document's largest |value|, widened by the fp32 roundings of a d-term sum, stays below fp32's largest; a pair
   * holding NaN scores NaN on either path and stays on the kernel.
   */
  private final class Range {
    final boolean exact;
    private final Tokens queries;
    private final Tokens documents;
    private final double[] queryNorm;
    private final double slack;

    Range(Tokens queries, Tokens documents) {
      this.queries = queries;
      this.documents = documents;
      this.exact = kernel instanceof ReferenceKernel;
      this.queryNorm = exact ? null : largestNorms(queries);
      this.slack = Math.exp((queries.dim + 8) * 0x1p-23); // (1 + 2^-24)^(d + 8), with room to spare
    }

    float score(PairKernel.Worker w, double documentMagnitude, int i, int j, int[] argmax, int offset) {
      double norm = exact ? 0 : queryNorm[i];
      if (Double.isNaN(norm) || Double.isNaN(documentMagnitude)
          || norm * documentMagnitude * slack <= Float.MAX_VALUE) {
        return w.score(i, argmax, offset);
      }
      return (float) ReferenceKernel.maxSim(queries, i, documents, j, argmax, offset);
    }

    /** Per row, the largest sum of |values| over its valid tokens, dequantized; NaN where a valid value is NaN. */
    private static double[] largestNorms(Tokens t) {
      double[] norms = new double[t.rows];
      for (int i = 0; i < t.rows; i++) {
        double largest = 0;
        for (int s = 0; s < t.rowLength[i]; s++) {
          if (!t.isValid(i, s)) {
            continue;
          }
          double sum = 0;
          for (int k = 0; k < t.dim; k++) {
            sum += Math.abs(t.value(t.rowStart[i] + s, k));
          }
          largest = Math.max(largest, sum);
          if (Double.isNaN(largest)) {
            break;
          }
        }
        norms[i] = largest;
      }
      return norms;
    }
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
