package dev.maxsim4j.internal.cuda;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.GpuTest;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.internal.Internals;
import dev.maxsim4j.internal.Problem;
import dev.maxsim4j.internal.Residency;
import dev.maxsim4j.internal.Tokens;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * What a backend hands out, used after the backend closed: pinned host memory, device documents and resident
 * batches throw IllegalStateException naming what is closed, or close as no-ops, instead of reaching the
 * released context; and closing with asynchronous calls in flight ends closed, whether they finish in time or not.
 */
@GpuTest
class CudaLifecycleTest {
  private static final int DIM = 128;

  private static void closed(String expected, Executable use) {
    IllegalStateException e = assertThrows(IllegalStateException.class, use);
    assertTrue(e.getMessage().contains(expected), e.getMessage());
  }

  private static TokenBatch floats(SplittableRandom r, int n, int length) {
    float[] v = new float[n * length * DIM];
    for (int i = 0; i < v.length; i++) {
      v[i] = (float) r.nextGaussian();
    }
    return TokenBatch.ofFloats(v, n, length, DIM);
  }

  private static TokenBatch bfloat16(SplittableRandom r, int n, int length) {
    short[] s = new short[n * length * DIM];
    for (int i = 0; i < s.length; i++) {
      s[i] = DType.BFLOAT16.narrow((float) r.nextGaussian());
    }
    return TokenBatch.ofHalfs(DType.BFLOAT16, s, n, length, DIM);
  }

  @Test
  void pinnedMemoryReadAfterItsBackendClosedThrowsInsteadOfCrashing() {
    CudaBackend backend = new CudaBackend(1);
    PinnedHostMemory pinned = backend.withDevice(d -> d.allocatePinned(1 << 20));
    MemorySegment segment = pinned.segment();
    MemorySegment slice = segment.asSlice(4096, 64);
    segment.set(JAVA_INT, 4096, 42);
    assertEquals(42, slice.get(JAVA_INT, 0));
    TokenBatch documents = TokenBatch.fromMemorySegment(segment.asSlice(0, 4L * 8 * 16 * DIM), DType.FLOAT32, 8, 16,
        DIM);
    backend.close(); // the context that allocated it is released
    closed("Already closed", () -> segment.get(JAVA_INT, 0));
    closed("Already closed", () -> slice.set(JAVA_INT, 0, 1));
    closed("this pinned host memory's CUDA backend is closed", pinned::segment);
    try (MaxSim cpu = MaxSim.builder().backend("vector").build()) {
      TokenBatch q = floats(new SplittableRandom(1), 1, 4);
      assertThrows(IllegalStateException.class, () -> cpu.scores(q, documents));
    }
    pinned.close(); // after its backend: nothing, and no driver call into the released context
    backend.close();
  }

  @Test
  void pinnedMemoryClosedBeforeItsBackendIsInvalidAndFreedOnce() {
    try (CudaBackend backend = new CudaBackend(1)) {
      PinnedHostMemory pinned = backend.withDevice(d -> d.allocatePinned(1 << 20));
      MemorySegment segment = pinned.segment();
      pinned.close();
      closed("Already closed", () -> segment.get(JAVA_INT, 0));
      closed("this pinned host memory is closed", () -> backend.withDevice(d -> copiedMillis(d, pinned)));
      pinned.close();
      PinnedHostMemory open = backend.withDevice(d -> d.allocatePinned(1 << 16));
      assertTrue(backend.withDevice(d -> copiedMillis(d, open)) > 0);
      assertThrows(IllegalArgumentException.class, () -> backend.withDevice(d -> d.allocatePinned(-1)));
    } // closes the one still open
  }

  /** Device milliseconds of a copy of {@code pinned} to the device. */
  private static double copiedMillis(DeviceAccess device, PinnedHostMemory pinned) {
    MemorySegment from = pinned.segment();
    long to = device.allocateScratch(from.byteSize());
    return device.millis(() -> device.copyToDevice(to, from, from.byteSize()));
  }

