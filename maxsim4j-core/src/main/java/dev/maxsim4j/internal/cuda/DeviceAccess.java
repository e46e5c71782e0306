package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.Problem;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cuda.DeviceInputs.Staged;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The device of a {@link CudaBackend}, lent to the bench module for measurements the library does not make: scratch
 * memory, copies and CUDA events, kernels of another jar, documents written on the device, page-locked host memory,
 * and the forward and the training step launched alone. One is handed to the function given to
 * {@link CudaBackend#withDevice}, which runs under the backend's lock; used after that function returns, or on
 * another thread, it throws {@link IllegalStateException}. Scratch memory and the staged queries and scores of the
 * launches it makes are its own, freed when the work returns (the backend's calls inside the work cannot move
 * them); device documents and page-locked memory outlive it, until closed or until the backend is.
 */
public final class DeviceAccess {
  private final CudaBackend backend;
  private final CudaDevice device;
  private final Launcher launcher;
  private final ForwardKernels forward;
  private final DeviceTraining training;
  private final DeviceInputs inputs;
  private final Thread borrower = Thread.currentThread();
  /** Scratch allocations, freed when the lending ends: {pointer, bytes}. */
  private final List<long[]> scratch = new ArrayList<>();
  private boolean lent = true;

  DeviceAccess(CudaBackend backend, CudaDevice device, Launcher launcher, ForwardKernels forward,
      DeviceTraining training, DeviceInputs inputs) {
    this.backend = backend;
    this.device = device;
    this.launcher = launcher;
    this.forward = forward;
    this.training = training;
    this.inputs = inputs;
  }

  /** A kernel of another jar's module, loaded on one device. */
  public static final class Kernel {
    private final CudaDevice device;
    private final Driver.Entry function;
    private final String name;

    private Kernel(CudaDevice device, Driver.Entry function, String name) {
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
    if (blocks < 1 || threads < 1 || threads > 1024) {
      throw new IllegalArgumentException("blocks = " + blocks + ", threads = " + threads
          + "; expected blocks >= 1 and threads 1 .. 1024");
    }
    if (kernel.device != device) {
      throw new IllegalArgumentException("kernel " + kernel + " was loaded on another device; expected one loaded"
          + " through this backend's access");
    }
    launcher.launch(kernel.function, kernel.name, blocks, threads, device.stream, arguments);
  }

  /**
   * {@code documents} x {@code length} x {@code dim} bf16 documents on the device, their values to be written at
   * {@link DeviceDocuments#dataAddress}; they outlive this access, until closed or until the backend is.
   */
  public DeviceDocuments allocateDocuments(int documents, int length, int dim) {
    check();
    return backend.register(DeviceDocuments.allocate(device, backend, documents, length, dim));
  }

  /**
   * {@code bytes} of page-locked host memory, which the GPU copies from at full bus speed (and top-k streams from
   * where it lies); it outlives this access, until closed or until the backend is, after which its segment throws
   * {@link IllegalStateException} when used.
   */
  public PinnedHostMemory allocatePinned(long bytes) {
    check();
    if (bytes < 0) {
      throw new IllegalArgumentException("bytes = " + bytes + "; expected >= 0");
    }
    return backend.registerPinned(Driver.mallocHost(bytes));
  }

  /** {@code bytes} of device memory, freed when this access ends: its address. */
  public long allocateScratch(long bytes) {
    check();
    if (bytes < 1) {
      throw new IllegalArgumentException("bytes = " + bytes + "; expected >= 1");
    }
    return scratchOf(bytes);
  }

  private long scratchOf(long bytes) {
    long pointer = device.allocate(bytes);
    scratch.add(new long[] {pointer, bytes});
    return pointer;
  }

  /** Queues a copy of {@code bytes} from host memory {@code from} to device address {@code to}. */
  public void copyToDevice(long to, MemorySegment from, long bytes) {
    check();
    within("from", from, bytes);
    Driver.copyToDevice(to, from, bytes, device.stream);
  }

  /** Queues a copy of {@code bytes} from device address {@code from} to host memory {@code to}. */
  public void copyToHost(MemorySegment to, long from, long bytes) {
    check();
    within("to", to, bytes);
    Driver.copyToHost(to, from, bytes, device.stream);
  }

  private static void within(String name, MemorySegment host, long bytes) {
    if (bytes < 0 || bytes > host.byteSize()) {
      throw new IllegalArgumentException("bytes = " + bytes + "; expected 0 .. " + name + ".byteSize() = "
          + host.byteSize());
    }
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
    Driver.Event start = Driver.createEvent();
    Driver.Event end = null;
    double ms;
    try {
      end = Driver.createEvent();
      Driver.record(start, device.stream);
      enqueue.run();
      Driver.record(end, device.stream);
      ms = Driver.elapsedMillis(start, end);
    } catch (RuntimeException | Error e) {
      destroyed(start, end).suppressedIn(e);
      throw e;
    }
    destroyed(start, end).throwIfFailed();
    return ms;
  }

  /** Destroys the events (each whatever the other's fate), keeping the failures. */
  private static Releases destroyed(Driver.Event start, Driver.Event end) {
    Releases releases = new Releases();
    releases.run(() -> Driver.destroyEvent(start));
    if (end != null) {
      releases.run(() -> Driver.destroyEvent(end));
    }
    return releases;
  }

  /**
   * A launch of the all-pairs forward of {@code queries} against one of {@code residentDocuments} (all resident,
   * all of one shape, and kept resident until the work returns) in turn, so that the working set can exceed L2:
   * the kernel alone, its scores left on the device. The queries are staged here as a call of them against these
   * documents stages them.
   */
  public Runnable allPairsForward(Tokens queries, List<Tokens> residentDocuments) {
    check();
    if (residentDocuments.isEmpty()) {
      throw new IllegalArgumentException("residentDocuments is empty; expected at least one resident batch");
    }
    Tokens first = residentDocuments.get(0);
    for (int i = 0; i < residentDocuments.size(); i++) {
      Tokens d = residentDocuments.get(i);
      if (inputs.resident(d) == null) {
        throw new IllegalArgumentException("residentDocuments[" + i + "] is not resident; expected batches"
            + " uploaded to this backend");
      }
      if (d.rows != first.rows || d.dim != first.dim || d.dtype != first.dtype) {
        throw new IllegalArgumentException("residentDocuments[" + i + "] is " + d.rows + " rows of " + d.dtype
            + ", dim " + d.dim + "; expected the shape of residentDocuments[0]: " + first.rows + " rows of "
            + first.dtype + ", dim " + first.dim);
      }
    }
    AllPairs all = allPairs(queries, first.rows, first.dim, inputs.halfCopy(queries, first));
    int[] next = {0};
    return () -> {
      check();
      int i = next[0]++ % residentDocuments.size();
      DeviceTokens d = inputs.resident(residentDocuments.get(i));
      if (d == null) {
        throw new IllegalStateException("residentDocuments[" + i + "] was released during the work; expected it"
            + " resident until the work returns");
      }
      all.launch(d);
    };
  }

  /**
   * A launch of the all-pairs forward of {@code queries} against documents written on the device: the kernel alone
   * over every document in one launch, its scores left on the device (a top-k call adds the selection to it).
   */
  public Runnable allPairsForward(Tokens queries, DeviceDocuments documents) {
    check();
    DeviceTokens d = documents.open(backend);
    if (queries.dtype != d.dtype()) {
      throw new IllegalArgumentException("queries of " + queries.dtype + "; expected the documents' " + d.dtype());
    }
    AllPairs all = allPairs(queries, d.rows(), d.dim(), false);
    return () -> {
      check();
      all.launch(documents.open(backend));
    };
  }

  /** Queries staged for all-pairs launches against documents of {@code nd} rows, and their scores' buffer. */
  private AllPairs allPairs(Tokens queries, int nd, int dim, boolean half) {
    if (queries.dim != dim || queries.rows == 0) {
      throw new IllegalArgumentException("queries of " + queries.rows + " rows, dim " + queries.dim
          + "; expected at least one row of the documents' dim " + dim);
    }
    long pairs = (long) queries.rows * nd;
    if (pairs > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(queries.rows + " queries x " + nd + " documents; expected at most "
          + Integer.MAX_VALUE + " pairs");
    }
    DeviceTokens q = DeviceTokens.upload(device, queries, scratchOf(DeviceTokens.bytesFor(queries, half)), half);
    return new AllPairs(q, ForwardKernels.Pairs.all(queries.rows, queries.maxRowLength, nd, 0), scratchOf(4L * pairs));
  }

  private final class AllPairs {
    private final DeviceTokens queries;
    private final ForwardKernels.Pairs pairs;
    private final long scores;

    AllPairs(DeviceTokens queries, ForwardKernels.Pairs pairs, long scores) {
      this.queries = queries;
      this.pairs = pairs;
      this.scores = scores;
    }

    void launch(DeviceTokens documents) {
      forward.launch(queries, documents, pairs, scores);
    }
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
      throw new IllegalArgumentException((inputs.resident(queries) == null ? "queries" : "documents")
          + " not resident; expected both uploaded to this backend (and kept until the work returns)");
    }
    Problem problem = Problem.allPairs(queries, documents);
    Staged in = inputs.stage(queries, documents, 0);
    DType qType = narrowGradients ? queries.dtype : DType.FLOAT32;
    DType dType = narrowGradients ? documents.dtype : DType.FLOAT32;
    return () -> {
      check();
      if (inputs.resident(queries) != in.queries() || inputs.resident(documents) != in.documents()) {
        throw new IllegalStateException("the queries or documents were released during the work; expected both"
            + " resident until the work returns");
      }
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
    releases.run(device::makeCurrent); // the work may have made another backend's context current
    releases.run(() -> Driver.synchronize(device.stream));
    for (long[] s : scratch) {
      releases.run(() -> device.release(s[0], s[1]));
    }
    scratch.clear();
    releases.throwIfFailed();
  }

  /** Refuses a use outside the lending, and makes this device's context current (the work may use another). */
  private void check() {
    if (!lent || Thread.currentThread() != borrower) {
      throw new IllegalStateException("a device access used " + (lent ? "on another thread" : "after")
          + " the CudaBackend.withDevice call that lent it; expected it inside that call only");
    }
    device.makeCurrent();
  }
}
