package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.internal.LibraryThreads;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Calls in flight on the device at once ({@link CudaBackend#scoreRowsAsync}): each takes a slot, its own
 * pinned memory (staged inputs, then the scores the kernel writes there) and an event recorded after its
 * launch, and returns. So a caller that keeps several calls in flight overlaps each call's host work
 * (staging, the launch, reading the scores) with the kernels of the others, which run back to back on two
 * streams.
 *
 * <p>One thread waits for the events in submission order, reads the scores and frees the slots; a second
 * completes the calls' futures, in the same order, and so runs the callers' callbacks. A callback that
 * submits a call may wait there for a slot, which the first thread still frees (had the first run it, a
 * callback waiting for a slot only its own thread could free would hang).
 *
 * <p>{@link #take} and {@link #submit} run under the backend's lock; neither thread takes it.
 */
final class PipelinedCalls {
  /** Calls in flight at most: enough for each call's host work to hide behind the kernels queued before it. */
  static final int SLOTS = 8;
  /**
   * Streams the slots alternate between: a call's grid may start on the SMs the previous call's last
   * blocks leave idle, instead of after them (a launch on one stream waits for the whole grid before it).
   */
  static final int LANES = 2;
  /** How long closing waits for the calls in flight. */
  static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(60);

  /** A call's pinned memory and completion marker; reused once its call has completed. */
  static final class Slot {
    private final ReusedPinnedMemory pinned = new ReusedPinnedMemory(true);
    private final Driver.Event marker = Driver.createMarker();
    /** The lane this slot's calls run on. */
    final CudaDevice.Lane lane;

    Slot(CudaDevice.Lane lane) {
      this.lane = lane;
    }

    /** This slot's pinned memory, at least {@code bytes} (replaced, where it is, while the slot is idle). */
    MemorySegment pinned(long bytes) {
      return pinned.atLeast(bytes, () -> {});
    }

    /** The device address of {@code slice}, a part of this slot's pinned memory. */
    long deviceAddress(MemorySegment slice) {
      return pinned.deviceAddress(slice);
    }

    void free(Releases releases) {
      releases.run(() -> Driver.destroyEvent(marker));
      releases.run(pinned::close);
    }
  }

  private record InFlight(Slot slot, MemorySegment scores, Function<MemorySegment, float[][]> read,
      CompletableFuture<float[][]> future) {}

  private static final InFlight STOP = new InFlight(null, null, null, null);

  private final CudaDevice device;
  private final ArrayDeque<Slot> idle = new ArrayDeque<>();
  private final Semaphore free = new Semaphore(SLOTS);
  private final LinkedBlockingQueue<InFlight> inFlight = new LinkedBlockingQueue<>();
  private final Thread completer;
  private final ExecutorService callbacks = Executors.newSingleThreadExecutor(
      r -> LibraryThreads.unstarted("maxsim4j-cuda-callbacks", r));

  PipelinedCalls(CudaDevice device) {
    this.device = device;
    try {
      for (int i = 0; i < SLOTS; i++) {
        idle.add(new Slot(device.lane(i % LANES)));
      }
    } catch (RuntimeException | Error e) { // the slots made so far hold events no one else will destroy
      Releases releases = new Releases();
      idle.forEach(slot -> slot.free(releases));
      releases.suppressedIn(e);
      throw e;
    }
    this.completer = LibraryThreads.unstarted("maxsim4j-cuda-completer", this::complete);
    completer.start();
  }

  /** A free slot; waits for the oldest call to complete when all are in flight. */
  Slot take() {
    free.acquireUninterruptibly();
    synchronized (idle) {
      return idle.poll();
    }
  }

  /** Gives back a slot {@link #take} returned that was not submitted (its launch failed). */
  void giveBack(Slot slot) {
    synchronized (idle) {
      idle.add(slot);
    }
    free.release();
  }

  /**
   * Marks the end of {@code slot}'s work on its lane's stream; {@code read} turns its scores into the
   * result once they are there.
   */
  CompletableFuture<float[][]> submit(Slot slot, MemorySegment scores, Function<MemorySegment, float[][]> read) {
    Driver.record(slot.marker, slot.lane.stream);
    CompletableFuture<float[][]> future = new CompletableFuture<>();
    inFlight.add(new InFlight(slot, scores, read, future));
    return future;
  }

  /**
   * A call with no device work, its result {@code value} known already: completes in order, after every call
   * submitted before it (completed at once, it would overtake them).
   */
  CompletableFuture<float[][]> submitDone(float[][] value) {
    CompletableFuture<float[][]> future = new CompletableFuture<>();
    inFlight.add(new InFlight(null, null, none -> value, future));
    return future;
  }

  private void complete() {
    boolean current = false;
    for (;;) {
      InFlight call;
      try {
        call = inFlight.take();
      } catch (InterruptedException e) {
        continue; // only STOP ends this thread: every submitted call is completed
      }
      if (call == STOP) {
        callbacks.shutdown(); // the completions queued run, then the thread ends
        return;
      }
      float[][] result = null;
      Throwable failure = null;
      try {
        if (call.slot != null) { // a call with no device work may outlive the context
          if (!current) {
            device.makeCurrent();
            current = true;
          }
          Driver.waitFor(call.slot.marker);
        }
        result = call.read.apply(call.scores);
      } catch (RuntimeException | Error e) { // an Error too: a dead thread would hold its slot, and close, for good
        failure = e;
      }
      if (call.slot != null) {
        giveBack(call.slot);
      }
      float[][] value = result;
      Throwable error = failure;
      Runnable completion = () -> {
        if (error != null) {
          call.future.completeExceptionally(error);
        } else {
          call.future.complete(value);
        }
      };
      try {
        callbacks.execute(completion);
      } catch (RuntimeException | Error e) {
        // no callbacks thread could start: completed here rather than lost, though a callback that then waits for a
        // slot waits for this thread
        completion.run();
      }
    }
  }

  /**
   * Takes no more calls and waits up to {@code timeout} for those in flight to finish on the device (an
   * interrupt does not cut the wait short; it is kept for the caller). When none is left it frees every slot
   * and returns 0; otherwise it frees nothing, since the calls' kernels may still write into their slots'
   * memory, and returns how many calls are still in flight. Their futures complete on the callbacks thread,
   * possibly after this returns (this runs under the backend's lock, which a callback may be waiting for).
   */
  int close(Duration timeout) {
    inFlight.add(STOP);
    int running = drain(free, SLOTS, timeout);
    if (running > 0) {
      return running;
    }
    Releases releases = new Releases();
    synchronized (idle) {
      for (Slot s : idle) {
        s.free(releases);
      }
      idle.clear();
    }
    releases.throwIfFailed();
    return 0;
  }

  /**
   * Takes every one of {@code permits} from {@code free}, waiting up to {@code timeout} (an interrupt does not cut
   * the wait short; it is kept for the caller). Returns 0 once all are taken, else how many are still out: at
   * least 1, so that 0 always means they were taken.
   */
  static int drain(Semaphore free, int permits, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    boolean interrupted = false;
    boolean drained = false;
    try {
      for (;;) {
        try {
          drained = free.tryAcquire(permits, Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
          break;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    // the last calls may have completed just after the wait ended: counting them as running would leak the slots
    if (drained || free.tryAcquire(permits)) {
      return 0;
    }
    return Math.max(1, permits - free.availablePermits());
  }
}
