package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * close() while another thread's call runs: the call completes normally and close() returns after it; later
 * calls throw IllegalStateException("MaxSim is closed").
 */
class CloseWhileRunningTest {
  private final RandomBatches r = new RandomBatches();
  private final TokenBatch q = TokenBatch.ofFloats(r.floats(16 * 32 * 128), 16, 32, 128);
  private final TokenBatch d = TokenBatch.ofFloats(r.floats(300 * 64 * 128), 300, 64, 128);

  private static void closed(Executable call) {
    IllegalStateException e = assertThrows(IllegalStateException.class, call);
    assertTrue(e.getMessage().contains("closed"), e.getMessage());
  }

  @Test
  void runningCallsCompleteNormally() throws Exception {
    float[][] expected;
    try (MaxSim m = MaxSim.builder().backend("reference").threads(2).build()) {
      expected = m.scores(q, d);
    }
    for (String backend : new String[] {"reference", "vector"}) {
      MaxSim m = MaxSim.builder().backend(backend).threads(2).build();
      CountDownLatch started = new CountDownLatch(3);
      CompletableFuture<?>[] calls = new CompletableFuture<?>[3];
      for (int c = 0; c < calls.length; c++) {
        calls[c] = CompletableFuture.supplyAsync(() -> {
          started.countDown();
          float[][] last = null;
          for (int i = 0; i < (backend.equals("vector") ? 200 : 1); i++) {
            last = m.scores(q, d);
          }
          return last;
        }, runnable -> new Thread(runnable).start());
      }
      assertTrue(started.await(10, TimeUnit.SECONDS));
      Thread.sleep(100);
      m.close();
      for (CompletableFuture<?> call : calls) {
        try {
          // a bound for a hang only: three reference calls on a loaded 2-core host take most of a minute
          float[][] scores = (float[][]) call.get(10, TimeUnit.MINUTES);
          if (backend.equals("reference")) {
            assertArrayEquals(expected, scores);
          }
        } catch (java.util.concurrent.ExecutionException e) {
          // a call that started after close() may see only the closed error, never another exception
          assertTrue(e.getCause() instanceof IllegalStateException ise
              && ise.getMessage().equals("MaxSim is closed"), backend + ": " + e.getCause());
        }
      }
      closed(() -> m.scores(q, d));
    }
  }

  @Test
  void asynchronousCallsSubmittedBeforeCloseComplete() {
    MaxSim m = MaxSim.builder().backend("reference").threads(2).build();
    CompletableFuture<float[][]> a = m.scoresAsync(q, d);
    CompletableFuture<float[][]> b = m.scoresAsync(q, d);
    m.close();
    assertEquals(16, a.join().length);
    assertEquals(16, b.join().length);
    closed(() -> m.scoresAsync(q, d));
  }

  /**
   * A hostile tester's finding: the last asynchronous call frees the instance before its future completes, and
   * freeing took the instance's own monitor, so a caller that held it (synchronized on the MaxSim) while another
   * thread closed waited for its future forever.
   */
  @Test
  void aCallerHoldingTheInstancesMonitorGetsItsAsynchronousResult() throws Exception {
    MaxSim m = MaxSim.builder().backend("vector").threads(1).build();
    synchronized (m) {
      CompletableFuture<float[][]> f = m.scoresAsync(q, d);
      Thread closer = new Thread(m::close);
      closer.start();
      closer.join(60_000);
      assertFalse(closer.isAlive(), "close() is still waiting");
      assertEquals(16, f.get(60, TimeUnit.SECONDS).length);
    }
  }

