package dev.maxsim4j.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

/** Pool tasks run each index once, and a failure is thrown only once no task is left running, as itself. */
class PoolTasksTest {
  @Test
  void everyTaskRunsOnce() {
    for (int n : new int[] {0, 1, 2, 7, 1000}) {
      AtomicIntegerArray runs = new AtomicIntegerArray(Math.max(1, n));
      PoolTasks.forEach(n, runs::incrementAndGet);
      for (int i = 0; i < n; i++) {
        assertEquals(1, runs.get(i), "task " + i + " of " + n);
      }
    }
  }

  /**
   * With every worker of the common pool busy (an application's tasks, waiting for this caller), the caller runs
   * every task itself and returns: it waited for helpers that no worker was free to start.
   */
  @Test
  void theCallerReturnsWhileEveryWorkerIsBusy() throws InterruptedException {
    int workers = ForkJoinPool.getCommonPoolParallelism();
    CountDownLatch busy = new CountDownLatch(workers);
    CountDownLatch release = new CountDownLatch(1);
    for (int i = 0; i < workers; i++) {
      ForkJoinPool.commonPool().execute(() -> {
        busy.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
    }
    assertTrue(busy.await(10, TimeUnit.SECONDS));
    try {
      AtomicIntegerArray runs = new AtomicIntegerArray(64);
      assertTimeoutPreemptively(Duration.ofSeconds(10), () -> PoolTasks.forEach(64, runs::incrementAndGet));
      for (int i = 0; i < 64; i++) {
        assertEquals(1, runs.get(i), "task " + i);
      }
    } finally {
      release.countDown();
    }
  }

  @Test
  void aFailureIsThrownAsItselfOnceEveryTaskHasEnded() throws InterruptedException {
    AtomicInteger running = new AtomicInteger();
    AtomicInteger ended = new AtomicInteger();
    IllegalStateException failure = new IllegalStateException("task 3 failed");
    IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> PoolTasks.forEach(200, i -> {
      running.incrementAndGet();
      try {
        if (i == 3) {
          throw failure;
        }
        sleep(5); // the others are still running when task 3 throws
      } finally {
        running.decrementAndGet();
        ended.incrementAndGet();
      }
    }));
    assertSame(failure, thrown);
    assertEquals(0, running.get(), "tasks still running after forEach threw");
    int atThrow = ended.get();
    assertTrue(atThrow < 200, "the tasks not begun are skipped: " + atThrow + " ran");
    Thread.sleep(50);
    assertEquals(atThrow, ended.get(), "a task ran after forEach threw");
  }

  @Test
  void insideAPoolTheTasksRunOnThatPoolsThreads() throws Exception {
    ForkJoinPool own = new ForkJoinPool(2);
    try {
      Set<String> threads = ConcurrentHashMap.newKeySet();
      int parallelism = own.submit(() -> {
        PoolTasks.forEach(64, i -> {
          threads.add(Thread.currentThread().getName());
          sleep(1);
        });
        return PoolTasks.parallelism();
      }).get();
      assertEquals(2, parallelism);
      for (String name : threads) {
        assertTrue(!name.startsWith("ForkJoinPool.commonPool"), "a task ran on " + name);
      }
    } finally {
      own.shutdownNow();
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
