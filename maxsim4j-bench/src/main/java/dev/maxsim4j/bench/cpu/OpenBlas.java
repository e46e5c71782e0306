package dev.maxsim4j.bench.cpu;

import dev.maxsim4j.cli.UsageException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * OpenBLAS's {@code cblas_sgemm} through FFM: the yardstick the CPU kernel is measured against. Heap arrays
 * are passed as they are (critical calls), so no copy enters the timing.
 */
final class OpenBlas {
  static final String LIBRARY = "libopenblas.so.0";
  private static final int ROW_MAJOR = 101;
  private static final int NO_TRANS = 111;
  private static final int TRANS = 112;

  private final MethodHandle sgemm;
  private final MethodHandle setThreads;
  private final MethodHandle getThreads;
  private final String config;
  private final String coreName;

  private OpenBlas(SymbolLookup lib) {
    Linker linker = Linker.nativeLinker();
    ValueLayout.OfInt i = ValueLayout.JAVA_INT;
    ValueLayout.OfFloat f = ValueLayout.JAVA_FLOAT;
    sgemm = linker.downcallHandle(lib.findOrThrow("cblas_sgemm"),
        FunctionDescriptor.ofVoid(i, i, i, i, i, i, f, ValueLayout.ADDRESS, i, ValueLayout.ADDRESS, i, f,
            ValueLayout.ADDRESS, i),
        Linker.Option.critical(true));
    setThreads = linker.downcallHandle(lib.findOrThrow("openblas_set_num_threads"), FunctionDescriptor.ofVoid(i));
    getThreads = linker.downcallHandle(lib.findOrThrow("openblas_get_num_threads"), FunctionDescriptor.of(i));
    config = string(linker, lib, "openblas_get_config");
    coreName = string(linker, lib, "openblas_get_corename");
  }

  /** Loads the system's OpenBLAS; its absence is a usage error naming the package to install. */
  static OpenBlas load() {
    try {
      return new OpenBlas(SymbolLookup.libraryLookup(LIBRARY, Arena.global()));
    } catch (IllegalArgumentException e) {
      throw new UsageException("cpu: --sgemm needs OpenBLAS (" + LIBRARY + "), which was not found; install it "
          + "(Debian: apt-get install libopenblas0-pthread)");
    }
  }

  private static String string(Linker linker, SymbolLookup lib, String function) {
    try {
      MemorySegment s = (MemorySegment) linker.downcallHandle(lib.findOrThrow(function),
          FunctionDescriptor.of(ValueLayout.ADDRESS.withTargetLayout(ValueLayout.JAVA_BYTE))).invokeExact();
      return s.reinterpret(Long.MAX_VALUE).getString(0).trim();
    } catch (Throwable t) {
      throw new IllegalStateException(function + " failed", t);
    }
  }

  /** Version and build options, e.g. {@code OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64}. */
  String config() {
    return config;
  }

  /** The kernel family it chose for this CPU (set {@code OPENBLAS_CORETYPE} to choose another). */
  String coreName() {
    return coreName;
  }

  void threads(int n) {
    try {
      setThreads.invokeExact(n);
    } catch (Throwable t) {
      throw new IllegalStateException("openblas_set_num_threads failed", t);
    }
  }

  int threads() {
    try {
      return (int) getThreads.invokeExact();
    } catch (Throwable t) {
      throw new IllegalStateException("openblas_get_num_threads failed", t);
    }
  }

  /**
   * {@code C[m][n] = A[m][k] · B[n][k]ᵀ}, all row-major, each operand starting at its array offset: the
   * query-by-document dot products of MaxSim before the max.
   */
  void sgemmNt(int m, int n, int k, float[] a, int aOff, float[] b, int bOff, float[] c, int cOff) {
    try {
      sgemm.invokeExact(ROW_MAJOR, NO_TRANS, TRANS, m, n, k, 1f, slice(a, aOff), k, slice(b, bOff), k, 0f,
          slice(c, cOff), n);
    } catch (Throwable t) {
      throw new IllegalStateException("cblas_sgemm failed", t);
    }
  }

  private static MemorySegment slice(float[] a, int off) {
    return MemorySegment.ofArray(a).asSlice((long) off * Float.BYTES);
  }
}