  @Test
  void deviceDocumentsAreFreedByTheirBackendAndThenSayTheirBackendIsClosed() {
    CudaBackend other = new CudaBackend(1); // holds the device's primary context: closing the first frees no more
    try {
      CudaBackend backend = new CudaBackend(1);
      DeviceDocuments documents = backend.withDevice(d -> d.allocateDocuments(20_000, 256, DIM));
      Tokens q = Internals.tokens(bfloat16(new SplittableRandom(2), 2, 32));
      backend.topK(q, documents, 5);
      // their memory is in the first backend's context: another backend refuses them, whatever GPU it drives
      assertThrows(IllegalArgumentException.class, () -> other.topK(q, documents, 5));
      long freeBefore = other.deviceFreeBytes();
      backend.close();
      long freed = other.deviceFreeBytes() - freeBefore;
      assertTrue(freed >= documents.dataBytes(), "freed " + freed + " bytes; they hold " + documents.dataBytes());
      closed("this CUDA backend is closed", () -> backend.topK(q, documents, 5));
      closed("these device documents' CUDA backend is closed", () -> other.topK(q, documents, 5));
      closed("these device documents' CUDA backend is closed", documents::dataAddress);
      documents.close(); // after their backend: nothing
      DeviceDocuments own = other.withDevice(d -> d.allocateDocuments(10, 8, DIM));
      own.close();
      closed("these device documents are closed", () -> other.topK(q, own, 5));
    } finally {
      other.close();
    }
  }

