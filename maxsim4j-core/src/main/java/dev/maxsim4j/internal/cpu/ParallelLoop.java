package dev.maxsim4j.internal.cpu;

import dev.maxsim4j.internal.LibraryThreads;
import dev.maxsim4j.internal.Termination;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;

/**
 * Runs {@code [0, n)} in contiguous chunks on the calling thread and a fixed pool of {@code threads - 1} helpers.
 * Each thread takes the next chunk no thread has taken until none is left, so the caller starts at once and a
 * call too small to wait for a helper's wake-up ends without it. The grain (from {@link #grainFor}) depends on
 * the thread count, so a body must compute each item the same way whatever chunk holds it (the callers' items own
 * their output rows): that keeps every result the same on any pool size.
 */
final class ParallelLoop implements AutoCloseable {

  interface RangeBody {
    void run(int from, int to);
  }

  private final int threads;
  private final ForkJoinPool helpers;
  /**
   * The helpers' threads that have started, for close to wait for: the pool's termination is signalled before its
   * last threads have ended. One that ended after idling is dropped when the next starts.
   */
  private final Set<Thread> helperThreads = ConcurrentHashMap.newKeySet();

  /** Runs before each helper thread is made; a test's throws as a process's thread limit makes the pool's throw. */
  private final IntConsumer beforeEachHelper;
  private final AtomicInteger helpersMade = new AtomicInteger();

  ParallelLoop(int threads) {
    this(threads, helper -> { });
  }

  ParallelLoop(int threads, IntConsumer beforeEachHelper) {
    if (threads < 1) {
      throw new IllegalArgumentException("threads = " + threads + "; expected >= 1");
    }
    this.threads = threads;
    this.beforeEachHelper = beforeEachHelper;
    this.helpers = threads == 1 ? null
        : new ForkJoinPool(threads - 1, this::newHelper, ParallelLoop::uncaught, false);
  }

  int threads() {
    return threads;
  }

  /**
   * A chunk's failure never leaves takeWhileLeft: an OutOfMemoryError here is the pool's own failure to start
   * another helper (a process's thread limit), whose work the threads already there do; anything else is reported
   * as any thread's would be.
   */
  private static void uncaught(Thread thread, Throwable e) {
    if (!(e instanceof OutOfMemoryError)) {
      ThreadGroup group = thread.getThreadGroup();
      if (group != null) {
        group.uncaughtException(thread, e);
      }
    }
  }

  private ForkJoinWorkerThread newHelper(ForkJoinPool pool) {
    beforeEachHelper.accept(helpersMade.getAndIncrement());
    return new Helper(pool);
  }

  /** A helper thread: counted once it runs, so that one whose start failed is not waited for or kept. */
  private final class Helper extends ForkJoinWorkerThread {
    Helper(ForkJoinPool pool) {
      super(null, pool, true);
      LibraryThreads.neutral(this);
    }

    @Override
    protected void onStart() {
      super.onStart();
      helperThreads.removeIf(h -> h.getState() == Thread.State.TERMINATED);
      helperThreads.add(this);
    }
  }

  /**
   * What a helper is given to run: one call's chunks, until that call has ended. A task the pool could not give a
   * thread stays queued, and then holds nothing of the call (its body, the caller's arrays).
   */
  private static final class Share implements Runnable {
    private volatile Chunks call;

    Share(Chunks call) {
      this.call = call;
    }

    @Override
    public void run() {
      Chunks c = call;
      if (c != null) {
        c.takeWhileLeft();
      }
    }
  }

  /**
   * Splits {@code [0, n)} into chunks of {@code grain} items and runs them; rethrows the first failure (an
   * {@link Error} before any exception) once no chunk runs any more. After a failure or an interrupt of the caller,
   * chunks not taken yet never run; a call whose caller is interrupted before it returns throws
   * {@link IllegalStateException} once no chunk runs any more, and the caller keeps its interrupt, whether the
   * chunks ran on the caller alone (one thread, or one chunk) or were shared with helpers.
   */
  void forRange(int n, int grain, RangeBody body) {
    if (n <= 0) {
      return;
    }
    int g = Math.max(1, grain);
    int chunks = chunks(n, g);
    if (helpers == null || chunks == 1) {
      Thread caller = Thread.currentThread();
      try {
        for (int c = 0; c < chunks && !caller.isInterrupted(); c++) {
          body.run(c * g, end(n, g, c));
        }
      } catch (RuntimeException e) {
        // as where chunks are shared: an interrupted call throws the interrupt, the chunk's failure its cause
        if (caller.isInterrupted()) {
          throw interrupted(e);
        }
        throw e;
      }
      if (caller.isInterrupted()) {
        throw interrupted(null);
      }
      return;
    }
    Chunks call = new Chunks(n, g, chunks, body, Thread.currentThread());
    Share share = new Share(call);
    try {
      for (int h = 0; h < Math.min(threads - 1, chunks - 1) && !call.stopped(); h++) {
        try {
          helpers.execute(share);
        } catch (RejectedExecutionException | OutOfMemoryError closedOrNoThread) {
          // closed, or no thread could be made for a helper (a process or memory limit): the caller and the helpers
          // there are take every chunk left
          break;
        }
      }
      call.takeWhileLeft();
    } catch (Throwable t) { // nothing may run once this call returns
      call.fail(t);
    }
    try {
      call.awaitEnd();
    } finally {
      share.call = null;
    }
  }

