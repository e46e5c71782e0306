package dev.maxsim4j.internal.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
}
