package dev.maxsim4j;

/**
 * A CUDA driver call failed. Carries the driver's error name (for example {@code CUDA_ERROR_OUT_OF_MEMORY})
 * and code, the call that failed, and the driver's description.
 */
public final class CudaException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The {@code CUresult} of {@code CUDA_ERROR_OUT_OF_MEMORY}. */
  private static final int OUT_OF_MEMORY = 2;

  private final String errorName;
  private final int errorCode;

  /**
   * A failure of driver call {@code call} (e.g. {@code cuMemAlloc}) with the driver's {@code CUresult}, its name and
   * its description, as {@code cuGetErrorName} and {@code cuGetErrorString} give them.
   */
  public CudaException(String call, int errorCode, String errorName, String description) {
    super(call + " failed: " + errorName + " (" + errorCode + "): " + description);
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
}
