package dev.maxsim4j.internal.cpu;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs {@code [0, n)} in contiguous chunks on a fixed pool. The grain (from {@link #grainFor}) depends on the
 * thread count, so a body must compute each item the same way whatever chunk holds it (the callers' items own
 * their output rows): that keeps every result the same on any pool size.
 */
final class ParallelLoop implements AutoCloseable {

  interface RangeBody {
    void run(int from, int to);
  }

  private final int threads;
  private final ForkJoinPool pool;

  ParallelLoop(int threads) {
    if (threads < 1) {
      throw new IllegalArgumentException("threads = " + threads + "; expected >= 1");
    }
    this.threads = threads;
    this.pool = threads == 1 ? null : new ForkJoinPool(threads, ForkJoinPool.defaultForkJoinWorkerThreadFactory, null, false);
  }

  int threads() {
    return threads;
  }

  /** Splits {@code [0, n)} into chunks of {@code grain} items and runs them; rethrows the first failure. */
  void forRange(int n, int grain, RangeBody body) {
    if (n <= 0) {
      return;
    }
    int g = Math.max(1, grain);
    int chunks = chunks(n, g);
    if (pool == null || chunks == 1) {
      for (int c = 0; c < chunks; c++) {
        body.run(c * g, end(n, g, c));
      }
      return;
    }
    List<Future<?>> futures = new ArrayList<>(chunks);
    AtomicBoolean stopped = new AtomicBoolean(); // set when the call gives up: chunks not started yet skip
    for (int c = 0; c < chunks; c++) {
      int from = c * g;
      int to = end(n, g, c);
      try {
        futures.add(pool.submit(() -> {
          if (!stopped.get()) {
            body.run(from, to);
          }
        }));
      } catch (RejectedExecutionException e) {
        stopped.set(true);
        awaitAll(futures);
        throw new IllegalStateException("MaxSim was closed while this call was running", e);
      }
    }
    // every chunk is waited for before anything is thrown: none may still run once the call has returned
    Throwable failure = null;
    for (Future<?> f : futures) {
      try {
        f.get();
      } catch (CancellationException e) {
        throw new IllegalStateException("MaxSim was closed while this call was running", e);
      } catch (ExecutionException e) {
        Throwable cause = e.getCause();
        if (cause != null && cause.getCause() != null && cause.getCause().getClass() == cause.getClass()) {
          cause = cause.getCause(); // the pool's copy made on this thread wraps the worker's own, with its message
        }
        // an Error (an OutOfMemoryError) stays one, so that callers can tell it from a bad argument
        if (failure == null || cause instanceof Error && !(failure instanceof Error)) {
          failure = cause instanceof RuntimeException || cause instanceof Error ? cause
              : new IllegalStateException(cause);
        }
      } catch (InterruptedException e) {
        stopped.set(true);
        awaitAll(futures);
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while scoring", e);
      }
    }
    if (failure instanceof Error error) {
      throw error;
    }
    if (failure != null) {
      throw (RuntimeException) failure;
    }
  }

  /**
   * Waits for every chunk to end (those not started end at once once stopped), whatever interrupts this thread
   * meanwhile, and keeps its interrupt status: the caller's buffers must outlive every chunk that reads them.
   */
  private static void awaitAll(List<Future<?>> futures) {
    boolean interrupted = false;
    for (Future<?> f : futures) {
      while (true) {
        try {
          f.get();
          break;
        } catch (InterruptedException again) {
          interrupted = true;
        } catch (ExecutionException | CancellationException ended) {
          break;
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** A grain that gives each thread several chunks (load balance) but chunks of at least {@code min}. */
  int grainFor(int n, int min) {
    return Math.max(min, chunks(n, threads * 4));
  }

  /**
   * How many chunks of {@code grain} items {@code [0, n)} holds, {@code ceil(n / grain)}: in long, since
   * {@code n + grain - 1} passes 2^31 for n near the largest array and wrapped to a negative count.
   */
  static int chunks(int n, int grain) {
    return (int) (((long) n + grain - 1) / grain);
  }

  /** One past the last item of chunk {@code c}: {@code (c + 1) x grain}, which can pass 2^31, or {@code n}. */
  static int end(int n, int grain, int c) {
    return (int) Math.min(n, (c + 1L) * grain);
  }

  @Override
  public void close() {
    if (pool != null) {
      pool.shutdownNow();
    }
  }
}
