package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.internal.Problem;
import java.lang.ref.WeakReference;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Asynchronous calls over an instance's life, from a leak hunter's findings: an instance nobody closed stayed
 * reachable for good once it had made an asynchronous call (its async thread's factory held it, and the thread never
 * ended), and a cancelled call still ran in full, so a caller cancelling on a timeout queued work it had given up on.
 */
class AsyncLifecycleTest {
  private final TokenBatch q = TokenBatch.ofFloats(new float[] {1, 0, 0, 1}, 2, 1, 2);
  private final TokenBatch d = TokenBatch.ofFloats(new float[] {1, 0, 2, 0, 0, 3}, 3, 1, 2);

  @Test
  @Timeout(60)
  void anInstanceNobodyClosedIsCollectedAfterAsynchronousCalls() throws InterruptedException {
    WeakReference<MaxSim> dropped = usedAsynchronouslyAndDropped();
    for (int i = 0; i < 200 && dropped.get() != null; i++) {
      System.gc();
      Thread.sleep(10);
    }
    assertNull(dropped.get(), "an unclosed instance that made an asynchronous call is still reachable");
  }

  private WeakReference<MaxSim> usedAsynchronouslyAndDropped() {
    MaxSim m = MaxSim.builder().backend("cpu").threads(2).build();
    assertArrayEquals(m.scores(q, d), m.scoresAsync(q, d).join());
    return new WeakReference<>(m);
  }

  @Test
  @Timeout(60)
  void aCancelledCallThatHasNotStartedIsSkipped() throws Exception {
    Counting backend = new Counting();
    MaxSim m = MaxSim.over(backend);
    CompletableFuture<float[][]> first = m.scoresAsync(q, d);
    assertTrue(backend.started.await(10, TimeUnit.SECONDS), "the first call runs");
    CompletableFuture<float[][]> cancelled = m.scoresAsync(q, d);
    CompletableFuture<float[][]> kept = m.scoresAsync(q, d);
    assertTrue(cancelled.cancel(true));
    backend.release.countDown();
    float[][] expected = m.scores(q, d); // a synchronous call, counted too
    assertArrayEquals(expected, first.get(10, TimeUnit.SECONDS));
    assertArrayEquals(expected, kept.get(10, TimeUnit.SECONDS));
    assertTrue(cancelled.isCancelled());
    assertEquals(3, backend.calls.get(), "the first, the kept and the synchronous call ran; the cancelled one not");
    m.close(); // the skipped call landed: nothing left to wait for
    assertTrue(backend.closed.await(10, TimeUnit.SECONDS), "the instance freed its backend");
  }

  /**
   * A hostile tester's finding: the async thread, made anew by whichever call comes after an idle minute, took that
   * caller's priority, context class loader (kept from being unloaded) and inheritable thread locals.
   */
  @Test
  @Timeout(60)
  void theAsyncThreadTakesNoneOfTheSubmittersSettings() throws Exception {
    Counting backend = new Counting();
    MaxSim m = MaxSim.over(backend);
    InheritableThreadLocal<String> local = new InheritableThreadLocal<>();
    ClassLoader callers = new java.net.URLClassLoader(new java.net.URL[0]);
    CompletableFuture<Object[]> seen = new CompletableFuture<>();
    Thread submitter = new Thread(() -> {
      local.set("the caller's");
      Thread.currentThread().setContextClassLoader(callers);
      m.scoresAsync(q, d).whenComplete((scores, failure) -> seen.complete(new Object[] {
          Thread.currentThread().getName(), Thread.currentThread().getPriority(),
          Thread.currentThread().getContextClassLoader(), local.get()}));
    });
    submitter.setPriority(Thread.MIN_PRIORITY);
    submitter.start();
    submitter.join();
    assertTrue(backend.started.await(10, TimeUnit.SECONDS));
    backend.release.countDown(); // the callback was chained while the call ran: it runs on the async thread
    Object[] s = seen.get(10, TimeUnit.SECONDS);
    assertEquals("maxsim4j-async", s[0]);
    assertEquals(Thread.NORM_PRIORITY, s[1]);
    assertEquals(MaxSim.class.getClassLoader(), s[2]);
    assertNull(s[3], "an inheritable thread local of the caller");
    m.close();
  }

  /** The CPU backend, its first call held until released, counting the calls that ran. */
  private static final class Counting extends ForwardingBackend {
    final CountDownLatch started = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    final CountDownLatch closed = new CountDownLatch(1);
    final AtomicInteger calls = new AtomicInteger();

    @Override
    public float[] score(Problem problem, int[] argmax) {
      if (calls.getAndIncrement() == 0) {
        started.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
      }
      return super.score(problem, argmax);
    }

    @Override
    public void close() {
      super.close();
      closed.countDown();
    }
  }
}
