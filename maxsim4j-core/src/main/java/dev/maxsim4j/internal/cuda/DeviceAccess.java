package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.Problem;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cuda.DeviceInputs.Staged;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The device of a {@link CudaBackend}, lent to the bench module for measurements the library does not make: scratch
 * memory, copies and CUDA events, kernels of another jar, documents written on the device, and the forward and the
 * training step launched alone. One is handed to the function given to {@link CudaBackend#withDevice}, which runs
 * under the backend's lock; used after that function returns, or on another thread, it throws
 * {@link IllegalStateException}.
 */
public final class DeviceAccess {
  /** The least time {@link #launchMillis} spends launching before it times. */
  private static final long TIMING_WARMUP_NANOS = 300_000_000L;

  private final CudaBackend backend;
  private final CudaDevice device;
  private final KernelParams params;
  private final ForwardKernels forward;
  private final DeviceTraining training;
  private final DeviceInputs inputs;
  private final Thread borrower = Thread.currentThread();
  /** Scratch allocations, freed when the lending ends: {pointer, bytes}. */
  private final List<long[]> scratch = new ArrayList<>();
  private boolean lent = true;

  DeviceAccess(CudaBackend backend, CudaDevice device, KernelParams params, ForwardKernels forward,
      DeviceTraining training, DeviceInputs inputs) {
    this.backend = backend;
    this.device = device;
    this.params = params;
    this.forward = forward;
    this.training = training;
    this.inputs = inputs;
  }

  /** A kernel of another jar's module, loaded on one device. */
  public static final class Kernel {
    private final CudaDevice device;
    private final MemorySegment function;
    private final String name;

    private Kernel(CudaDevice device, MemorySegment function, String name) {
      this.device = device;
      this.function = function;
      this.name = name;
    }

    @Override
    public String toString() {
      return name;
    }
  }

  /** The device's streaming multiprocessors: what a grid-stride loop's grid is sized by. */
  public int multiprocessors() {
    check();
    return device.multiprocessors;
  }

  /**
   * Kernel {@code name} of the module that the fatbin {@code image} holds, loaded once per device under
   * {@code module}'s name (apart from the library's own modules); {@code image} is read only on the first load.
   */
  public Kernel kernel(String module, Supplier<byte[]> image, String name) {
    check();
    return new Kernel(device, device.function(module, image, name), name);
  }

  /**
   * Queues {@code kernel} on the device's stream: {@code blocks} blocks of {@code threads} threads, its parameters
   * as {@code arguments} writes them (in the order of the kernel's signature).
   */
  public void launch(Kernel kernel, int blocks, int threads, Consumer<LaunchArguments> arguments) {
    check();
    if (kernel.device != device) {
      throw new IllegalArgumentException("kernel " + kernel + " was loaded on another device; expected one loaded"
          + " through this backend's access");
    }
    Driver.launch(kernel.function, kernel.name, blocks, 1, threads, 0, device.stream, params.set(arguments));
  }

  /**
   * {@code documents} x {@code length} x {@code dim} bf16 documents on the device, their values to be written at
   * {@link DeviceDocuments#dataAddress}; they outlive this access, until closed or until the backend is.
   */
  public DeviceDocuments allocateDocuments(int documents, int length, int dim) {
    check();
    return backend.register(DeviceDocuments.allocate(device, backend, documents, length, dim));
  }

  /** {@code bytes} of device memory, freed when this access ends: its address. */
  public long allocateScratch(long bytes) {
    check();
    if (bytes < 1) {
      throw new IllegalArgumentException("bytes = " + bytes + "; expected >= 1");
    }
    long pointer = device.allocate(bytes);
    scratch.add(new long[] {pointer, bytes});
    return pointer;
  }

  /** Queues a copy of {@code bytes} from host memory {@code from} to device address {@code to}. */
  public void copyToDevice(long to, MemorySegment from, long bytes) {
    check();
    Driver.copyToDevice(to, from, bytes, device.stream);
  }

  /** Queues a copy of {@code bytes} from device address {@code from} to host memory {@code to}. */
  public void copyToHost(MemorySegment to, long from, long bytes) {
    check();
    Driver.copyToHost(to, from, bytes, device.stream);
  }

  /** Queues a copy of {@code bytes} between device addresses. */
  public void copyOnDevice(long to, long from, long bytes) {
    check();
    Driver.copyOnDevice(to, from, bytes, device.stream);
  }

  /** Waits for everything queued. */
  public void synchronize() {
    check();
    Driver.synchronize(device.stream);
  }

  /** Milliseconds on the device of the work {@code enqueue} queues, by two CUDA events around it. */
  public double millis(Runnable enqueue) {
    check();
    MemorySegment start = Driver.createEvent();
    MemorySegment end = Driver.createEvent();
    try {
      Driver.record(start, device.stream);
      enqueue.run();
      Driver.record(end, device.stream);
      return Driver.elapsedMillis(start, end);
    } finally {
      Driver.destroyEvent(start);
      Driver.destroyEvent(end);
    }
  }

  /**
   * Runs {@code launch} {@code warmup} times and for at least {@value #TIMING_WARMUP_NANOS} ns, then
   * {@code batches} batches of {@code perBatch} launches between two CUDA events; returns the per-launch
   * milliseconds of every batch, sorted. The timed warm-up lets the JIT compile the launch path first: ten
   * launches would leave it interpreted, and where the host then takes longer per launch than the kernel, the
   * batch times the host (rule 5 of docs/design/kernel-selection.md).
   */
  public double[] launchMillis(Runnable launch, int warmup, int batches, int perBatch) {
    check();
    long warmEnd = System.nanoTime() + TIMING_WARMUP_NANOS;
    for (int i = 0; i < warmup || System.nanoTime() < warmEnd; i++) {
      launch.run();
      if (i % perBatch == perBatch - 1) {
        Driver.synchronize(device.stream); // keeps the queue short while warming up
      }
    }
    Driver.synchronize(device.stream);
    double[] perLaunch = new double[batches];
    for (int b = 0; b < batches; b++) {
      perLaunch[b] = millis(() -> {
        for (int i = 0; i < perBatch; i++) {
          launch.run();
        }
      }) / perBatch;
    }
    Arrays.sort(perLaunch);
    return perLaunch;
  }

  /**
   * A launch of the all-pairs forward of {@code queries} against one of {@code residentDocuments} (all resident,
   * all of one shape) in turn, so that the working set can exceed L2: the kernel alone, its scores left on the
   * device. The queries are staged here as a call of them against these documents stages them.
   */
  public Runnable allPairsForward(Tokens queries, List<Tokens> residentDocuments) {
    check();
    if (residentDocuments.isEmpty()) {
      throw new IllegalArgumentException("residentDocuments is empty; expected at least one resident batch");
    }
    boolean half = inputs.halfCopy(queries, residentDocuments.get(0));
    DeviceTokens q = DeviceTokens.upload(device, queries,
        device.scratch(ScratchSlot.QUERIES, DeviceTokens.bytesFor(queries, half)), half);
    DeviceTokens[] docs = new DeviceTokens[residentDocuments.size()];
    for (int i = 0; i < docs.length; i++) {
      docs[i] = inputs.resident(residentDocuments.get(i));
      if (docs[i] == null) {
        throw new IllegalArgumentException("residentDocuments " + i + " are not resident; upload them first");
      }
    }
    int nd = residentDocuments.get(0).rows;
    int pairs = queries.rows * nd;
    long scores = device.scratch(ScratchSlot.SCORES, 4L * pairs);
    int[] next = {0};
    return () -> {
      check();
      forward.launch(q, docs[next[0]++ % docs.length], PairLayout.ALL_PAIRS, nd, 0, pairs, scores, 0, 0,
          queries.maxRowLength, queries.rows);
    };
  }

  /**
   * A launch of a training step over all pairs of resident {@code queries} and {@code documents}: forward with
   * argmax, dScores = 1 (the gradient of {@code scores.sum()}), backward into dQ and dD in the inputs' dtype
   * ({@code narrowGradients}) or fp32.
   */
  public Runnable trainingSumStep(Tokens queries, Tokens documents, boolean deterministic,
      boolean narrowGradients) {
    check();
    if (inputs.resident(queries) == null || inputs.resident(documents) == null) {
      throw new IllegalArgumentException("upload the queries and the documents first");
    }
    Problem problem = Problem.allPairs(queries, documents);
    Staged in = inputs.stage(queries, documents, 0);
    DType qType = narrowGradients ? queries.dtype : DType.FLOAT32;
    DType dType = narrowGradients ? documents.dtype : DType.FLOAT32;
    return () -> {
      check();
      training.launchSumStep(problem, in, deterministic, qType, dType);
    };
  }

  /** Device bytes the backend holds now. */
  public long allocatedBytes() {
    check();
    return device.allocatedBytes();
  }

  /** The most device bytes the backend held since {@link #resetPeak}. */
  public long peakAllocatedBytes() {
    check();
    return device.peakAllocatedBytes();
  }

  /** Starts {@link #peakAllocatedBytes} again from what is held now. */
  public void resetPeak() {
    check();
    device.resetPeak();
  }

  /** The driver's free device memory, in bytes: allocation granularity and other processes included. */
  public long driverFreeBytes() {
    check();
    return Driver.memInfo().free();
  }

  /** Ends the lending: waits for what is queued, then frees the scratch memory; the first failure thrown. */
  void end() {
    lent = false;
    Releases releases = new Releases();
    releases.run(() -> Driver.synchronize(device.stream));
    for (long[] s : scratch) {
      releases.run(() -> device.release(s[0], s[1]));
    }
    scratch.clear();
    releases.throwIfFailed();
  }

  private void check() {
    if (!lent || Thread.currentThread() != borrower) {
      throw new IllegalStateException("a device access used " + (lent ? "on another thread" : "after")
          + " the CudaBackend.withDevice call that lent it; expected it inside that call only");
    }
  }
}
