package dev.maxsim4j.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A shard that fails, and batches whose rows lie out of order in their storage. */
class ShardedBackendFailureTest {

  /** A CPU backend that counts its resident batches and can be told to fail. */
  private static final class Device implements Backend {
    final Backend cpu = BackendSelector.create("cpu", 1);
    final AtomicInteger held = new AtomicInteger();
    final boolean fails;
    final String failure;
    /** What the call held on the heap, as this device's thread sees it, at its last top-k. */
    volatile long heapHeld = -1;

    Device(boolean fails) {
      this(fails, "device full");
    }

    /** Thrown as it is where given: devices of one driver may throw one instance. */
    RuntimeException instance;

    Device(boolean fails, String failure) {
      this.fails = fails;
      this.failure = failure;
    }

    private void check() {
      if (instance != null) {
        throw instance;
      }
      if (fails) {
        throw new IllegalStateException(failure);
      }
    }

    @Override
    public String name() {
      return cpu.name();
    }

    @Override
    public float[] score(Problem problem, int[] argmax) {
      check();
      return cpu.score(problem, argmax);
    }

    @Override
    public TopKResult topK(Tokens queries, Tokens documents, int k) {
      heapHeld = HeapLimit.held();
      check();
      return cpu.topK(queries, documents, k);
    }

    @Override
    public Gradients backward(Problem problem, int[] argmax, float[] dScores, boolean deterministic) {
      return cpu.backward(problem, argmax, dScores, deterministic);
    }

    @Override
    public Residency makeResident(Tokens documents) {
      check();
      held.incrementAndGet();
      return held::decrementAndGet;
    }

    @Override
    public int threads() {
      return 1;
    }

    @Override
    public void close() {
      cpu.close();
    }
  }

  private static Tokens rows(int n, int length, int dim, int[] start) {
    int[] len = new int[n];
    java.util.Arrays.fill(len, length);
    float[] data = new float[n * length * dim];
    for (int i = 0; i < data.length; i++) {
      data[i] = (float) Math.sin(i * 0.7);
    }
    return new Tokens(DType.FLOAT32, dim, -1, start, len, n * length, null, data, null, null);
  }

  @Test
  void aShardThatFailsFailsTheCallAndFreesTheShardsThatDidUpload() {
    Device good = new Device(false);
    Device bad = new Device(true);
    try (ShardedBackend b = ShardedBackend.equalParts(List.of(good, bad))) {
      Tokens d = rows(4, 2, 3, new int[] {0, 2, 4, 6});
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> b.makeResident(d));
      assertEquals("device full", e.getMessage());
      assertEquals(0, good.held.get(), "the first shard freed again");
      assertThrows(IllegalStateException.class, () -> b.topK(d, d, 2));
      assertThrows(IllegalStateException.class, () -> b.score(Problem.allPairs(d, d), null));
    }
  }

  @Test
  void everyShardsFailureIsReportedTheFirstThrown() {
    try (ShardedBackend b = ShardedBackend.equalParts(List.of(new Device(true, "first full"), new Device(false),
        new Device(true, "third full")))) {
      Tokens d = rows(6, 2, 3, new int[] {0, 2, 4, 6, 8, 10});
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> b.topK(d, d, 2));
      assertEquals("first full", e.getMessage());
      assertEquals(1, e.getSuppressed().length, "the third shard's failure beside it");
      assertEquals("third full", e.getSuppressed()[0].getMessage());
    }
    RuntimeException shared = new IllegalStateException("driver gone");
    Device second = new Device(false);
    Device third = new Device(false);
    second.instance = shared;
    third.instance = shared;
    try (ShardedBackend b = ShardedBackend.equalParts(List.of(new Device(true, "first full"), second, third))) {
      Tokens d = rows(6, 2, 3, new int[] {0, 2, 4, 6, 8, 10});
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> b.topK(d, d, 2));
      assertEquals(1, e.getSuppressed().length, "one instance thrown by two shards is reported once");
    }
  }

  /** The heap a call holds, with its shards' copies, is counted by every device's checks, on the pool's threads too. */
  @Test
  void everyShardSeesWhatTheCallHoldsOnTheHeap() {
    List<Device> devices = List.of(new Device(false), new Device(false), new Device(false));
    try (ShardedBackend b = ShardedBackend.equalParts(List.copyOf(devices))) {
      Tokens d = rows(6, 2, 3, new int[] {0, 2, 4, 6, 8, 10});
      HeapLimit.beside(() -> 12345, () -> b.topK(d, d, 2));
      long copies = TokenSlices.copiedBytes(d, 0, 2) + TokenSlices.copiedBytes(d, 2, 4)
          + TokenSlices.copiedBytes(d, 4, 6);
      for (Device device : devices) {
        assertEquals(12345 + copies, device.heapHeld, "the call's inputs and the shards' copies");
      }
    }
  }

  /** The rows' metadata copied for the shards is refused, named, where the heap has no room for it. */
  @Test
  void shardCopiesThatPassTheHeapAreRefusedBeforeWork() {
    Device first = new Device(false);
    try (ShardedBackend b = ShardedBackend.equalParts(List.of(first, new Device(false)))) {
      Tokens d = rows(4, 2, 3, new int[] {0, 2, 4, 6});
      long heap = Runtime.getRuntime().maxMemory();
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> HeapLimit.beside(() -> heap - 100, () -> b.topK(d, d, 2)));
      assertTrue(e.getMessage().contains("rows copied for 2 devices' shards"), e.getMessage());
      assertEquals(-1, first.heapHeld, "refused before any shard ran");
    }
  }

  @Test
  void residentShardsAreHeldOnceAndFreedWithTheLastHolder() {
    Device first = new Device(false);
    Device second = new Device(false);
    try (ShardedBackend b = ShardedBackend.equalParts(List.of(first, second))) {
      Tokens d = rows(4, 2, 3, new int[] {0, 2, 4, 6});
      Residency one = b.makeResident(d);
      Residency two = b.makeResident(d);
      assertEquals(1, first.held.get());
      assertEquals(1, second.held.get());
      one.close();
      one.close();
      assertEquals(1, second.held.get(), "still held by the second holder");
      two.close();
      assertEquals(0, first.held.get());
      assertEquals(0, second.held.get());
      Tokens single = rows(1, 2, 3, new int[] {0});
      try (Residency h = b.makeResident(single)) {
        assertEquals(1, first.held.get() + second.held.get(), "an empty shard holds nothing");
      }
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void rowsOutOfOrderInTheirStorageTrainOnTheFirstBackend() {
    Tokens q = rows(2, 3, 4, new int[] {3, 0});
    Tokens d = rows(2, 5, 4, new int[] {5, 0});
    Problem p = Problem.pairwise(q, d);
    try (Backend one = BackendSelector.create("cpu", 1);
        ShardedBackend two = ShardedBackend.equalParts(List.of(BackendSelector.create("cpu", 1),
            BackendSelector.create("cpu", 1)))) {
      int[] a1 = new int[p.pairs() * p.argmaxStride()];
      int[] a2 = new int[a1.length];
      assertArrayEquals(one.score(p, a1), two.score(p, a2));
      assertArrayEquals(a1, a2);
      float[] dS = {1f, -0.5f};
      Backend.Gradients g1 = one.backward(p, a1, dS, true);
      Backend.Gradients g2 = two.backward(p, a2, dS, true);
      assertArrayEquals(g1.queries(), g2.queries());
      assertArrayEquals(g1.documents(), g2.documents());
    }
  }
}
