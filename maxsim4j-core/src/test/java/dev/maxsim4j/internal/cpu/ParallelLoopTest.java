package dev.maxsim4j.internal.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Who runs a call's chunks, and how failures on the pool's threads reach the caller. */
class ParallelLoopTest {
  /**
   * The calling thread takes chunks too: a call does not wait for a helper to wake before its first chunk starts,
   * and with every helper busy elsewhere (here: blocked) it still ends, on the caller alone.
   */
  @Test
  @Timeout(60)
  void theCallerTakesChunksAndEndsACallWhileTheHelperIsBusy() throws Exception {
    try (ParallelLoop loop = new ParallelLoop(2)) {
      CountDownLatch release = new CountDownLatch(1);
      CountDownLatch helperBlocked = new CountDownLatch(1);
      // another call's two chunks: its caller takes one and waits until the helper holds the other
      Thread other = new Thread(() -> loop.forRange(2, 1, (from, to) -> {
        try {
          if (Thread.currentThread().getName().startsWith("ForkJoinPool")) {
            helperBlocked.countDown();
            release.await();
          } else {
            helperBlocked.await();
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }));
      other.start();
      helperBlocked.await();
      Set<Thread> ranOn = ConcurrentHashMap.newKeySet();
      AtomicInteger items = new AtomicInteger();
      loop.forRange(64, 1, (from, to) -> {
        ranOn.add(Thread.currentThread());
        items.addAndGet(to - from);
      });
      assertEquals(64, items.get());
      assertEquals(Set.of(Thread.currentThread()), ranOn, "a chunk ran on the blocked helper");
      release.countDown();
      other.join(10_000);
    }
  }

  /**
   * Helpers the process cannot start (its thread limit reached: the pool's making of one throws) leave their chunks
   * to the threads there are: every call ends with every item run once, and nothing is printed. Such a failure on a
   * helper starting another one printed its stack trace from the pool's thread, and one on the caller failed the
   * call. The first calls' chunks wait until the pool has asked for a third helper: a pool whose first helper ran
   * every chunk of a quick call never needs another, and the test would not reach the failure it is about.
   */
  @Test
  @Timeout(60)
  void helpersThatCannotStartLeaveTheirChunksToTheOthers() {
    AtomicInteger asked = new AtomicInteger();
    java.io.PrintStream err = System.err;
    java.io.ByteArrayOutputStream printed = new java.io.ByteArrayOutputStream();
    System.setErr(new java.io.PrintStream(printed, true));
    long demandUntil = System.nanoTime() + 20_000_000_000L;
    try (ParallelLoop loop = new ParallelLoop(16, helper -> {
      if (asked.incrementAndGet() > 2) {
        throw new OutOfMemoryError("unable to create native thread: possibly out of memory or process limits");
      }
    })) {
      for (int call = 0; call < 50; call++) {
        int[] runs = new int[997];
        loop.forRange(runs.length, 1, (from, to) -> {
          for (int i = from; i < to; i++) {
            runs[i]++;
          }
          while (asked.get() <= 2 && System.nanoTime() < demandUntil) {
            Thread.onSpinWait(); // busy chunks keep the queued shares waiting, so the pool asks for more helpers
          }
        });
        for (int i = 0; i < runs.length; i++) {
          assertEquals(1, runs[i], "call " + call + ", item " + i);
        }
      }
    } finally {
      System.setErr(err);
    }
    assertEquals("", printed.toString(), "printed by the pool's threads");
    assertTrue(asked.get() > 2, "more helpers were asked for than could start: " + asked.get());
  }

  /**
   * Where no helper can start, a call's task stays in the pool's queue: it holds nothing of the call once the call
   * has ended. It held the body and with it the caller's arrays, one call's more each time, until the heap ran out.
   */
  @Test
  @Timeout(60)
  void aTaskNoHelperTookHoldsNothingOfItsEndedCall() throws InterruptedException {
    try (ParallelLoop loop = new ParallelLoop(4, helper -> {
      throw new OutOfMemoryError("unable to create native thread");
    })) {
      java.lang.ref.WeakReference<long[]> held = callWithABuffer(loop);
      for (int i = 0; i < 100 && held.get() != null; i++) {
        System.gc();
        Thread.sleep(10);
      }
      assertEquals(null, held.get(), "the ended call's buffer is still reachable");
    }
  }

  private static java.lang.ref.WeakReference<long[]> callWithABuffer(ParallelLoop loop) {
    long[] buffer = new long[1 << 17];
    loop.forRange(64, 1, (from, to) -> buffer[from]++);
    assertEquals(1, buffer[63]);
    return new java.lang.ref.WeakReference<>(buffer);
  }

  @Test
  void anErrorOnAWorkerStaysThatError() {
    try (ParallelLoop loop = new ParallelLoop(2)) {
      // wrapped in an IllegalStateException, a heap exhaustion would read like a misuse of the instance
      OutOfMemoryError e = assertThrows(OutOfMemoryError.class, () -> loop.forRange(8, 1, (from, to) -> {
        throw new OutOfMemoryError("Java heap space");
      }));
      assertEquals("Java heap space", e.getMessage());
    }
  }

  @Test
  void aRuntimeExceptionOnAWorkerIsRethrownAsIs() {
    try (ParallelLoop loop = new ParallelLoop(2)) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> loop.forRange(8, 1,
          (from, to) -> {
            throw new IllegalArgumentException("bad row " + from);
          }));
      assertEquals("bad row", e.getMessage().substring(0, 7));
    }
  }

