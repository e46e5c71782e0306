package dev.maxsim4j;

import dev.maxsim4j.internal.cuda.CudaBackend;
import java.util.List;

/**
 * Benchmark support: times a backend's all-pairs kernel alone on resident documents. On the GPU this is
 * device time from CUDA events (no host copies, no synchronisation per call); a {@link MaxSim} without a
 * GPU has no kernel-only timer and says so.
 */
public final class KernelTimer {
  private KernelTimer() {}

  /** A short description of the device, e.g. {@code NVIDIA H200 (sm_90, 132 SMs)}, or empty on the CPU. */
  public static String device(MaxSim maxSim) {
    return maxSim.backend() instanceof CudaBackend c ? c.deviceDescription() : "";
  }

  /**
   * Per-launch milliseconds of {@code batches} batches of {@code perBatch} launches, sorted; documents
   * rotate through {@code documents} (all resident in {@code maxSim}, all of one shape).
   */
  public static double[] allPairsKernelMillis(MaxSim maxSim, TokenBatch queries, List<ResidentBatch> documents,
      int warmup, int batches, int perBatch) {
    if (!(maxSim.backend() instanceof CudaBackend cuda)) {
      throw new IllegalArgumentException("kernel-only timing needs the cuda backend; this MaxSim uses "
          + maxSim.backendName());
    }
    return cuda.timeAllPairsKernel(queries.tokens(),
        documents.stream().map(r -> r.batchFor(maxSim).tokens()).toList(), warmup, batches, perBatch);
  }

  /**
   * Per-step milliseconds of forward + backward of {@code scores.sum()} over all pairs, both inputs
   * resident in {@code maxSim}, sorted; {@code opBytes[0]} receives the device memory the op allocated on
   * its first step (scores, argmax, gradients; gradients in the inputs' dtype when
   * {@code narrowGradients}) by the library's allocator, and {@code opBytes[1]} (if present) the driver's
   * free-memory delta over that step.
   */
  public static double[] trainingStepMillis(MaxSim maxSim, ResidentBatch queries, ResidentBatch documents,
      boolean deterministic, boolean narrowGradients, int warmup, int batches, int perBatch, long[] opBytes) {
    if (!(maxSim.backend() instanceof CudaBackend cuda)) {
      throw new IllegalArgumentException("kernel-only timing needs the cuda backend; this MaxSim uses "
          + maxSim.backendName());
    }
    return cuda.timeTrainingStep(queries.batchFor(maxSim).tokens(), documents.batchFor(maxSim).tokens(),
        deterministic, narrowGradients, warmup, batches, perBatch, opBytes);
  }

  /** Device bytes the backend holds now and at its peak (0 on the CPU). */
  public static long[] deviceBytes(MaxSim maxSim) {
    return maxSim.backend() instanceof CudaBackend c ? c.allocatedBytes() : new long[2];
  }
}