  @Test
  void aDeviceAccessIsRefusedOutsideItsCallAndFreesItsScratch() {
    try (CudaBackend backend = new CudaBackend(1)) {
      long held = backend.allocatedBytes().held();
      DeviceAccess kept = backend.withDevice(d -> {
        d.allocateScratch(1 << 20);
        assertEquals(held + (1 << 20), d.allocatedBytes());
        return d;
      });
      assertEquals(held, backend.allocatedBytes().held(), "the scratch is freed when the call returns");
      closed("after the CudaBackend.withDevice call", kept::synchronize);
      IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> backend.withDevice(d -> {
        d.allocateScratch(1 << 20);
        throw new IllegalStateException("the work failed");
      }));
      assertEquals("the work failed", thrown.getMessage());
      assertEquals(held, backend.allocatedBytes().held(), "freed after a failure too");
      assertThrows(IllegalArgumentException.class, () -> backend.withDevice(d -> d.allocateScratch(0)));
    }
  }

  @Test
  void aDeviceAccessIsRefusedOnAnotherThreadAndItsLaunchesAfterItsCallAndTheBackendStaysOpenInside()
      throws Exception {
    try (CudaBackend backend = new CudaBackend(1)) {
      Tokens q = Internals.tokens(bfloat16(new SplittableRandom(4), 2, 8));
      Tokens documents = Internals.tokens(bfloat16(new SplittableRandom(5), 6, 16));
      try (Residency resident = backend.makeResident(documents)) {
        Runnable launch = backend.withDevice(d -> {
          Runnable forward = d.allPairsForward(q, List.of(documents));
          assertTrue(d.millis(forward) >= 0);
          CompletableFuture<Void> elsewhere = CompletableFuture.runAsync(d::synchronize);
          ExecutionException e = assertThrows(ExecutionException.class, elsewhere::get);
          assertTrue(e.getCause().getMessage().contains("used on another thread"), e.getCause().getMessage());
          closed("closed inside the work of its withDevice call", backend::close);
          return forward;
        });
        closed("after the CudaBackend.withDevice call", launch::run);
        assertThrows(IllegalArgumentException.class, () -> backend.withDevice(d -> d.allPairsForward(q, List.of(q))));
      }
      assertEquals(2, backend.topK(q, documents, 3).indices().length, "still open");
    }
  }

  @Test
  void aResidentBatchClosedAfterItsBackendDoesNothing() {
    CudaBackend backend = new CudaBackend(1);
    Tokens d = Internals.tokens(bfloat16(new SplittableRandom(3), 10, 16));
    Residency resident = backend.makeResident(d);
    backend.close();
    closed("this CUDA backend is closed", () -> backend.makeResident(d));
    closed("this CUDA backend is closed", () -> backend.score(Problem.allPairs(d, d), null));
    assertDoesNotThrow(resident::close);
  }

  /** Eight calls of about two teraFLOPs each: still running on the device right after they are submitted. */
  private static final class SlowCalls {
    final Problem problem;
    final int rows;
    final int columns;
    final float[][] expected;

    SlowCalls(CudaBackend backend) {
      SplittableRandom r = new SplittableRandom(4);
      Tokens q = Internals.tokens(floats(r, 512, 32));
      Tokens d = Internals.tokens(floats(r, 2000, 256));
      problem = Problem.allPairs(q, d);
      rows = q.rows;
      columns = d.rows;
      backend.makeResident(d); // freed with the backend
      expected = backend.scoreRows(problem, rows, columns);
    }

    List<CompletableFuture<float[][]>> submit(CudaBackend backend) {
      List<CompletableFuture<float[][]>> futures = new ArrayList<>();
      for (int i = 0; i < PipelinedCalls.SLOTS; i++) {
        futures.add(backend.scoreRowsAsync(problem, rows, columns, Runnable::run, () -> false));
      }
      return futures;
    }

    void check(List<CompletableFuture<float[][]>> futures) throws Exception {
      for (int i = 0; i < futures.size(); i++) {
        float[][] got = futures.get(i).get(120, TimeUnit.SECONDS);
        for (int row = 0; row < rows; row += 97) {
          assertArrayEquals(expected[row], got[row], "call " + i + " row " + row);
        }
      }
    }
  }

  /**
   * Closing gives calls in flight no time at all: the backend ends closed all the same, says what it left and
   * why, and frees nothing the calls use, so each still completes with its own scores. It leaks what it left
   * (a context reference and its memory) for the rest of this test run.
   */
  @Test
  void closingWhileCallsStillRunLeavesTheirMemoryAndEndsClosed() throws Exception {
    CudaBackend backend = new CudaBackend(1);
    SlowCalls calls = new SlowCalls(backend);
    PinnedHostMemory pinned = backend.withDevice(d -> d.allocatePinned(4096));
    MemorySegment segment = pinned.segment();
    List<CompletableFuture<float[][]>> futures = calls.submit(backend);
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> backend.close(Duration.ZERO));
    assertTrue(e.getMessage().startsWith("this CUDA backend is closed, but "), e.getMessage());
    assertTrue(e.getMessage().contains("asynchronous call(s) still ran on the device after 0 ms"), e.getMessage());
    assertTrue(e.getMessage().contains("are left allocated"), e.getMessage());
    backend.close(); // a second close: nothing
    closed("this CUDA backend is closed", () -> backend.scoreRows(calls.problem, calls.rows, calls.columns));
    closed("this CUDA backend is closed",
        () -> backend.scoreRowsAsync(calls.problem, calls.rows, calls.columns, Runnable::run, () -> false));
    closed("Already closed", () -> segment.get(JAVA_INT, 0));
    pinned.close();
    calls.check(futures);
  }

  /** An interrupt does not cut close's wait short: the calls complete, everything is freed, the flag stays set. */
  @Test
  void anInterruptedCloseStillWaitsForTheCallsAndReleasesEverything() throws Exception {
    CudaBackend backend = new CudaBackend(1);
    SlowCalls calls = new SlowCalls(backend);
    List<CompletableFuture<float[][]>> futures = calls.submit(backend);
    Thread.currentThread().interrupt();
    try {
      backend.close();
    } finally {
      assertTrue(Thread.interrupted(), "the interrupt is kept for the caller");
    }
    calls.check(futures);
    backend.close();
  }
}
