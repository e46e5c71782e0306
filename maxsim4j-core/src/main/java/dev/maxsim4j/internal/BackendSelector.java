package dev.maxsim4j.internal;

import dev.maxsim4j.internal.cpu.CpuBackends;
import dev.maxsim4j.internal.cuda.CudaBackend;
import java.util.Locale;
import java.util.Optional;

/**
 * Chooses a backend. {@code auto} takes the fastest one that works on this machine and logs, once, why a
 * faster one was passed over; a name forces that backend and fails loudly when it cannot run.
 *
 * <p>Names: {@code auto} (CUDA when a usable GPU is present, else the best CPU backend), {@code cpu} (the
 * best CPU backend), {@code cuda}, {@code reference}, {@code scalar}, {@code vector}. The system property
 * {@value #PROPERTY} supplies the default name.
 */
public final class BackendSelector {
  public static final String PROPERTY = "maxsim4j.backend";
  private static final System.Logger LOG = System.getLogger("dev.maxsim4j");
  private static volatile boolean fallbackLogged;
  private static volatile boolean cudaFallbackLogged;

  private BackendSelector() {}

  /** The name from the system property, or {@code auto}. */
  public static String defaultName() {
    return System.getProperty(PROPERTY, "auto");
  }

  public static Backend create(String name, int threads) {
    String n = name.trim().toLowerCase(Locale.ROOT);
    return switch (n) {
      case "reference" -> CpuBackends.reference(threads);
      case "scalar" -> CpuBackends.scalar(threads);
      case "vector" -> CpuBackends.vector(threads);
      case "cuda" -> new CudaBackend(threads);
      case "cpu" -> bestCpu(threads);
      case "auto" -> auto(threads);
      default -> throw new IllegalArgumentException("backend '" + name
          + "' is unknown; expected one of auto, cpu, cuda, reference, scalar, vector (property " + PROPERTY + ")");
    };
  }

  /** Why the CUDA backend cannot run here, or empty. */
  public static Optional<String> cudaUnavailableReason() {
    return CudaBackend.unavailableReason();
  }

  private static Backend auto(int threads) {
    Optional<String> reason = CudaBackend.unavailableReason();
    if (reason.isEmpty()) {
      return new CudaBackend(threads);
    }
    if (!cudaFallbackLogged) {
      cudaFallbackLogged = true;
      LOG.log(System.Logger.Level.INFO, "maxsim4j: no GPU backend (" + reason.get() + "); scoring on the CPU");
    }
    return bestCpu(threads);
  }

  private static Backend bestCpu(int threads) {
    Optional<String> reason = CpuBackends.vectorUnavailableReason();
    if (reason.isEmpty()) {
      return CpuBackends.vector(threads);
    }
    if (!fallbackLogged) {
      fallbackLogged = true;
      LOG.log(System.Logger.Level.WARNING, "maxsim4j: using the scalar CPU backend because " + reason.get()
          + "; add that flag for the Vector API kernel (several times faster)");
    }
    return CpuBackends.scalar(threads);
  }
}
