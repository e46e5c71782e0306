package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.BackendSelector;
import dev.maxsim4j.internal.Problem;
import dev.maxsim4j.internal.ShardedBackend;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The edges of a backend sharded over several devices (found by a hostile parity tester): what its shards hold,
 * devices that report no free memory, a shard whose asynchronous submission fails, and the heap its top-k holds.
 */
class ShardedBackendEdgesTest {

  private static List<Backend> cpus(int n) {
    List<Backend> b = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      b.add(BackendSelector.create("cpu", 1));
    }
    return b;
  }

  private static float[] values(int n, int seed) {
    float[] v = new float[n];
    for (int i = 0; i < n; i++) {
      v[i] = (float) Math.sin(seed + i * 0.37);
    }
    return v;
  }

  /**
   * Shards are views of the batch's heap array, as one CPU backend scores it in place: a change to the array shows
   * in the next call, plain or resident. The shards were copies, made again for every call (a heap corpus split
   * over devices twice its size on the heap) and kept for as long as the batch was resident.
   */
  @Test
  void shardsOfAHeapBatchAreViewsOfItsArray() {
    float[] data = values(6 * 3 * 4, 1);
    TokenBatch d = TokenBatch.ofFloats(data, 6, 3, 4);
    TokenBatch q = TokenBatch.ofFloats(values(2 * 3 * 4, 2), 2, 3, 4);
    try (MaxSim one = MaxSim.builder().backend("cpu").threads(1).build();
        MaxSim sharded = MaxSim.over(ShardedBackend.equalParts(cpus(3)));
        ResidentBatch resident = sharded.upload(d)) {
      float[][] before = one.scores(q, d);
      assertArrayEquals(before, sharded.scores(q, d));
      Arrays.fill(data, 4 * 3 * 4, 5 * 3 * 4, 3f); // document 4, in the last shard
      float[][] now = one.scores(q, d);
      assertTrue(now[0][4] != before[0][4], "the changed document");
      assertArrayEquals(now, sharded.scores(q, d), "a plain call");
      assertArrayEquals(now, sharded.scores(q, resident), "a resident batch, scored in place on the CPU");
      assertArrayEquals(one.topK(q, d, 2).indices(), sharded.topK(q, resident, 2).indices());
    }
  }

  /**
   * Devices that all report no free memory (each below its headroom) or a negative amount split in equal parts,
   * so that each reports its own shortage as one would; every call threw a bad-argument error naming the
   * capacities.
   */
  @Test
  void devicesReportingNoFreeMemoryShareEqually() throws Exception {
    TokenBatch d = TokenBatch.ofFloats(values(5 * 3 * 4, 3), 5, 3, 4);
    TokenBatch q = TokenBatch.ofFloats(values(2 * 3 * 4, 4), 2, 3, 4);
    try (MaxSim one = MaxSim.builder().backend("cpu").threads(1).build()) {
      float[][] expected = one.scores(q, d);
      for (long free : new long[] {0, -1}) {
        try (MaxSim sharded = MaxSim.over(new ShardedBackend(cpus(2), b -> free))) {
          assertArrayEquals(expected, sharded.scores(q, d), "free " + free);
          assertArrayEquals(expected, sharded.scoresAsync(q, d).get(10, TimeUnit.SECONDS), "free " + free);
          assertArrayEquals(one.topK(q, d, 3).indices(), sharded.topK(q, d, 3).indices(), "free " + free);
          try (ResidentBatch r = sharded.upload(d)) {
            assertArrayEquals(expected, sharded.scores(q, r), "free " + free);
          }
        }
      }
    }
  }

  /** A CPU backend whose asynchronous calls take a while and which records a close that comes while one runs. */
  private static final class SlowDevice extends ForwardingBackend {
    final CountDownLatch started = new CountDownLatch(1);
    final CountDownLatch closed = new CountDownLatch(1);
    final AtomicBoolean running = new AtomicBoolean();
    final AtomicBoolean closedWhileRunning = new AtomicBoolean();

    @Override
    public float[][] scoreRows(Problem problem, int rows, int columns) {
      running.set(true);
      started.countDown();
      try {
        Thread.sleep(300);
        return super.scoreRows(problem, rows, columns);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      } finally {
        running.set(false);
      }
    }

    @Override
    public void close() {
      closedWhileRunning.compareAndSet(false, running.get());
      super.close();
      closed.countDown();
    }
  }

  /** A backend whose asynchronous submission fails at once, as a device's staging can. */
  private static final class FailingSubmission extends ForwardingBackend {
    final IllegalStateException failure = new IllegalStateException("no staging memory");

    @Override
    public CompletableFuture<float[][]> scoreRowsAsync(Problem problem, int rows, int columns, Executor executor,
        BooleanSupplier cancelled) {
      throw failure;
    }
  }

  /**
   * A shard whose submission fails after another shard's call is queued fails the call's future once that call has
   * ended: thrown at once, it ended the call while the other ran, and a close freed that device under it.
   */
  @Test
  @Timeout(60)
  void aShardFailingToSubmitFailsTheFutureAfterTheOthersEnd() throws Exception {
    TokenBatch d = TokenBatch.ofFloats(values(6 * 3 * 4, 5), 6, 3, 4);
    TokenBatch q = TokenBatch.ofFloats(values(2 * 3 * 4, 6), 2, 3, 4);
    SlowDevice slow = new SlowDevice();
    FailingSubmission failing = new FailingSubmission();
    MaxSim sharded = MaxSim.over(ShardedBackend.equalParts(List.of(slow, failing)));
    CompletableFuture<float[][]> f = sharded.scoresAsync(q, d);
    assertTrue(slow.started.await(10, TimeUnit.SECONDS), "the first shard's call runs");
    sharded.close(); // returns at once: the instance frees once the call's future lands, after the first shard
    ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
    assertSame(failing.failure, e.getCause());
    assertTrue(slow.closed.await(10, TimeUnit.SECONDS), "the instance frees its devices once the call has landed");
    assertFalse(slow.closedWhileRunning.get(), "a device closed under the call its shard had queued");

    FailingSubmission first = new FailingSubmission();
    try (MaxSim failsFirst = MaxSim.over(ShardedBackend.equalParts(List.of(first, new SlowDevice())))) {
      assertSame(first.failure, assertThrows(IllegalStateException.class, () -> failsFirst.scoresAsync(q, d)),
          "nothing queued: thrown at once, as one backend throws it");
    }
  }

  /**
   * Every shard's k best per query are held beside their merge: a top-k whose shards each fit the heap but whose
   * whole does not is refused naming it, as one backend refuses it, where it ran out of memory part way through.
   */
  @Test
  void aTopKWhoseShardsTogetherPassTheHeapIsRefusedByName() throws Exception {
    String out = ChildJvm.run(List.of("-Xmx64m"), TopKOfManyQueries.class, 120);
    assertTrue(out.contains("IllegalArgumentException: topK's entries held at once"), out);
    assertFalse(out.contains("OutOfMemoryError"), out);
  }

  /** Main for {@link #aTopKWhoseShardsTogetherPassTheHeapIsRefusedByName}: 400,000 queries of no token. */
  static final class TopKOfManyQueries {
    public static void main(String[] args) {
      TokenBatch q = TokenBatch.packedFloats(new float[0], new int[400_001], 4);
      TokenBatch d = TokenBatch.ofFloats(new float[] {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}, 3, 1, 4);
      try (MaxSim m = MaxSim.over(ShardedBackend.equalParts(cpus(3)))) {
        System.out.println("ok: " + m.topK(q, d, 3).scores().length);
      } catch (RuntimeException | Error e) {
        System.out.println(e.getClass().getSimpleName() + ": " + e.getMessage());
      }
    }
  }
}