  /**
   * close() waits for the instance's thread while the caller's callback on it computes, and returns with the thread
   * ended: only a callback that waits (below) may outlive it.
   */
  @Test
  void closeWaitsForACallbackThatComputes() throws Exception {
    for (int attempt = 0; ; attempt++) {
      MaxSim m = MaxSim.builder().backend("vector").threads(2).build();
      CountDownLatch inCallback = new CountDownLatch(1);
      Thread[] ranOn = new Thread[1];
      CompletableFuture<?> chained = m.scoresAsync(q, d).thenAccept(scores -> {
        ranOn[0] = Thread.currentThread();
        inCallback.countDown();
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
        while (System.nanoTime() < end) {
          Thread.onSpinWait();
        }
      });
      assertTrue(inCallback.await(60, TimeUnit.SECONDS), "the callback ran");
      m.close();
      if (ranOnThisThread(ranOn[0], attempt)) {
        continue;
      }
      assertTrue(chained.isDone(), "close() returned before the callback did");
      assertFalse(ranOn[0].isAlive(), ranOn[0].getName() + " outlived close()");
      return;
    }
  }

  /**
   * close() does not wait for the instance's thread while the caller's callback on it waits: one that waited there
   * for a lock the closing thread held (an application's shutdown path) held close() for its whole minute's limit.
   */
  @Test
  void closeDoesNotWaitForTheCallersCallbacks() throws Exception {
    for (int attempt = 0; ; attempt++) {
      MaxSim m = MaxSim.builder().backend("vector").threads(2).build();
      Object lock = new Object();
      CountDownLatch inCallback = new CountDownLatch(1);
      Thread[] ranOn = new Thread[1];
      CompletableFuture<?> chained;
      long took;
      synchronized (lock) {
        chained = m.scoresAsync(q, d).thenAccept(scores -> {
          ranOn[0] = Thread.currentThread();
          inCallback.countDown();
          synchronized (lock) {
            assertEquals(16, scores.length);
          }
        });
        assertTrue(inCallback.await(60, TimeUnit.SECONDS), "the callback ran");
        long start = System.nanoTime();
        m.close();
        took = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
      }
      chained.get(60, TimeUnit.SECONDS);
      if (ranOnThisThread(ranOn[0], attempt)) {
        continue;
      }
      assertTrue(took < 20, "close() took " + took + " s");
      closed(() -> m.scores(q, d));
      ranOn[0].join(60_000); // the instance's thread ends once the callback has returned
      assertFalse(ranOn[0].isAlive(), ranOn[0].getName() + " outlived the callback");
      return;
    }
  }

