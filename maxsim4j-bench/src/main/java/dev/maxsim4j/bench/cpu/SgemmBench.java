package dev.maxsim4j.bench.cpu;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * OpenBLAS sgemm on the FLOPs of a MaxSim call, {@code Nq·Nd} products of {@code Lq × Ld × d}, timed two ways:
 * one sgemm per (query, document) pair with the pairs split over the threads (OpenBLAS single-threaded in
 * each), and one sgemm of {@code (Nq·Lq) × (Nd·Ld) × d} threaded by OpenBLAS itself. Neither takes the max:
 * this is the dense matrix product a fused kernel is up against. The calls are returned, not timed here, so
 * the caller times them in the same rounds as the kernel.
 */
final class SgemmBench implements AutoCloseable {
  /** The whole-product output is one Java array. */
  private static final long MAX_OUTPUT = Integer.MAX_VALUE - 8;

  private final OpenBlas blas;
  private final int threads;
  private final ExecutorService pool;

  SgemmBench(OpenBlas blas, int threads) {
    this.blas = blas;
    this.threads = threads;
    this.pool = Executors.newFixedThreadPool(threads);
  }

  /** One sgemm per (query, document) pair, the pairs split over the threads, OpenBLAS single-threaded in each. */
  Runnable perPair(int[] sh, float[] queries, float[] documents) {
    return () -> {
      blas.threads(1);
      perPair(sh[0], sh[1], sh[2], sh[3], sh[4], queries, documents);
    };
  }

  /** One sgemm of all pairs at once, threaded by OpenBLAS; null when its output would not fit one array. */
  Runnable whole(int[] sh, float[] queries, float[] documents) {
    long out = (long) sh[0] * sh[2] * sh[1] * sh[3];
    if (out > MAX_OUTPUT) {
      return null;
    }
    float[] c = new float[(int) out];
    return () -> {
      blas.threads(threads);
      blas.sgemmNt(sh[0] * sh[2], sh[1] * sh[3], sh[4], queries, 0, documents, 0, c, 0);
    };
  }

  /** Document-major like the fused kernel: each thread takes a contiguous run of documents. */
  private void perPair(int nq, int nd, int lq, int ld, int d, float[] queries, float[] documents) {
    List<Future<?>> parts = new ArrayList<>(threads);
    for (int p = 0; p < threads; p++) {
      int from = (int) ((long) nd * p / threads);
      int to = (int) ((long) nd * (p + 1) / threads);
      parts.add(pool.submit(() -> {
        float[] c = new float[lq * ld];
        for (int j = from; j < to; j++) {
          for (int i = 0; i < nq; i++) {
            blas.sgemmNt(lq, ld, d, queries, i * lq * d, documents, j * ld * d, c, 0);
          }
        }
      }));
    }
    for (Future<?> f : parts) {
      try {
        f.get();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      } catch (ExecutionException e) {
        throw new IllegalStateException("sgemm failed", e.getCause());
      }
    }
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }
}
