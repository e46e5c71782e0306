package dev.maxsim4j.internal;

import dev.maxsim4j.internal.cpu.CpuBackends;
import dev.maxsim4j.internal.cuda.CudaBackend;
import dev.maxsim4j.internal.cuda.CudaDevices;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntFunction;

/**
 * Chooses a backend. {@code auto} takes the fastest one that works on this machine; a name forces that
 * backend and fails loudly when it cannot run. Why a faster backend was passed over is logged at DEBUG
 * (a CPU-only machine is normal, not news) and stays available through {@link #describe}; the costly surprises,
 * the Vector API module missing from the JVM and a GPU the driver reports that maxsim4j cannot use, are a
 * WARNING, once per JVM.
 *
 * <p>Names: {@code auto} (CUDA when a usable GPU is present, else the best CPU backend), {@code cpu} (the
 * best CPU backend), {@code cuda}, {@code reference}, {@code scalar}, {@code vector}. The system property
 * {@value #PROPERTY} supplies the default name; {@code cuda} uses every visible GPU, or those that
 * {@code maxsim4j.cuda.devices} names ({@link CudaDevices}).
 */
public final class BackendSelector {
  public static final String PROPERTY = "maxsim4j.backend";
  private static final AtomicBoolean SCALAR_FALLBACK_LOGGED = new AtomicBoolean();
  private static final AtomicBoolean CUDA_FALLBACK_LOGGED = new AtomicBoolean();

  private BackendSelector() {}

  /** The name from the system property, or {@code auto}. */
  public static String defaultName() {
    return System.getProperty(PROPERTY, "auto");
  }

  /** The one table of names and the backends they make; a name is its constant in lower case. */
  private enum Choice {
    AUTO(BackendSelector::auto),
    CPU(BackendSelector::bestCpu),
    CUDA(CudaDevices::create),
    REFERENCE(CpuBackends::reference),
    SCALAR(CpuBackends::scalar),
    VECTOR(CpuBackends::vector);

    private final IntFunction<Backend> make;

    Choice(IntFunction<Backend> make) {
      this.make = make;
    }

    String label() {
      return name().toLowerCase(Locale.ROOT);
    }

    static Optional<Choice> named(String name) {
      String n = name.trim().toLowerCase(Locale.ROOT);
      return Arrays.stream(values()).filter(c -> c.label().equals(n)).findFirst();
    }
  }

  /** The names {@link #create} takes. */
  public static final List<String> NAMES = Arrays.stream(Choice.values()).map(Choice::label).toList();

  /** Whether {@link #create} knows {@code name} (case and surrounding blanks aside). */
  public static boolean isKnown(String name) {
    return Choice.named(name).isPresent();
  }

  public static Backend create(String name, int threads) {
    Choice c = Choice.named(name).orElseThrow(() -> new IllegalArgumentException("backend '" + name
        + "' is unknown; expected one of " + String.join(", ", NAMES)));
    return c.make.apply(threads);
  }

  /** Why the CUDA backend cannot run here, or empty. */
  public static Optional<String> cudaUnavailableReason() {
    return CudaBackend.unavailableReason();
  }

  /** Whether the Vector API kernel, the fast CPU path, can run in this JVM. */
  public static boolean vectorApiAvailable() {
    return CpuBackends.vectorUnavailableReason().isEmpty();
  }

  /**
   * The chosen backend, what computes and on how many threads, then each faster backend passed over and
   * why, e.g. {@code vector (Vector API, 512-bit float lanes, 2 threads); cuda not used: ...}.
   */
  public static String describe(Backend chosen, String requested) {
    int threads = chosen.threads();
    StringBuilder s = new StringBuilder(chosen.name()).append(" (").append(chosen.description()).append(", ")
        .append(threads).append(threads == 1 ? " thread)" : " threads)");
    String asked = "backend '" + requested + "' was asked for";
    if (!chosen.name().equals("cuda")) {
      s.append("; cuda not used: ").append(cudaUnavailableReason().orElse(asked));
    }
    if (chosen.name().equals("scalar") || chosen.name().equals("reference")) {
      s.append("; vector not used: ").append(CpuBackends.vectorUnavailableReason().orElse(asked));
    }
    return s.toString();
  }

  private static Backend auto(int threads) {
    Optional<String> reason = CudaBackend.unavailableReason();
    if (reason.isEmpty()) {
      return CudaDevices.create(threads);
    }
    CudaDevices.checkSettings(); // auto would use them where a GPU is: checked here too
    // on a machine without a GPU the CPU is the normal case; beside a GPU it is not
    LibraryLog.once(CUDA_FALLBACK_LOGGED,
        CudaBackend.gpuPresent() ? System.Logger.Level.WARNING : System.Logger.Level.DEBUG,
        "maxsim4j: no GPU backend (" + reason.get() + "); scoring on the CPU");
    return bestCpu(threads);
  }

  private static Backend bestCpu(int threads) {
    Optional<String> reason = CpuBackends.vectorUnavailableReason();
    if (reason.isEmpty()) {
      return CpuBackends.vector(threads);
    }
    LibraryLog.once(SCALAR_FALLBACK_LOGGED, System.Logger.Level.WARNING, "maxsim4j: using the scalar CPU backend"
        + " because " + reason.get() + ": scoring runs scalar loops, an order of magnitude slower than the Vector API"
        + " kernel (docs/benchmarks.md); start the JVM with --add-modules jdk.incubator.vector");
    return CpuBackends.scalar(threads);
  }
}
