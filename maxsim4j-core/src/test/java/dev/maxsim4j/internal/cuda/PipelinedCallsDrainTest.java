package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Closing the pipeline's wait for its slots, without a GPU: 0 comes back only with every slot taken. */
class PipelinedCallsDrainTest {
  /** Its timed wait gives up, then the calls still out complete, as the completer thread may right after. */
  private static final class LateCompletions extends Semaphore {
    private final int late;

    LateCompletions(int available, int late) {
      super(available);
      this.late = late;
    }

    @Override
    public boolean tryAcquire(int permits, long timeout, TimeUnit unit) {
      release(late);
      return false;
    }
  }

  @Test
  void callsCompletingJustAfterTheWaitAreNotCountedAsRunning() {
    Semaphore free = new LateCompletions(5, 3);
    assertEquals(0, PipelinedCalls.drain(free, 8, Duration.ZERO));
    assertEquals(0, free.availablePermits(), "0 means every slot is taken, so close frees them");
  }

  @Test
  void callsStillRunningAreCounted() {
    Semaphore free = new Semaphore(5);
    assertEquals(3, PipelinedCalls.drain(free, 8, Duration.ZERO));
    assertEquals(5, free.availablePermits(), "nothing taken");
    assertEquals(0, PipelinedCalls.drain(new Semaphore(8), 8, Duration.ofSeconds(1)));
  }

  @Test
  void anInterruptDoesNotCutTheWaitShortAndIsKept() throws Exception {
    Semaphore free = new Semaphore(7);
    Thread completer = Thread.ofPlatform().start(() -> {
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
      free.release();
    });
    Thread.currentThread().interrupt();
    try {
      assertEquals(0, PipelinedCalls.drain(free, 8, Duration.ofSeconds(30)));
    } finally {
      assertTrue(Thread.interrupted(), "the interrupt is kept for the caller");
    }
    completer.join();
  }
}
