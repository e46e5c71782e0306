package dev.maxsim4j.internal;

import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/** Waiting for a pool an instance's close has shut down, so that none of its threads outlives the close. */
public final class Termination {
  private Termination() {}

  /**
   * Waits up to {@code limit} for {@code pool} to terminate and {@code threads} (its threads) to end. An interrupt
   * does not cut the wait short: a close in a cancelled task's finally block would otherwise return with the threads
   * alive; it is set again once the wait ends.
   */
  public static void await(ExecutorService pool, Collection<Thread> threads, Duration limit) {
    long deadline = System.nanoTime() + limit.toNanos();
    boolean interrupted = false;
    while (true) {
      try {
        pool.awaitTermination(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        for (Thread t : threads) {
          t.join(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
        }
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
