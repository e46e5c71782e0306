package dev.maxsim4j.bench.gpu;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.ResidentBatch;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.internal.Internals;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cuda.CudaBackend;
import dev.maxsim4j.internal.cuda.DeviceAccess;
import java.util.Arrays;
import java.util.List;

/**
 * Times a backend's all-pairs kernel alone on resident documents. On the GPU this is device time from CUDA
 * events (no host copies, no synchronisation per call); a {@link MaxSim} without a GPU has no kernel-only
 * timer and says so.
 */
public final class KernelTimer {
  /** The least time {@link #launchMillis} spends launching before it times. */
  private static final long WARMUP_NANOS = 300_000_000L;

  private KernelTimer() {}

  /** A short description of the device, e.g. {@code NVIDIA H200 (sm_90, 132 SMs)}, or empty on the CPU. */
  public static String device(MaxSim maxSim) {
    return Internals.backend(maxSim) instanceof CudaBackend c ? c.deviceDescription() : "";
  }

  /**
   * Per-launch milliseconds of {@code batches} batches of {@code perBatch} launches, sorted; documents
   * rotate through {@code documents} (all resident in {@code maxSim}, all of one shape).
   */
  public static double[] allPairsKernelMillis(MaxSim maxSim, TokenBatch queries, List<ResidentBatch> documents,
      int warmup, int batches, int perBatch) {
    CudaBackend cuda = cuda(maxSim);
    Tokens q = Internals.tokens(queries);
    List<Tokens> d = documents.stream().map(r -> Internals.tokens(Internals.batchFor(r, maxSim))).toList();
    return cuda.withDevice(device -> launchMillis(device, device.allPairsForward(q, d), warmup, batches, perBatch));
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
    CudaBackend cuda = cuda(maxSim);
    Tokens q = Internals.tokens(Internals.batchFor(queries, maxSim));
    Tokens d = Internals.tokens(Internals.batchFor(documents, maxSim));
    return cuda.withDevice(device -> {
      Runnable step = device.trainingSumStep(q, d, deterministic, narrowGradients);
      device.synchronize();
      long before = device.allocatedBytes();
      long freeBefore = device.driverFreeBytes();
      device.resetPeak();
      step.run();
      device.synchronize();
      opBytes[0] = device.peakAllocatedBytes() - before;
      if (opBytes.length > 1) {
        // the driver's view: free memory lost to the step (allocation granularity included; the step frees
        // nothing, its buffers stay as scratch)
        opBytes[1] = freeBefore - device.driverFreeBytes();
      }
      return launchMillis(device, step, warmup, batches, perBatch);
    });
  }

  /**
   * Runs {@code launch} {@code warmup} times and for at least {@value #WARMUP_NANOS} ns, then {@code batches}
   * batches of {@code perBatch} launches between two CUDA events; returns the per-launch milliseconds of every
   * batch, sorted. The timed warm-up lets the JIT compile the launch path first: ten launches would leave it
   * interpreted, and where the host then takes longer per launch than the kernel, the batch times the host (rule 5
   * of docs/design/kernel-selection.md).
   */
  static double[] launchMillis(DeviceAccess device, Runnable launch, int warmup, int batches, int perBatch) {
    if (warmup < 0 || batches < 1 || perBatch < 1) {
      throw new IllegalArgumentException("warmup = " + warmup + ", batches = " + batches + ", perBatch = " + perBatch
          + "; expected warmup >= 0, batches >= 1 and perBatch >= 1");
    }
    long warmEnd = System.nanoTime() + WARMUP_NANOS;
    for (int i = 0; i < warmup || System.nanoTime() < warmEnd; i++) {
      launch.run();
      if (i % perBatch == perBatch - 1) {
        device.synchronize(); // keeps the queue short while warming up
      }
    }
    device.synchronize();
    double[] perLaunch = new double[batches];
    for (int b = 0; b < batches; b++) {
      perLaunch[b] = device.millis(() -> {
        for (int i = 0; i < perBatch; i++) {
          launch.run();
        }
      }) / perBatch;
    }
    Arrays.sort(perLaunch);
    return perLaunch;
  }

  private static CudaBackend cuda(MaxSim maxSim) {
    if (!(Internals.backend(maxSim) instanceof CudaBackend cuda)) {
      throw new IllegalArgumentException("maxSim uses the " + maxSim.backendName()
          + " backend; kernel-only timing expected the cuda backend");
    }
    return cuda;
  }
}
