package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.DecimalText;
import dev.maxsim4j.internal.LibraryLog;
import dev.maxsim4j.internal.ShardedBackend;
import java.util.ArrayList;
import java.util.List;

/**
 * The GPUs a {@code cuda} backend uses: those the system property {@value #PROPERTY} names (comma-separated
 * ordinals, e.g. {@code 0,1}), else every visible device that can run the kernels. One device is the plain
 * {@link CudaBackend}; several are a {@link ShardedBackend} over one backend (context, streams, memory) each,
 * sharding resident batches by each device's free memory.
 */
public final class CudaDevices {
  public static final String PROPERTY = "maxsim4j.cuda.devices";

  private CudaDevices() {}

  /** The backend over the devices of {@value #PROPERTY}, or all usable visible ones. */
  public static Backend create(int threads) {
    CudaBackend.unavailableReason().ifPresent(r -> {
      throw new IllegalStateException("the CUDA backend is unavailable: " + r);
    });
    int[] ordinals = chosen();
    if (ordinals.length == 1) {
      return new CudaBackend(threads, ordinals[0]);
    }
    List<Backend> backends = new ArrayList<>();
    try {
      for (int ordinal : ordinals) {
        backends.add(new CudaBackend(threads, ordinal));
      }
    } catch (RuntimeException | Error e) { // every backend made is closed, the failure that stopped them reported
      for (Backend b : backends) {
        try {
          b.close();
        } catch (RuntimeException | Error suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      throw e;
    }
    return new ShardedBackend(backends, b -> ((CudaBackend) b).freeBytes());
  }

  /**
   * Checks the CUDA settings ({@value #PROPERTY}, {@code maxsim4j.cuda.memoryLimit}) as far as they can be where no
   * GPU is visible, their syntax: a mistake in them is named where it is made, not first on a machine with a GPU.
   */
  public static void checkSettings() {
    String value = System.getProperty(PROPERTY);
    if (value != null) {
      parse(value, -1);
    }
    MemoryBudget.fromSystemProperty();
  }

  /** GPUs the driver reports (those CUDA_VISIBLE_DEVICES leaves visible); 0 where CUDA cannot run. */
  public static int visible() {
    return CudaBackend.unavailableReason().isPresent() ? 0 : CudaDevice.visibleDevices();
  }

  private static int[] chosen() {
    int visible = CudaDevice.visibleDevices();
    String value = System.getProperty(PROPERTY);
    if (value != null) {
      int[] named = parse(value, visible);
      for (int ordinal : named) {
        CudaDevice.unusableReason(ordinal).ifPresent(r -> {
          throw new IllegalArgumentException("system property " + PROPERTY + " = '" + value + "' names a GPU maxsim4j"
              + " cannot use: " + r);
        });
      }
      return named;
    }
    List<Integer> usable = new ArrayList<>();
    for (int ordinal = 0; ordinal < visible; ordinal++) {
      var reason = CudaDevice.unusableReason(ordinal);
      if (reason.isEmpty()) {
        usable.add(ordinal);
      } else {
        LibraryLog.log(System.Logger.Level.DEBUG, "maxsim4j: not using " + reason.get());
      }
    }
    return usable.stream().mapToInt(Integer::intValue).toArray();
  }

  /**
   * The ordinals of {@code value}, a comma-separated list of distinct devices among {@code visible} (-1: not known,
   * no GPU being visible: any ordinal >= 0).
   *
   * @throws IllegalArgumentException naming the property, what it holds and what it should
   */
  static int[] parse(String value, int visible) {
    String seen = "system property " + PROPERTY + " = '" + value + "'";
    String expected = visible < 0 ? "; expected comma-separated ordinals of distinct devices, e.g. 0,1"
        : "; expected comma-separated ordinals of distinct visible devices, 0 .. " + (visible - 1)
            + " (the driver reports " + visible + (visible == 1 ? " device" : " devices") + "), e.g. 0,1";
    String[] parts = value.split(",", -1);
    int[] ordinals = new int[parts.length];
    for (int i = 0; i < parts.length; i++) {
      String part = parts[i].trim();
      int ordinal;
      try {
        ordinal = DecimalText.parseInt(part);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(seen + " holds '" + part + "', not an ordinal" + expected);
      }
      if (ordinal < 0 || visible >= 0 && ordinal >= visible) {
        throw new IllegalArgumentException(seen + " names device " + ordinal + ", which is not visible" + expected);
      }
      for (int j = 0; j < i; j++) {
        if (ordinals[j] == ordinal) {
          throw new IllegalArgumentException(seen + " names device " + ordinal + " twice" + expected);
        }
      }
      ordinals[i] = ordinal;
    }
    return ordinals;
  }
}
