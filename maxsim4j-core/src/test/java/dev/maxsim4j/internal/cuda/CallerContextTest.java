package dev.maxsim4j.internal.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.DType;
import dev.maxsim4j.GpuTest;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.internal.Internals;
import dev.maxsim4j.internal.Problem;
import dev.maxsim4j.internal.Residency;
import dev.maxsim4j.internal.Tokens;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A call leaves the calling thread's current CUDA context as it found it, so that the caller's own CUDA work after it
 * (a runtime library that does not call cudaSetDevice again) runs where it ran before: none where the thread had
 * none, the caller's own context (made here with cuCtxCreate, not the device's primary one the backend uses) where
 * it had one, after making a backend, calls, a failing call, releasing what it made, and closing it.
 */
@GpuTest
class CallerContextTest {
  private static final int DIM = 64;

  /** A context of the caller's own on device 0 (cuCtxCreate, which also makes it current), not the primary one. */
  private static MemorySegment createContext() throws Throwable {
    MethodHandle create = driverCall("cuCtxCreate_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      assertEquals(0, (int) create.invokeExact(out, 0, Driver.device(0).handle()), "cuCtxCreate");
      return out.get(ADDRESS, 0);
    }
  }

  private static void destroyContext(MemorySegment context) throws Throwable {
    MethodHandle destroy = driverCall("cuCtxDestroy_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    assertEquals(0, (int) destroy.invokeExact(context), "cuCtxDestroy");
  }

  private static MethodHandle driverCall(String name, FunctionDescriptor descriptor) {
    SymbolLookup cuda = SymbolLookup.libraryLookup("libcuda.so.1", Arena.global());
    return Linker.nativeLinker().downcallHandle(cuda.find(name).orElseThrow(), descriptor);
  }

  private static long current() {
    return Driver.currentContext().handle().address();
  }

  private static Tokens bfloat16(SplittableRandom r, int n, int length) {
    short[] s = new short[n * length * DIM];
    for (int i = 0; i < s.length; i++) {
      s[i] = DType.BFLOAT16.narrow((float) r.nextGaussian());
    }
    return Internals.tokens(TokenBatch.ofHalfs(DType.BFLOAT16, s, n, length, DIM));
  }

  /**
   * A backend's life on a thread of its own (no context current yet), a context of the thread's own made current
   * first where {@code callerHasContext}: after each step, whether the thread's current context is as before.
   */
  private static List<String> onFreshThread(boolean callerHasContext) throws Exception {
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<String> seen = new ArrayList<>();
    Thread t = new Thread(() -> {
      MemorySegment own = MemorySegment.NULL;
      try {
        if (callerHasContext) {
          own = createContext(); // current once made
        }
        long expected = own.address();
        assertEquals(expected, current(), "before anything");
        try (CudaBackend backend = new CudaBackend(1)) {
          seen.add("made " + (current() == expected));
          Tokens q = bfloat16(new SplittableRandom(1), 2, 8);
          Tokens d = bfloat16(new SplittableRandom(2), 5, 40);
          float[][] scores = backend.scoreRows(Problem.allPairs(q, d), q.rows, d.rows);
          seen.add("scored " + (current() == expected));
          Residency resident = backend.makeResident(d);
          assertArrayEquals(scores, backend.scoreRows(Problem.allPairs(q, d), q.rows, d.rows));
          seen.add("resident " + (current() == expected));
          resident.close();
          seen.add("released " + (current() == expected));
          PinnedHostMemory pinned = backend.withDevice(a -> a.allocatePinned(1 << 16));
          pinned.close();
          seen.add("pinned freed " + (current() == expected));
          try {
            backend.withDevice(a -> {
              throw new IllegalStateException("the work fails");
            });
          } catch (IllegalStateException expectedFailure) {
            seen.add("failed " + (current() == expected));
          }
        }
        seen.add("closed " + (current() == expected));
      } catch (Throwable e) {
        failure.set(e);
      } finally {
        if (own.address() != 0) {
          try {
            destroyContext(own); // a context left behind would hold device memory for the later tests
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        }
      }
    });
    t.start();
    t.join();
    if (failure.get() instanceof Exception e) {
      throw e;
    } else if (failure.get() instanceof Error e) {
      throw e;
    }
    return seen;
  }

  private static final List<String> UNCHANGED = List.of("made true", "scored true", "resident true",
      "released true", "pinned freed true", "failed true", "closed true");

  @Test
  void aThreadWithNoContextHasNoneAfterEachStep() throws Exception {
    assertEquals(UNCHANGED, onFreshThread(false));
  }

  @Test
  void aThreadWithAContextHasItAgainAfterEachStep() throws Exception {
    assertEquals(UNCHANGED, onFreshThread(true));
  }
}