  /** What a call whose caller was interrupted throws, with the failure of a chunk, if one failed, as its cause. */
  private static IllegalStateException interrupted(Throwable cause) {
    return new IllegalStateException("interrupted while scoring", cause);
  }

  /** One call's chunks: each taken once, by whichever thread asks first, and counted when it ends or is dropped. */
  private static final class Chunks {
    private final int n;
    private final int grain;
    private final int count;
    private final RangeBody body;
    /** The calling thread: once it is interrupted, no thread takes another chunk. */
    private final Thread caller;
    private final AtomicInteger next = new AtomicInteger();
    /** Counts down once per chunk, run or dropped: at zero no chunk runs and none will. */
    private final CountDownLatch ended;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    Chunks(int n, int grain, int count, RangeBody body, Thread caller) {
      this.n = n;
      this.grain = grain;
      this.count = count;
      this.body = body;
      this.caller = caller;
      this.ended = new CountDownLatch(count);
    }

    boolean stopped() {
      return caller.isInterrupted() || next.get() >= count;
    }

    /** Runs chunks until none is left, or until the caller is interrupted: then drops the rest. */
    void takeWhileLeft() {
      while (!caller.isInterrupted()) {
        int c = next.getAndIncrement();
        if (c >= count) {
          return;
        }
        try {
          body.run(c * grain, end(n, grain, c));
        } catch (Throwable t) {
          fail(t);
        } finally {
          ended.countDown();
        }
      }
      dropTheRest();
    }

    /** Keeps the first failure, an Error before any exception, and drops the chunks not taken yet. */
    void fail(Throwable t) {
      // an Error (an OutOfMemoryError) stays the one thrown, so that callers can tell it from a bad argument
      failure.accumulateAndGet(t, (first, later) ->
          first == null || later instanceof Error && !(first instanceof Error) ? later : first);
      dropTheRest();
    }

    private void dropTheRest() {
      for (int c; (c = next.getAndIncrement()) < count; ) {
        ended.countDown();
      }
    }

    /** Waits for the chunks the helpers took, then throws what failed, or the caller's interrupt. */
    void awaitEnd() {
      boolean interrupted = caller.isInterrupted();
      while (true) {
        try {
          ended.await();
          break;
        } catch (InterruptedException e) {
          // the caller's buffers must outlive every chunk that reads them: wait on, taking no more
          interrupted = true;
          dropTheRest();
        }
      }
      Throwable t = failure.get();
      if (interrupted) {
        Thread.currentThread().interrupt();
        if (!(t instanceof Error)) {
          throw interrupted(t);
        }
      }
      if (t instanceof Error error) {
        throw error;
      }
      if (t instanceof RuntimeException e) {
        throw e;
      }
      if (t != null) {
        throw new IllegalStateException(t);
      }
    }
  }

  /** A grain that gives each thread several chunks (load balance) but chunks of at least {@code min}. */
  int grainFor(int n, int min) {
    return Math.max(min, chunks(n, threads * 4));
  }

  /**
   * How many chunks of {@code grain} items {@code [0, n)} holds, {@code ceil(n / grain)}: in long, since
   * {@code n + grain - 1} passes 2^31 for n near the largest array and would wrap to a negative count.
   */
  static int chunks(int n, int grain) {
    return (int) (((long) n + grain - 1) / grain);
  }

  /** One past the last item of chunk {@code c}: {@code (c + 1) x grain}, which can pass 2^31, or {@code n}. */
  static int end(int n, int grain, int c) {
    return (int) Math.min(n, (c + 1L) * grain);
  }

  /**
   * Stops the helper threads and waits for them to end, so that none outlives its instance's close (they are idle:
   * every call has returned by then).
   */
  @Override
  public void close() {
    if (helpers != null) {
      helpers.shutdownNow();
      Termination.await(helpers, helperThreads, Duration.ofMinutes(1));
    }
  }
}
