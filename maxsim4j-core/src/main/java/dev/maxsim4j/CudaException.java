package dev.maxsim4j;

/**
 * A CUDA driver call failed. Carries the driver's error name (for example {@code CUDA_ERROR_OUT_OF_MEMORY})
 * and code, the call that failed, and the driver's description.
 */
public final class CudaException extends RuntimeException {
  private final String errorName;
  private final int errorCode;

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
}
