package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.Problem;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cuda.DeviceInputs.Staged;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;

/**
 * Device time of the forward and of a training step by CUDA events, for the benchmarks: the kernels alone,
 * launched back to back on resident inputs. Used under the backend's lock.
 */
final class DeviceTiming {
  /** The least time {@link #timeBatches} spends launching before it times. */
  private static final long TIMING_WARMUP_NANOS = 300_000_000L;

  private final CudaDevice device;
  private final ForwardKernels forward;
  private final DeviceTraining training;
  private final DeviceInputs inputs;

  DeviceTiming(CudaDevice device, ForwardKernels forward, DeviceTraining training, DeviceInputs inputs) {
    this.device = device;
    this.forward = forward;
    this.training = training;
    this.inputs = inputs;
  }

  /** See {@link CudaBackend#timeAllPairsKernel}. */
  double[] allPairsKernel(Tokens queries, List<Tokens> residentDocs, int warmup, int batches, int perBatch) {
    // the queries staged as a call of them against these documents stages them, fp16 copy included
    boolean half = inputs.halfCopy(queries, residentDocs.get(0));
    DeviceTokens q = DeviceTokens.upload(device, queries,
        device.scratch(ScratchSlot.QUERIES, DeviceTokens.bytesFor(queries, half)), half);
    DeviceTokens[] docs = new DeviceTokens[residentDocs.size()];
    for (int i = 0; i < docs.length; i++) {
      docs[i] = inputs.resident(residentDocs.get(i));
      if (docs[i] == null) {
        throw new IllegalArgumentException("documents " + i + " are not resident; upload them first");
      }
    }
    int nd = residentDocs.get(0).rows;
    int pairs = queries.rows * nd;
    long scores = device.scratch(ScratchSlot.SCORES, 4L * pairs);
    int[] n = {0};
    return timeBatches(() -> forward.launch(q, docs[n[0]++ % docs.length], PairLayout.ALL_PAIRS, nd, 0, pairs,
        scores, 0, 0, queries.maxRowLength, queries.rows), warmup, batches, perBatch);
  }

  /** See {@link CudaBackend#timeTrainingStep}. */
  double[] trainingStep(Tokens queries, Tokens documents, boolean deterministic, boolean narrowGradients, int warmup,
      int batches, int perBatch, long[] opBytes) {
    if (inputs.resident(queries) == null || inputs.resident(documents) == null) {
      throw new IllegalArgumentException("upload the queries and the documents first");
    }
    Problem problem = Problem.allPairs(queries, documents);
    Staged in = inputs.stage(queries, documents, 0);
    DType qType = narrowGradients ? queries.dtype : DType.FLOAT32;
    DType dType = narrowGradients ? documents.dtype : DType.FLOAT32;
    Driver.synchronize(device.stream);
    long before = device.allocatedBytes();
    long freeBefore = Driver.memInfo().free();
    device.resetPeak();
    training.launchSumStep(problem, in, deterministic, qType, dType);
    Driver.synchronize(device.stream);
    opBytes[0] = device.peakAllocatedBytes() - before;
    if (opBytes.length > 1) {
      // the driver's view: free memory lost to the step (allocation granularity included; the step frees
      // nothing, its buffers stay as scratch)
      opBytes[1] = freeBefore - Driver.memInfo().free();
    }
    return timeBatches(() -> training.launchSumStep(problem, in, deterministic, qType, dType), warmup, batches,
        perBatch);
  }

  /**
   * Runs {@code launch} {@code warmup} times and for at least {@value #TIMING_WARMUP_NANOS} ns, then
   * {@code batches} batches of {@code perBatch} launches between two CUDA events; returns the per-launch
   * milliseconds of every batch, sorted. The timed warm-up lets the JIT compile the launch path first: ten
   * launches would leave it interpreted, and where the host then takes longer per launch than the kernel, the
   * batch times the host (rule 5 of docs/design/kernel-selection.md).
   */
  private double[] timeBatches(Runnable launch, int warmup, int batches, int perBatch) {
    long warmEnd = System.nanoTime() + TIMING_WARMUP_NANOS;
    for (int i = 0; i < warmup || System.nanoTime() < warmEnd; i++) {
      launch.run();
      if (i % perBatch == perBatch - 1) {
        Driver.synchronize(device.stream); // keeps the queue short while warming up
      }
    }
    Driver.synchronize(device.stream);
    MemorySegment start = Driver.createEvent();
    MemorySegment end = Driver.createEvent();
    try {
      double[] perLaunch = new double[batches];
      for (int b = 0; b < batches; b++) {
        Driver.record(start, device.stream);
        for (int i = 0; i < perBatch; i++) {
          launch.run();
        }
        Driver.record(end, device.stream);
        perLaunch[b] = Driver.elapsedMillis(start, end) / perBatch;
      }
      Arrays.sort(perLaunch);
      return perLaunch;
    } finally {
      Driver.destroyEvent(start);
      Driver.destroyEvent(end);
    }
  }
}
