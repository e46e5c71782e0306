package dev.maxsim4j.bench.cpu;

import dev.maxsim4j.cli.UsageException;
import dev.maxsim4j.cli.io.Counts;
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

  /**
   * Refuses shape {@code s} where the per-pair products, one Lq x Ld array per thread, cannot be held: past one
   * array's size their int length wrapped, and past the heap they failed in the workers after the fused kernel ran.
   */
  static void checkPerPair(String command, String s, int[] sh, int threads) {
    long product = (long) sh[2] * sh[3];
    // the products beside the fp32 inputs, which the fused runs and sgemm read from one array a side
    long bytes = Float.BYTES * (product * threads + ((long) sh[0] * sh[2] + (long) sh[1] * sh[3]) * sh[4]);
    if (product > MAX_OUTPUT || bytes > Runtime.getRuntime().maxMemory()) {
      throw new UsageException(command + ": --sgemm with --shape '" + s + "': a product of Lq x Ld = "
          + Counts.of(product, "float") + " on each of " + Counts.of(threads, "thread") + " and the fp32 inputs need "
          + (bytes >> 20) + " MiB; expected"
          + " products of at most " + MAX_OUTPUT + " floats within the heap of "
          + (Runtime.getRuntime().maxMemory() >> 20) + " MiB (fewer --threads, or -Xmx through JAVA_OPTS)");
    }
  }

  /** One sgemm per (query, document) pair, the pairs split over the threads, OpenBLAS single-threaded in each. */
  Runnable perPair(int[] sh, float[] queries, float[] documents) {
    return () -> {
      blas.threads(1);
      perPair(sh[0], sh[1], sh[2], sh[3], sh[4], queries, documents);
    };
  }

  /**
   * One sgemm of all pairs at once, threaded by OpenBLAS; null when its output would not fit one array, or the heap
   * beside the fp32 inputs and their copies in the benchmarked type, at most as large (else the run ended in an
   * OutOfMemoryError, its rows lost).
   */
  Runnable whole(int[] sh, float[] queries, float[] documents) {
    long out = (long) sh[0] * sh[2] * sh[1] * sh[3];
    long held = 2L * Float.BYTES * ((long) queries.length + documents.length);
    if (out > MAX_OUTPUT || Float.BYTES * out + held > Runtime.getRuntime().maxMemory()) {
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
