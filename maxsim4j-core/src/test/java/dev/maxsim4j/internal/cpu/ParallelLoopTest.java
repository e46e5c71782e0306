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
