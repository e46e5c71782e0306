package dev.maxsim4j.internal.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Hostile checks of the caller-takes-chunks ParallelLoop: exactly once, nothing after return, failures, nesting. */
class HostileParallelLoopTest {

  private static void spin(long nanos) {
    long end = System.nanoTime() + nanos;
    while (System.nanoTime() < end) {
      Thread.onSpinWait();
    }
  }

  /**
   * Many callers share one loop; every item runs exactly once, no body runs once its call has returned (a late
   * helper task included), and plain writes made by any chunk are visible to the caller after return.
   */
  @Test
  @Timeout(30)
  void manyCallersEveryItemOnceNothingAfterReturn() throws Exception {
    for (int threads : new int[] {2, 3, 5}) {
      try (ParallelLoop loop = new ParallelLoop(threads)) {
        AtomicReference<String> bad = new AtomicReference<>();
        ExecutorService callers = Executors.newFixedThreadPool(4);
        List<Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
          int seed = t;
          fs.add(callers.submit(() -> {
            Random rnd = new Random(seed * 31 + threads);
            for (int call = 0; call < 1500; call++) {
              int n = 1 + rnd.nextInt(200);
              int grain = 1 + rnd.nextInt(8);
              int[] hits = new int[n]; // plain writes: visibility comes from the latch only
              AtomicBoolean returned = new AtomicBoolean();
              AtomicInteger running = new AtomicInteger();
              loop.forRange(n, grain, (from, to) -> {
                running.incrementAndGet();
                if (returned.get()) {
                  bad.compareAndSet(null, "a body started after its call returned");
                }
                if (to - from > grain || from < 0 || to > n || from >= to) {
                  bad.compareAndSet(null, "bad chunk [" + from + ", " + to + ") of n=" + n + " grain=" + grain);
                }
                for (int i = from; i < to; i++) {
                  hits[i]++;
                }
                if ((from & 3) == 0) {
                  // a pause that varies the interleavings: a yield gave the core to the host's other processes, and
                  // on a loaded host the test's thousands of yields took minutes
                  spin(2_000);
                }
                running.decrementAndGet();
              });
              if (running.get() != 0) {
                bad.compareAndSet(null, "a body still running when the call returned");
              }
              returned.set(true);
              for (int i = 0; i < n; i++) {
                if (hits[i] != 1) {
                  bad.compareAndSet(null, "item " + i + " of " + n + " ran " + hits[i] + " times");
                }
              }
            }
            return null;
          }));
        }
        for (Future<?> f : fs) {
          f.get(30, TimeUnit.SECONDS);
        }
        callers.shutdown();
        Thread.sleep(50); // late helper tasks drain
        assertNull(bad.get(), "threads=" + threads);
      }
    }
  }

  /** A body that calls forRange on the same loop (on helper and caller threads alike) ends and covers everything. */
  @Test
  @Timeout(30)
  void nestedCallsOnTheSameLoopEnd() throws Exception {
    for (int threads : new int[] {2, 3, 4}) {
      try (ParallelLoop loop = new ParallelLoop(threads)) {
        ExecutorService callers = Executors.newFixedThreadPool(3);
        List<Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
          fs.add(callers.submit(() -> {
            for (int call = 0; call < 200; call++) {
              int[][] hits = new int[16][32];
              loop.forRange(16, 1, (from, to) -> {
                for (int i = from; i < to; i++) {
                  int row = i;
                  loop.forRange(32, 3, (a, b) -> {
                    for (int k = a; k < b; k++) {
                      hits[row][k]++;
                    }
                  });
                }
              });
              for (int[] row : hits) {
                for (int h : row) {
                  assertEquals(1, h);
                }
              }
            }
            return null;
          }));
        }
        for (Future<?> f : fs) {
          f.get(30, TimeUnit.SECONDS);
        }
        callers.shutdown();
      }
    }
  }

  /** A caller that is itself a ForkJoinPool worker (a parallel stream on the common pool). */
  @Test
  @Timeout(30)
  void callersOnTheCommonPool() {
    try (ParallelLoop loop = new ParallelLoop(3)) {
      long sum = IntStream.range(0, 2000).parallel().mapToLong(k -> {
        int n = 1 + k % 97;
        int[] hits = new int[n];
        loop.forRange(n, 1 + k % 5, (from, to) -> {
          for (int i = from; i < to; i++) {
            hits[i]++;
          }
        });
        long s = 0;
        for (int h : hits) {
          s += h;
        }
        assertEquals(n, s);
        return s;
      }).sum();
      assertTrue(sum > 0);
    }
  }

  /** An Error in one chunk wins over an exception thrown first in another, and is the same object. */
  @Test
  @Timeout(30)
  void anErrorThrownAfterAnExceptionIsTheOneThrown() {
    try (ParallelLoop loop = new ParallelLoop(2)) {
      for (int round = 0; round < 200; round++) {
        CountDownLatch exceptionThrown = new CountDownLatch(1);
        AssertionError error = new AssertionError("late error");
        AtomicInteger firstChunk = new AtomicInteger(-1);
        Throwable t = assertThrows(Throwable.class, () -> loop.forRange(2, 1, (from, to) -> {
          if (firstChunk.compareAndSet(-1, from)) {
            // the first chunk taken waits for the other's exception, then throws an Error; where the other thread
            // was too slow to take its chunk meanwhile, the Error still comes first and that chunk is dropped
            try {
              exceptionThrown.await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              throw new RuntimeException(e);
            }
            throw error;
          }
          try {
            throw new IllegalArgumentException("first exception");
          } finally {
            exceptionThrown.countDown();
          }
        }));
        assertSame(error, t);
      }
    }
  }

  /** Several chunks failing at once: one of their own exceptions, as itself, and nothing runs after return. */
  @Test
  @Timeout(30)
  void severalChunksFailingAtOnce() {
    try (ParallelLoop loop = new ParallelLoop(4)) {
      for (int round = 0; round < 500; round++) {
        List<RuntimeException> thrown = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicInteger running = new AtomicInteger();
        RuntimeException e = assertThrows(RuntimeException.class, () -> loop.forRange(64, 1, (from, to) -> {
          running.incrementAndGet();
          try {
            RuntimeException x = new IllegalStateException("chunk " + from);
            thrown.add(x);
            throw x;
          } finally {
            running.decrementAndGet();
          }
        }));
        assertEquals(0, running.get());
        assertTrue(thrown.contains(e), "not one of the chunks' own exceptions: " + e);
      }
    }
  }

  /** A checked exception thrown sneakily from a chunk: wrapped in IllegalStateException with it as the cause. */
  @Test
  void aSneakyCheckedExceptionIsWrappedWithItsCause() {
    Exception checked = new java.io.IOException("disk");
    try (ParallelLoop loop = new ParallelLoop(2)) {
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> loop.forRange(8, 1, (from, to) -> HostileParallelLoopTest.<RuntimeException>sneaky(checked)));
      assertSame(checked, e.getCause());
    }
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> void sneaky(Throwable t) throws T {
    throw (T) t;
  }

  /** Interrupted before the call: no chunk runs on the caller, it throws after the helper's chunks, keeps it. */
  @Test
  @Timeout(30)
  void interruptedBeforeTheCall() {
    try (ParallelLoop loop = new ParallelLoop(3)) {
      for (int round = 0; round < 100; round++) {
        AtomicInteger running = new AtomicInteger();
        Thread me = Thread.currentThread();
        AtomicBoolean ranOnCaller = new AtomicBoolean();
        me.interrupt();
        assertThrows(IllegalStateException.class, () -> loop.forRange(50, 1, (from, to) -> {
          running.incrementAndGet();
          if (Thread.currentThread() == me) {
            ranOnCaller.set(true);
          }
          spin(200_000);
          running.decrementAndGet();
        }));
        assertTrue(Thread.interrupted(), "the caller keeps its interrupt");
        assertEquals(0, running.get());
        assertFalse(ranOnCaller.get());
      }
    }
  }

  /**
   * forRange's contract: "after an interrupt of the caller chunks not taken yet never run". The caller is
   * interrupted while it runs a chunk of its own (100 ms): the helper, on 1 ms chunks, must stop taking new ones at
   * once rather than when the caller's chunk ends. One chunk may have been taken in the instant before the
   * interrupt and start just after it.
   */
  @Test
  @Timeout(30)
  void chunksNotTakenWhenTheCallerIsInterruptedNeverRun() throws Exception {
    try (ParallelLoop loop = new ParallelLoop(2)) {
      AtomicInteger takenAfterInterrupt = new AtomicInteger();
      AtomicBoolean interrupted = new AtomicBoolean();
      AtomicReference<Throwable> thrown = new AtomicReference<>();
      Thread caller = new Thread(() -> {
        Thread me = Thread.currentThread();
        try {
          loop.forRange(1000, 1, (from, to) -> {
            if (interrupted.get()) {
              takenAfterInterrupt.incrementAndGet();
            }
            if (Thread.currentThread() == me && !interrupted.get()) {
              me.interrupt();          // the interrupt arrives while the caller computes a chunk
              interrupted.set(true);
              spin(100_000_000L);      // 100 ms of the caller's own chunk
            } else {
              spin(1_000_000L);        // 1 ms chunks on the helper
            }
          });
        } catch (Throwable t) {
          thrown.set(t);
        }
      });
      caller.start();
      caller.join(20_000);
      assertTrue(thrown.get() instanceof IllegalStateException, String.valueOf(thrown.get()));
      assertTrue(takenAfterInterrupt.get() <= 1,
          "chunks first taken after the caller's interrupt still ran: " + takenAfterInterrupt.get());
    }
  }

  /**
   * A call whose caller is interrupted throws, and the caller keeps its interrupt, whether its chunks run on the
   * caller alone (one thread, or one chunk) or are shared: it ran to its end alone and threw shared, so the same
   * call's outcome followed the thread count and the input's size.
   */
  @Test
  void anInterruptedCallThrowsWhateverTheThreadsAndChunks() {
    for (int threads : new int[] {1, 2}) {
      for (int grain : new int[] {1, 8}) {
        try (ParallelLoop loop = new ParallelLoop(threads)) {
          AtomicInteger ran = new AtomicInteger();
          Thread.currentThread().interrupt();
          IllegalStateException e;
          try {
            e = assertThrows(IllegalStateException.class,
                () -> loop.forRange(8, grain, (from, to) -> ran.incrementAndGet()));
          } finally {
            assertTrue(Thread.interrupted(), "threads=" + threads + ": the caller lost its interrupt");
          }
          assertEquals("interrupted while scoring", e.getMessage());
          assertEquals(0, ran.get(), "threads=" + threads + ", grain=" + grain + ": chunks ran after the interrupt");
        }
      }
    }
  }

  /**
   * Interrupted while a chunk runs on the caller alone, a call takes no other chunk and throws once it has ended,
   * with one chunk or several; a chunk that fails after the interrupt is the cause, as where chunks are shared.
   */
  @Test
  void anInterruptDuringAChunkOnTheCallerAloneStopsTheRestAndThrows() {
    try (ParallelLoop loop = new ParallelLoop(1)) {
      for (int grain : new int[] {1, 3}) {
        AtomicInteger ran = new AtomicInteger();
        try {
          assertThrows(IllegalStateException.class, () -> loop.forRange(3, grain, (from, to) -> {
            ran.incrementAndGet();
            Thread.currentThread().interrupt();
          }));
        } finally {
          assertTrue(Thread.interrupted(), "the caller lost its interrupt");
        }
        assertEquals(1, ran.get(), "grain " + grain + ": chunks taken after the interrupt");
      }
      IllegalArgumentException failure = new IllegalArgumentException("bad chunk");
      IllegalStateException e;
      try {
        e = assertThrows(IllegalStateException.class, () -> loop.forRange(3, 3, (from, to) -> {
          Thread.currentThread().interrupt();
          throw failure;
        }));
      } finally {
        assertTrue(Thread.interrupted(), "the caller lost its interrupt");
      }
      assertEquals("interrupted while scoring", e.getMessage());
      assertSame(failure, e.getCause());
    }
  }

  /** close() (shutdownNow: helpers interrupted, queued tasks dropped) while calls run: every call still ends whole. */
  @Test
  @Timeout(30)
  void closeWhileCallsRunStillRunsEveryChunkOnce() throws Exception {
    for (int round = 0; round < 20; round++) {
      ParallelLoop loop = new ParallelLoop(3);
      ExecutorService callers = Executors.newFixedThreadPool(3);
      CountDownLatch started = new CountDownLatch(3);
      List<Future<?>> fs = new ArrayList<>();
      for (int t = 0; t < 3; t++) {
        fs.add(callers.submit(() -> {
          started.countDown();
          for (int call = 0; call < 50; call++) {
            int[] hits = new int[64];
            loop.forRange(64, 1, (from, to) -> {
              spin(20_000);
              hits[from]++;
            });
            for (int h : hits) {
              assertEquals(1, h);
            }
          }
          return null;
        }));
      }
      started.await();
      Thread.sleep(5);
      loop.close();
      for (Future<?> f : fs) {
        f.get(20, TimeUnit.SECONDS);
      }
      callers.shutdown();
    }
  }
}
