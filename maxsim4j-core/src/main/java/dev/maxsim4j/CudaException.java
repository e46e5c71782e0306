package dev.maxsim4j;

import java.util.Set;

/**
 * A CUDA driver call failed. Carries the driver's error name (for example {@code CUDA_ERROR_OUT_OF_MEMORY})
 * and code, the call that failed, and the driver's description.
 */
public final class CudaException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The {@code CUresult} of {@code CUDA_ERROR_OUT_OF_MEMORY}. */
  private static final int OUT_OF_MEMORY = 2;

  /**
   * The {@code CUresult}s of a kernel that failed on the device: ILLEGAL_ADDRESS, LAUNCH_TIMEOUT, ASSERT,
   * HARDWARE_STACK_ERROR, ILLEGAL_INSTRUCTION, MISALIGNED_ADDRESS, INVALID_ADDRESS_SPACE, INVALID_PC, LAUNCH_FAILED
   * and TENSOR_MEMORY_LEAK, after which the driver fails every later call of the process the same way.
   */
  private static final Set<Integer> CONTEXT_LOST = Set.of(700, 702, 710, 714, 715, 716, 717, 718, 719, 721);

  private final String errorName;
  private final int errorCode;

  /**
   * A failure of driver call {@code call} (e.g. {@code cuMemAlloc}) with the driver's {@code CUresult}, its name and
   * its description, as {@code cuGetErrorName} and {@code cuGetErrorString} give them.
   */
  public CudaException(String call, int errorCode, String errorName, String description) {
    super(call + " failed: " + errorName + " (" + errorCode + "): " + description
        + (CONTEXT_LOST.contains(errorCode) ? "; a kernel failed on the device (it may have been launched by an"
            + " earlier call), which leaves this process's CUDA context unusable: every later GPU call fails the same"
            + " way until the process restarts" : ""));
    this.errorName = errorName;
    this.errorCode = errorCode;
  }

  /** The driver's name for the error, e.g. {@code CUDA_ERROR_INVALID_VALUE}. */
  public String errorName() {
    return errorName;
  }

  /** The numeric {@code CUresult}. */
  public int errorCode() {
    return errorCode;
  }

  /**
   * Whether the device had no room for an allocation ({@code CUDA_ERROR_OUT_OF_MEMORY}): the one failure a caller
   * may answer with a smaller batch.
   */
  public boolean isOutOfMemory() {
    return errorCode == OUT_OF_MEMORY;
  }

  /**
   * Whether a kernel failed on the device ({@code CUDA_ERROR_ILLEGAL_ADDRESS}, {@code CUDA_ERROR_LAUNCH_FAILED} and
   * the driver's other errors of that kind). The driver then fails every later CUDA call of this process the same
   * way, on every {@link MaxSim} of the device and any other CUDA user in the process, and the error may surface at
   * a call after the one whose kernel failed: a service should stop sending work to the GPU and restart the process
   * (or fall back to a CPU {@code MaxSim}).
   */
  public boolean isContextLost() {
    return CONTEXT_LOST.contains(errorCode);
  }
}
