package dev.maxsim4j.internal.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

/** How failures on the pool's threads reach the caller. */
class ParallelLoopTest {
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
      java.util.concurrent.atomic.AtomicReference<Throwable> thrown = new java.util.concurrent.atomic.AtomicReference<>();
      java.util.concurrent.atomic.AtomicInteger runningAfter = new AtomicInteger(-1);
      java.util.concurrent.atomic.AtomicBoolean keptInterrupt = new java.util.concurrent.atomic.AtomicBoolean();
      Thread caller = new Thread(() -> {
        try {
          loop.forRange(64, 1, (from, to) -> {
            running.incrementAndGet();
            started.incrementAndGet();
            long end = System.nanoTime() + 50_000_000L; // 50 ms of work that ignores interrupts
            while (System.nanoTime() < end) {
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
      Thread.sleep(80);
      caller.interrupt();
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
}