  /**
   * An interrupted call throws only after every chunk has ended (the chunks not started yet do not run), and the
   * caller's thread keeps its interrupt.
   */
  @Test
  void anInterruptedCallReturnsOnlyAfterEveryChunkHasEnded() throws Exception {
    try (ParallelLoop loop = new ParallelLoop(2)) {
      AtomicInteger running = new AtomicInteger();
      AtomicInteger started = new AtomicInteger();
      AtomicReference<Throwable> thrown = new AtomicReference<>();
      AtomicInteger runningAfter = new AtomicInteger(-1);
      AtomicBoolean keptInterrupt = new AtomicBoolean();
      CountDownLatch firstChunk = new CountDownLatch(1);
      AtomicBoolean interruptSent = new AtomicBoolean();
      long giveUp = System.nanoTime() + 60_000_000_000L;
      Thread caller = new Thread(() -> {
        try {
          loop.forRange(64, 1, (from, to) -> {
            running.incrementAndGet();
            started.incrementAndGet();
            firstChunk.countDown();
            // 50 ms of work that ignores interrupts, and no chunk ends before the interrupt: a call slowed past a
            // fixed wait would have ended whole before it
            long end = System.nanoTime() + 50_000_000L;
            while ((System.nanoTime() < end || !interruptSent.get()) && System.nanoTime() < giveUp) {
              Thread.onSpinWait();
            }
            running.decrementAndGet();
          });
        } catch (Throwable t) {
          thrown.set(t);
          runningAfter.set(running.get());
          keptInterrupt.set(Thread.currentThread().isInterrupted());
        }
      });
      caller.start();
      firstChunk.await();
      caller.interrupt();
      interruptSent.set(true);
      caller.join(10_000);
      assertEquals(IllegalStateException.class, thrown.get().getClass(), String.valueOf(thrown.get()));
      assertEquals(0, runningAfter.get(), "chunks still running when the call threw");
      assertEquals(true, keptInterrupt.get(), "the caller keeps its interrupt");
      Thread.sleep(120);
      assertEquals(true, started.get() < 64, "chunks not started when the call gave up never run: " + started.get());
    }
  }

  /** No chunk may still be running once a failed call has returned (its buffers may be reused or freed). */
  @Test
  void aFailedCallReturnsOnlyAfterEveryChunkHasEnded() {
    try (ParallelLoop loop = new ParallelLoop(2)) {
      AtomicInteger running = new AtomicInteger();
      assertThrows(OutOfMemoryError.class, () -> loop.forRange(8, 1, (from, to) -> {
        running.incrementAndGet();
        try {
          if (from == 0) {
            throw new OutOfMemoryError("Java heap space");
          }
          Thread.sleep(50);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        } finally {
          running.decrementAndGet();
        }
      }));
      assertEquals(0, running.get());
    }
  }

  /** Close waits for the helper threads to end: none outlives its instance's close. */
  @Test
  @Timeout(60)
  void closeEndsTheHelperThreadsBeforeItReturns() {
    Set<Thread> ran = ConcurrentHashMap.newKeySet();
    ParallelLoop loop = new ParallelLoop(4);
    CountDownLatch all = new CountDownLatch(4);
    loop.forRange(4, 1, (from, to) -> {
      ran.add(Thread.currentThread());
      all.countDown();
      try {
        all.await(); // each chunk on a thread of its own
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    loop.close();
    ran.remove(Thread.currentThread());
    assertEquals(3, ran.size(), "three helpers beside the caller");
    for (Thread t : ran) {
      assertFalse(t.isAlive(), t.getName() + " ended");
    }
  }
}
