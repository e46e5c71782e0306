package dev.maxsim4j.internal.cpu;

import java.util.Optional;

/**
 * Makes CPU backends. The Vector API kernel is loaded reflectively, and only when the incubator module is
 * in the boot layer, so the library runs (on the scalar path) on JVMs started without
 * {@code --add-modules jdk.incubator.vector}.
 */
public final class CpuBackends {
  private CpuBackends() {}

  /** Why the vector kernel cannot be used here, or empty when it can. */
  public static Optional<String> vectorUnavailableReason() {
    if (ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) {
      return Optional.of("the JVM was started without --add-modules jdk.incubator.vector");
    }
    try {
      Class.forName("jdk.incubator.vector.FloatVector");
    } catch (ClassNotFoundException | LinkageError e) {
      return Optional.of("jdk.incubator.vector cannot be loaded: " + e);
    }
    return Optional.empty();
  }

  public static CpuBackend vector(int threads) {
    vectorUnavailableReason().ifPresent(reason -> {
      throw new IllegalStateException("the vector backend is unavailable: " + reason);
    });
    try {
      PairKernel kernel = (PairKernel) Class.forName("dev.maxsim4j.internal.cpu.VectorKernel")
          .getDeclaredMethod("create").invoke(null);
      return new CpuBackend(kernel, threads);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("the vector backend failed to load: " + e, e);
    }
  }

  public static CpuBackend reference(int threads) {
    return new CpuBackend(new ReferenceKernel(), threads);
  }

  public static CpuBackend scalar(int threads) {
    return new CpuBackend(new ScalarKernel(), threads);
  }
}
