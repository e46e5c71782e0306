package dev.maxsim4j.internal.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;

/**
 * The lifetime of pinned host memory without a GPU: the allocations are the C library's malloc and the driver's
 * free is the C library's free, counted, so that a segment read after its memory was freed would be a real
 * use-after-free rather than a simulated one.
 */
class PinnedAllocationsTest {
  private static final Linker LINKER = Linker.nativeLinker();
  private static final MethodHandle MALLOC = LINKER.downcallHandle(LINKER.defaultLookup().find("malloc").orElseThrow(),
      FunctionDescriptor.of(ADDRESS, JAVA_LONG));
  private static final MethodHandle FREE = LINKER.downcallHandle(LINKER.defaultLookup().find("free").orElseThrow(),
      FunctionDescriptor.ofVoid(ADDRESS));
  private static final MethodHandle PIPE = LINKER.downcallHandle(LINKER.defaultLookup().find("pipe").orElseThrow(),
      FunctionDescriptor.of(JAVA_INT, ADDRESS));
  private static final MethodHandle READ = LINKER.downcallHandle(LINKER.defaultLookup().find("read").orElseThrow(),
      FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
  private static final MethodHandle WRITE = LINKER.downcallHandle(LINKER.defaultLookup().find("write").orElseThrow(),
      FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
  private static final MethodHandle CLOSE = LINKER.downcallHandle(LINKER.defaultLookup().find("close").orElseThrow(),
      FunctionDescriptor.of(JAVA_INT, JAVA_INT));

  /** Frees per allocation (by identity: malloc reuses freed addresses); each must be 1. */
  private final Map<MemorySegment, Integer> frees = new IdentityHashMap<>();
  private final ReentrantLock lock = new ReentrantLock();
  private final PinnedAllocations pinned = new PinnedAllocations(lock, this::free);

  private void free(MemorySegment allocation) {
    synchronized (frees) {
      frees.merge(allocation, 1, Integer::sum);
    }
    try {
      FREE.invokeExact(allocation);
    } catch (Throwable t) {
      throw new AssertionError(t);
    }
  }

  private static MemorySegment malloc(long bytes) {
    try {
      return ((MemorySegment) MALLOC.invokeExact(bytes)).reinterpret(bytes);
    } catch (Throwable t) {
      throw new AssertionError(t);
    }
  }

  private PinnedHostMemory allocate(long bytes) {
    return pinned.add(malloc(bytes));
  }

  private int freesOf(PinnedHostMemory memory) {
    synchronized (frees) {
      return frees.getOrDefault(memory.allocation, 0);
    }
  }

  private static void closedSegment(MemorySegment segment) {
    assertThrows(IllegalStateException.class, () -> segment.get(JAVA_INT, 0));
    assertThrows(IllegalStateException.class, () -> segment.set(JAVA_INT, 0, 1));
  }

  @Test
  void closingInvalidatesTheSegmentAndItsSlicesThenFreesOnce() {
    PinnedHostMemory memory = allocate(64);
    MemorySegment segment = memory.segment();
    MemorySegment slice = segment.asSlice(16, 16);
    segment.set(JAVA_INT, 16, 7);
    assertEquals(7, slice.get(JAVA_INT, 0));
    memory.close();
    closedSegment(segment);
    closedSegment(slice);
    assertThrows(IllegalStateException.class, () -> MemorySegment.copy(new byte[4], 0, segment,
        java.lang.foreign.ValueLayout.JAVA_BYTE, 0, 4));
    IllegalStateException e = assertThrows(IllegalStateException.class, memory::segment);
    assertEquals("this pinned host memory is closed", e.getMessage());
    memory.close();
    assertEquals(1, freesOf(memory), "freed once, however often closed");
    assertEquals(0, pinned.open());
  }

  @Test
  void theBackendClosingInvalidatesEveryOneStillOpenAndFreesEachOnce() {
    PinnedHostMemory closedBefore = allocate(32);
    PinnedHostMemory a = allocate(32);
    PinnedHostMemory b = allocate(1 << 20);
    MemorySegment segmentA = a.segment();
    MemorySegment segmentB = b.segment();
    closedBefore.close();
    assertEquals(2, pinned.open());
    assertEquals(0, pinned.close(), "no native call holds any");
    closedSegment(segmentA);
    closedSegment(segmentB);
    assertEquals("this pinned host memory's CUDA backend is closed",
        assertThrows(IllegalStateException.class, b::segment).getMessage(), "names what was closed");
    assertEquals("this pinned host memory is closed",
        assertThrows(IllegalStateException.class, closedBefore::segment).getMessage());
    assertEquals(0, freesOf(a), "invalidated first; freed by freeClosed, while the context still exists");
    pinned.freeClosed();
    for (PinnedHostMemory m : List.of(closedBefore, a, b)) {
      assertEquals(1, freesOf(m));
    }
    a.close(); // after its backend: no exception and no free
    b.close();
    closedBefore.close();
    for (PinnedHostMemory m : List.of(closedBefore, a, b)) {
      assertEquals(1, freesOf(m));
    }
    pinned.freeClosed();
    assertEquals(3, frees.size());
  }

  @Test
  void racingClosesFreeEachAllocationExactlyOnce() throws Exception {
    int threads = 4;
    for (int round = 0; round < 20; round++) {
      PinnedAllocations owner = new PinnedAllocations(new ReentrantLock(), this::free);
      List<PinnedHostMemory> memories = new ArrayList<>();
      List<MemorySegment> segments = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        memories.add(owner.add(malloc(128)));
        segments.add(memories.get(i).segment());
      }
      CyclicBarrier start = new CyclicBarrier(threads + 1);
      List<Thread> closers = new ArrayList<>();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      for (int t = 0; t < threads; t++) {
        int first = t;
        closers.add(Thread.ofPlatform().start(() -> {
          try {
            start.await();
            for (int i = 0; i < memories.size(); i++) {
              int k = (first + i) % memories.size();
              memories.get(k).close();
              closedSegment(segments.get(k));
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        }));
      }
      start.await();
      if (round % 2 == 1) { // the backend closes among them
        owner.close();
        owner.freeClosed();
      }
      closers.forEach(t -> {
        try {
          t.join();
        } catch (InterruptedException e) {
          throw new AssertionError(e);
        }
      });
      if (failure.get() != null) {
        throw new AssertionError(failure.get());
      }
      for (PinnedHostMemory m : memories) {
        assertEquals(1, freesOf(m), "round " + round);
      }
      assertEquals(0, owner.open());
    }
  }

  @Test
  void aReaderOnAnotherThreadGetsIllegalStateWhenTheBackendCloses() throws Exception {
    PinnedHostMemory memory = allocate(4096);
    MemorySegment segment = memory.segment();
    CountDownLatch reading = new CountDownLatch(1);
    AtomicReference<Throwable> ended = new AtomicReference<>();
    Thread reader = Thread.ofPlatform().start(() -> {
      try {
        long sum = 0;
        for (;;) {
          for (long i = 0; i < segment.byteSize(); i += 4) {
            sum += segment.get(JAVA_INT, i);
          }
          reading.countDown();
          if (sum == Long.MIN_VALUE) {
            break;
          }
        }
      } catch (Throwable e) {
        ended.set(e);
      }
    });
    assertTrue(reading.await(10, TimeUnit.SECONDS));
    assertEquals(0, pinned.close());
    pinned.freeClosed();
    reader.join(10_000);
    assertFalse(reader.isAlive());
    assertTrue(ended.get() instanceof IllegalStateException, String.valueOf(ended.get()));
    assertEquals(1, freesOf(memory));
  }

  /**
   * A native call on another thread holds the segment until the returned release runs: read(2) of a byte into it
   * from a pipe, which blocks until the release writes one. A sleep of fixed length could end before a slowed test
   * looked at the segment.
   */
  private static Runnable holdInNativeCall(MemorySegment segment, CountDownLatch calling) {
    int[] fds = new int[2];
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment pair = arena.allocate(JAVA_INT, 2);
      assertEquals(0, (int) PIPE.invokeExact(pair));
      fds[0] = pair.getAtIndex(JAVA_INT, 0);
      fds[1] = pair.getAtIndex(JAVA_INT, 1);
    } catch (Throwable t) {
      throw new AssertionError(t);
    }
    Thread holder = Thread.ofPlatform().daemon(true).start(() -> { // a failed test leaves it blocked
      calling.countDown();
      try {
        long unused = (long) READ.invokeExact(fds[0], segment, 1L);
      } catch (Throwable t) {
        throw new AssertionError(t);
      }
    });
    return () -> {
      try (Arena arena = Arena.ofConfined()) {
        assertEquals(1L, (long) WRITE.invokeExact(fds[1], arena.allocate(1), 1L));
        holder.join();
        int unused = (int) CLOSE.invokeExact(fds[0]);
        unused = (int) CLOSE.invokeExact(fds[1]);
      } catch (Throwable t) {
        throw new AssertionError(t);
      }
    };
  }

  @Test
  void memoryANativeCallHoldsIsNeitherInvalidatedNorFreed() throws Exception {
    PinnedHostMemory memory = allocate(64);
    CountDownLatch calling = new CountDownLatch(1);
    Runnable release = holdInNativeCall(memory.segment(), calling);
    calling.await();
    Thread.sleep(500); // the thread is then inside read, holding the segment's scope until released
    IllegalStateException e = assertThrows(IllegalStateException.class, memory::close);
    assertTrue(e.getMessage().contains("in use by a native call on another thread"), e.getMessage());
    assertEquals(0, freesOf(memory));
    memory.segment().set(JAVA_LONG, 16, 7L); // still valid
    assertEquals(7L, memory.segment().get(JAVA_LONG, 16));
    release.run();
    memory.close();
    assertEquals(1, freesOf(memory), "closed again once the call returned");
  }

  @Test
  void theBackendClosingLeavesMemoryANativeCallHoldsAllocated() throws Exception {
    PinnedHostMemory held = allocate(64);
    PinnedHostMemory idle = allocate(64);
    CountDownLatch calling = new CountDownLatch(1);
    Runnable release = holdInNativeCall(held.segment(), calling);
    calling.await();
    Thread.sleep(500);
    assertEquals(1, pinned.close(), "one could not be invalidated");
    pinned.freeClosed();
    assertEquals(1, freesOf(idle));
    assertEquals(0, freesOf(held), "its memory stays: the native call still uses it");
    held.segment().get(JAVA_INT, 0);
    release.run();
    held.close(); // after the backend: nothing
    assertEquals(0, freesOf(held));
  }

  @Test
  void aFailedFreeIsNotRetried() {
    List<MemorySegment> asked = new ArrayList<>();
    PinnedAllocations failing = new PinnedAllocations(lock, allocation -> {
      asked.add(allocation);
      throw new IllegalStateException("driver failure");
    });
    PinnedHostMemory memory = failing.add(MemorySegment.ofAddress(4096).reinterpret(8));
    assertThrows(IllegalStateException.class, memory::close);
    assertThrows(IllegalStateException.class, memory::segment);
    memory.close();
    assertEquals(0, failing.close());
    failing.freeClosed();
    assertEquals(1, asked.size());
  }
}
