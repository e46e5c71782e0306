package dev.maxsim4j.internal;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;

/**
 * Tasks {@code [0, n)} on a fork-join pool's threads and the caller's, for work that has no threads of its own: the
 * pool of the worker that calls (so a caller that bounds its parallelism with a pool of its own keeps it), else the
 * common pool. Unlike a parallel stream, which rethrows the first failure at once while the other tasks run on, a
 * failure stops the tasks not yet begun and is thrown once every task has ended: nothing the tasks read or write is
 * still in use when the caller goes on (closes a file, frees memory).
 */
public final class PoolTasks {
  private PoolTasks() {}

  /** The threads {@link #forEach} runs tasks on at most. */
  public static int parallelism() {
    ForkJoinPool pool = ForkJoinTask.getPool();
    return pool != null ? pool.getParallelism() : ForkJoinPool.getCommonPoolParallelism() + 1;
  }

  /**
   * Runs {@code task} for each of {@code [0, n)} and returns once all have run; where one throws, the tasks not yet
   * begun are skipped, and once the others have ended its exception is thrown (the original object; later ones are
   * suppressed in it).
   */
  public static void forEach(int n, IntConsumer task) {
    forEach(n, Integer.MAX_VALUE, task);
  }

  /** As {@link #forEach(int, IntConsumer)} on at most {@code threads} threads, the caller's among them. */
  public static void forEach(int n, int threads, IntConsumer task) {
    AtomicInteger next = new AtomicInteger();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Runnable strand = () -> {
      try {
        for (int i; failure.get() == null && (i = next.getAndIncrement()) < n; ) {
          task.accept(i);
        }
      } catch (RuntimeException | Error e) {
        Throwable first = failure.compareAndExchange(null, e);
        if (first != null && first != e) {
          first.addSuppressed(e);
        }
      }
    };
    ForkJoinPool pool = ForkJoinTask.inForkJoinPool() ? ForkJoinTask.getPool() : ForkJoinPool.commonPool();
    int helpers = Math.max(0, Math.min(Math.min(n, threads), parallelism()) - 1);
    ForkJoinTask<?>[] started = new ForkJoinTask<?>[helpers];
    // a helper runs its strand only once it has claimed it; one the caller claims first (no worker was free to start
    // it: the pool's threads all busy, perhaps waiting for this caller) is not waited for, as it will do nothing
    AtomicBoolean[] claimed = new AtomicBoolean[helpers];
    int made = 0;
    try {
      for (; made < helpers; made++) {
        AtomicBoolean claim = new AtomicBoolean();
        claimed[made] = claim;
        started[made] = pool.submit(() -> {
          if (claim.compareAndSet(false, true)) {
            strand.run();
          }
        });
      }
    } catch (RuntimeException | Error e) { // fewer helpers: the caller's strand takes their tasks
    }
    strand.run();
    for (int h = 0; h < made; h++) {
      if (!claimed[h].compareAndSet(false, true)) {
        started[h].join(); // running: a strand catches what its tasks throw, so this returns once it has ended
      }
    }
    Throwable f = failure.get();
    if (f instanceof RuntimeException e) {
      throw e;
    } else if (f instanceof Error e) {
      throw e;
    }
  }
}
