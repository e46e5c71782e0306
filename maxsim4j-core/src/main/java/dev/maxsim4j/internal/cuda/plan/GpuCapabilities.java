package dev.maxsim4j.internal.cuda.plan;

/**
 * What the forward's rules read of a GPU: its compute capability, SMs, the opt-in shared memory per block,
 * whether the driver encodes tensor maps, and how many blocks of a kernel one SM holds.
 */
public record GpuCapabilities(int major, int minor, int multiprocessors, int sharedMemoryPerBlockOptin,
    boolean tensorMaps, Occupancy occupancy) {

  /** CUDA's largest grid y dimension, on every GPU. */
  public static final int MAX_GRID_Y = 65535;

  /** Blocks of {@code threads} threads with {@code sharedBytes} of dynamic shared memory one SM holds. */
  public interface Occupancy {
    int residentBlocks(KernelModule module, String entry, int threads, int sharedBytes);
  }

  public int residentBlocks(KernelModule module, String entry, int threads, int sharedBytes) {
    return occupancy.residentBlocks(module, entry, threads, sharedBytes);
  }
}