  /**
   * A hostile tester's finding: a callback blocked in native I/O (a pipe's or a socket's read, whose peer may be the
   * closing thread) reports RUNNABLE, as one that computes does, and held close() for its whole minute's limit.
   */
  @Test
  void closeDoesNotWaitForACallbackBlockedInIo() throws Exception {
    for (int attempt = 0; ; attempt++) {
      MaxSim m = MaxSim.builder().backend("vector").threads(2).build();
      Pipe pipe = Pipe.open();
      CountDownLatch inCallback = new CountDownLatch(1);
      Thread[] ranOn = new Thread[1];
      Thread test = Thread.currentThread();
      CompletableFuture<?> chained = m.scoresAsync(q, d).thenAccept(scores -> {
        ranOn[0] = Thread.currentThread();
        inCallback.countDown();
        try {
          if (ranOn[0] != test) { // inline on the test's thread, the read would wait for the test's own write
            pipe.source().read(ByteBuffer.allocate(1));
          }
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
      assertTrue(inCallback.await(60, TimeUnit.SECONDS), "the callback ran");
      if (ranOnThisThread(ranOn[0], attempt)) {
        m.close();
        continue;
      }
      long start = System.nanoTime();
      m.close();
      long took = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
      pipe.sink().write(ByteBuffer.wrap(new byte[] {1}));
      chained.get(60, TimeUnit.SECONDS);
      assertTrue(took < 20, "close() took " + took + " s");
      ranOn[0].join(60_000);
      assertFalse(ranOn[0].isAlive(), ranOn[0].getName() + " outlived the callback");
      pipe.source().close();
      pipe.sink().close();
      return;
    }
  }

  /**
   * Whether a callback ran inline on the test's thread, chained after its call had completed (a loaded machine can
   * keep the test's thread off a core for the whole call): the attempt is then made again, a few times at most.
   */
  private static boolean ranOnThisThread(Thread ranOn, int attempt) {
    if (ranOn != Thread.currentThread()) {
      return false;
    }
    assertTrue(attempt < 10, "the call completed before its callback was chained in " + (attempt + 1) + " attempts");
    return true;
  }

  /**
   * close() returns with no thread of the instance alive, though the closing thread's interrupt is set (a close in a
   * cancelled task's finally block) and though an asynchronous call started the async thread: a hostile tester saw
   * helper and async threads outlive it, and a loaded machine the async thread, caught by close() as it woke the
   * joining caller.
   */
  @Test
  void noThreadOfTheInstanceOutlivesItsClose() {
    TokenBatch q = TokenBatch.ofFloats(new float[64 * 8 * 16], 64, 8, 16);
    for (int cycle = 0; cycle < 200; cycle++) { // the threads outlived one close in tens to hundreds
      java.util.Set<Thread> before = Thread.getAllStackTraces().keySet();
      MaxSim m = MaxSim.builder().backend("vector").threads(4).build();
      m.scores(q, q);
      m.scoresAsync(q, q).join();
      java.util.Set<Thread> started = new java.util.HashSet<>(Thread.getAllStackTraces().keySet());
      started.removeAll(before);
      // its own: the pool's helpers and the async thread (not the common pool's, nor the JVM's)
      started.removeIf(t -> !(t instanceof java.util.concurrent.ForkJoinWorkerThread
          && !t.getName().contains("commonPool") || t.getName().equals("maxsim4j-async")));
      assertFalse(started.isEmpty(), "the calls started the instance's threads");
      Thread.currentThread().interrupt();
      m.close();
      assertTrue(Thread.interrupted(), "the interrupt is kept");
      for (Thread t : started) {
        assertFalse(t.isAlive(), t.getName() + " outlived close() in cycle " + cycle);
      }
    }
  }

  /**
   * close() while another thread's call runs returns only once the instance is freed: the returning call took the
   * free on its own thread, and close() returned while it still closed the pool (a reviewer saw pool threads alive
   * after close() in a quarter of such closes).
   */
  @Test
  void closeDuringAnotherThreadsCallReturnsWithTheInstanceFreed() throws Exception {
    for (int cycle = 0; cycle < 30; cycle++) {
      java.util.Set<Thread> before = Thread.getAllStackTraces().keySet();
      MaxSim m = MaxSim.builder().backend("vector").threads(4).build();
      CountDownLatch started = new CountDownLatch(1);
      Thread caller = new Thread(() -> {
        started.countDown();
        m.scores(q, d);
      });
      caller.start();
      assertTrue(started.await(60, TimeUnit.SECONDS));
      Thread.sleep(5); // close() mostly while the call runs
      m.close();
      java.util.Set<Thread> threads = new java.util.HashSet<>(Thread.getAllStackTraces().keySet());
      threads.removeAll(before);
      threads.removeIf(t -> !(t instanceof java.util.concurrent.ForkJoinWorkerThread)
          || t.getName().contains("commonPool"));
      for (Thread t : threads) {
        assertFalse(t.isAlive(), t.getName() + " outlived close() in cycle " + cycle);
      }
      caller.join(60_000);
    }
  }

  @Test
  void everyCallAfterCloseIsIllegalState() {
    MaxSim m = MaxSim.builder().backend("cpu").threads(1).build();
    TrainingScores training = m.scoresForTraining(q, d);
    ResidentBatch resident = m.upload(d);
    m.close();
    m.close(); // idempotent
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> m.scores(q, d));
    assertEquals("MaxSim is closed", e.getMessage());
    closed(() -> m.topK(q, d, 3));
    closed(() -> m.pairwise(q, q));
    closed(() -> m.candidates(q, d, 1));
    closed(() -> m.upload(d));
    closed(() -> m.scores(q, resident));
    closed(() -> m.topK(q, resident, 1));
    closed(() -> training.backward(new float[16 * 300]));
    closed(() -> m.lossAllPairs(q, d, Loss.contrastive(1f)));
    closed(() -> m.project(new float[4], 2, 2, new float[4], 2));
    resident.close(); // freeing after the owner closed is harmless
  }
}
