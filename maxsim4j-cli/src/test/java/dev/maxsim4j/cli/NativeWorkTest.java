package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * INT, TERM and HUP end the process only once no call into the model's native libraries is under way: an interrupted
 * encoding ended the JVM with SIGSEGV when ONNX Runtime's shutdown hook freed its environment under a model run.
 * Found by a hostile tester. The exit and the halt are recorded here instead of ending the test's JVM.
 */
class NativeWorkTest {
  private final List<String> ends = new CopyOnWriteArrayList<>();

  private NativeWork work(long waitNanos) {
    return new NativeWork(s -> ends.add("exit " + s), s -> ends.add("halt " + s), waitNanos);
  }

  private static Thread started(Runnable r) {
    Thread t = new Thread(r);
    t.setDaemon(true); // a call that would start after the signal waits for an exit that never comes here
    t.start();
    return t;
  }

  /** Waits until {@code t} waits (for the monitor's notification), as the signal's thread does for a call. */
  private static void awaitWaiting(Thread t) throws InterruptedException {
    while (t.getState() != Thread.State.WAITING && t.getState() != Thread.State.TIMED_WAITING) {
      Thread.sleep(1);
    }
  }

  /** A call of {@code work} under way on its own thread until {@code release} opens: that thread, once inside. */
  private static Thread callUnderWay(NativeWork work, CountDownLatch release) throws InterruptedException {
    CountDownLatch inside = new CountDownLatch(1);
    Thread call = started(() -> work.run(() -> {
      inside.countDown();
      await(release);
      return null;
    }));
    assertTrue(inside.await(1, TimeUnit.MINUTES));
    return call;
  }

  @Test
  void withNoCallUnderWayTheSignalExitsAtOnce() {
    work(NativeWork.WAIT_NANOS).signalled(130);
    assertEquals(List.of("exit 130"), ends);
  }

  @Test
  void theExitWaitsForTheCallUnderWay() throws InterruptedException {
    NativeWork work = work(NativeWork.WAIT_NANOS);
    CountDownLatch release = new CountDownLatch(1);
    Thread call = callUnderWay(work, release);
    Thread signal = started(() -> work.signalled(143));
    awaitWaiting(signal);
    assertEquals(List.of(), ends);
    release.countDown();
    signal.join();
    call.join();
    assertEquals(List.of("exit 143"), ends);
  }

  @Test
  void anEncodingStopsBetweenItsBatches() throws InterruptedException {
    NativeWork work = work(NativeWork.WAIT_NANOS);
    CountDownLatch firstBatch = new CountDownLatch(1);
    CountDownLatch signalWaits = new CountDownLatch(1);
    boolean[] secondBatch = {false};
    started(() -> work.run(() -> {
      firstBatch.countDown();
      await(signalWaits);
      work.pause();
      secondBatch[0] = true;
      return null;
    }));
    assertTrue(firstBatch.await(1, TimeUnit.MINUTES));
    Thread signal = started(() -> work.signalled(130));
    awaitWaiting(signal);
    signalWaits.countDown();
    signal.join();
    assertEquals(List.of("exit 130"), ends);
    assertFalse(secondBatch[0], "the batch after the signal never starts");
  }

  @Test
  void aCallStillUnderWayAfterTheWaitOrASecondSignalHalts() throws InterruptedException {
    NativeWork work = work(TimeUnit.MILLISECONDS.toNanos(50));
    callUnderWay(work, new CountDownLatch(1));
    work.signalled(143);
    assertEquals(List.of("halt 143"), ends);

    ends.clear();
    NativeWork patient = work(NativeWork.WAIT_NANOS);
    callUnderWay(patient, new CountDownLatch(1));
    Thread first = started(() -> patient.signalled(130));
    awaitWaiting(first);
    patient.signalled(130);
    assertEquals(List.of("halt 130"), ends);
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
