package dev.maxsim4j.internal.cuda;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.maxsim4j.Loss;
import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.FdeParameters;
import dev.maxsim4j.internal.Problem;
import dev.maxsim4j.internal.Residency;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cuda.DeviceInputs.Staged;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan;
import dev.maxsim4j.internal.cuda.plan.GpuCapabilities;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * The GPU backend: fused forward kernels through the CUDA driver. Calls take turns under a lock (several
 * Java threads may call) and run on the device's stream; asynchronous calls stay in flight, on two streams
 * ({@link PipelinedCalls}). Host arrays are staged through pinned memory into grow-only scratch buffers;
 * documents made resident with {@link #makeResident} stay on the device and are not copied again (queries
 * too). This class keeps residency, the forward and the asynchronous calls; top-k ({@link DeviceTopK}),
 * training ({@link DeviceTraining}), the projection ({@link DeviceLinear}), fixed dimensional encodings
 * ({@link DeviceFde}) run in their own classes under the same lock, and {@link #withDevice} lends the device to
 * the benchmarks' measurements. Which forward kernel runs a launch is {@link ForwardPlan}'s job.
 */
public final class CudaBackend implements Backend {
  // a NaN: an unwritten score never passes as a number (callers see it as Float.NaN, as every NaN score)
  static final int POISON_SCORE = 0x7fc0dead;
  static final int POISON_ARGMAX = 0xdeadbeef;
  /** The poison of scores written straight to host memory: all-ones bytes, a NaN. */
  private static final byte POISON_BYTE = (byte) 0xff;

  private final CudaDevice device;
  private final int ordinal;
  /** The threads the caller asked for; the device does the work, so none are started. */
  private final int threads;
  private final ReentrantLock lock = new ReentrantLock();
  /** Page-locked host memory handed out by {@link DeviceAccess#allocatePinned} and not yet closed. */
  private final PinnedAllocations pinned = new PinnedAllocations(lock, this::freePinned);
  /** Documents {@link DeviceAccess#allocateDocuments} made and not yet closed; under the lock. */
  private final Set<DeviceDocuments> deviceDocuments = Collections.newSetFromMap(new IdentityHashMap<>());
  private final Launcher launcher;
  private final DeviceInputs inputs;
  private final ForwardKernels forward;
  private final DeviceTopK topK;
  private final DeviceTraining training;
  private final DeviceLinear linear;
  private final DeviceFde fde;
  /** The device memory calls may use: the cap of maxsim4j.cuda.memoryLimit, or what the device has free. */
  private volatile MemoryBudget memory;
  /** Asynchronous calls in flight; made on the first one. */
  private PipelinedCalls pipeline;
  /** Device accesses lent by {@link #withDevice} whose work has not returned; under the lock. */
  private int lent;
  private boolean closed;

  public CudaBackend(int threads) {
    this(threads, 0);
  }

  /** The backend of GPU {@code ordinal} (as the driver numbers the visible devices). */
  public CudaBackend(int threads, int ordinal) {
    this(threads, ordinal, ForwardKernels.RULES);
  }

  /** A backend whose forward launches are planned by {@code planner} (tests force kernels this way). */
  CudaBackend(int threads, ForwardKernels.Planner planner) {
    this(threads, 0, planner);
  }

  private CudaBackend(int threads, int ordinal, ForwardKernels.Planner planner) {
    if (threads < 1) {
      throw new IllegalArgumentException("threads = " + threads + "; expected >= 1");
    }
    this.threads = threads;
    this.memory = MemoryBudget.fromSystemProperty();
    this.ordinal = ordinal;
    // the device's context is current while it is made, the caller's again afterwards (see call)
    Driver.Context caller = CudaDevice.unavailableReason().isEmpty() ? CudaDevice.callerContext() : null;
    try {
      // what is made here is released if a later step fails: the caller never gets an instance to close
      CudaDevice madeDevice = new CudaDevice(ordinal);
      Launcher madeLauncher = null;
      try {
        madeLauncher = new Launcher(madeDevice);
        this.device = madeDevice;
        this.launcher = madeLauncher;
        this.forward = new ForwardKernels(device, launcher, planner);
        GpuCapabilities gpu = forward.capabilities();
        this.inputs = new DeviceInputs(device, (q, d) -> planner.halfCopy(q, d, gpu));
        this.topK = new DeviceTopK(device, launcher, forward, inputs);
        this.training = new DeviceTraining(device, launcher, forward, inputs);
        this.linear = new DeviceLinear(device, launcher);
        this.fde = new DeviceFde(device, launcher);
      } catch (RuntimeException | Error e) {
        try {
          madeDevice.close();
        } catch (RuntimeException | Error cleanup) {
          e.addSuppressed(cleanup);
        } finally {
          if (madeLauncher != null) {
            madeLauncher.close();
          }
        }
        throw e;
      }
    } finally {
      CudaDevice.restoreCurrent(caller);
    }
  }

  /** Why the GPU cannot be used here, or empty when it can. */
  public static Optional<String> unavailableReason() {
    return CudaDevice.unavailableReason();
  }

  /** Whether the CUDA driver reports a GPU here, whether or not maxsim4j can use it. */
  public static boolean gpuPresent() {
    return CudaDevice.gpuPresent();
  }

  @Override
  public String name() {
    return "cuda";
  }

  @Override
  public String description() {
    return ordinal == 0 ? deviceDescription() : "GPU " + ordinal + ": " + deviceDescription();
  }

  @Override
  public int threads() {
    return threads;
  }

  /** e.g. {@code NVIDIA H200 (sm_90, 132 SMs)}. */
  public String deviceDescription() {
    return device.name + " (sm_" + device.major + device.minor + ", " + device.multiprocessors + " SMs)";
  }

  /** What the forward's rules read of this GPU. */
  GpuCapabilities capabilities() {
    return forward.capabilities();
  }

  /** Device bytes a backend holds now and the most it held so far. */
  public record DeviceBytes(long held, long peak) {}

  /** Document chunks streamed from the host: copied from page-locked memory where they lie, or through staging. */
  public record ChunkCounts(long fromPageLocked, long staged) {}

  /** Device bytes this backend holds now and at most so far (scratch and resident batches). */
  public DeviceBytes allocatedBytes() {
    return new DeviceBytes(device.allocatedBytes(), device.peakAllocatedBytes());
  }

  /** The GPU's compute capability major version (9: Hopper, where the wgmma kernels run). */
  public int computeCapabilityMajor() {
    return device.major;
  }

  /** Bytes of the device buffer the forward saves its argmax in (0: never allocated). */
  public long argmaxBytes() {
    return call(() -> device.main.scratchBytes(ScratchSlot.ARGMAX));
  }

  /** Bytes of the device buffer compressed documents are expanded into (rule 21; 0: never allocated). */
  public long expandedDocumentsBytes() {
    return call(() -> device.main.scratchBytes(ScratchSlot.EXPANDED_DOCUMENTS));
  }

  /** The device's ordinal among the visible ones. */
  public int ordinal() {
    return ordinal;
  }

  /** Device bytes calls may still allocate: what the sharding of a resident batch across devices weighs. */
  public long freeBytes() {
    return call(this::availableBytes);
  }

  /** The driver's free device memory, in bytes. */
  public long deviceFreeBytes() {
    return call(() -> Driver.memInfo().free());
  }

  // ------------------------------------------------------------------ residency

  @Override
  public Residency makeResident(Tokens documents) {
    call(() -> {
      inputs.hold(documents);
      return null;
    });
    return new Residency() {
      private boolean released;

      @Override
      public void close() {
        lock.lock();
        try {
          if (released || closed) {
            return; // closing the backend already freed everything
          }
          released = true;
          keepingCallerContext(() -> {
            device.makeCurrent();
            inputs.release(documents);
            return null;
          });
        } finally {
          lock.unlock();
        }
      }
    };
  }

  // ------------------------------------------------------------------ forward

  @Override
  public float[] score(Problem problem, int[] argmax) {
    int pairs = problem.pairs();
    if (pairs == 0) {
      return new float[0];
    }
    return call(() -> forward(problem, argmax, scores -> {
      float[] out = new float[pairs];
      MemorySegment.copy(scores, JAVA_FLOAT, 0, out, 0, pairs);
      return Backend.canonicalScores(out, pairs);
    }));
  }

  @Override
  public boolean rowsFromFlatScores() {
    return false; // rows are filled from pinned memory
  }

  /** Each row straight from pinned memory: no flat array and second copy (128x128: 64 KB each). */
  @Override
  public float[][] scoreRows(Problem problem, int rows, int columns) {
    if (rows <= 1 || columns == 0) {
      return Backend.rows(score(problem, null), rows, columns);
    }
    return call(() -> forward(problem, null, scores -> rowsOf(scores, rows, columns)));
  }

  private static float[][] rowsOf(MemorySegment scores, int rows, int columns) {
    float[][] out = new float[rows][columns];
    for (int i = 0; i < rows; i++) {
      MemorySegment.copy(scores, JAVA_FLOAT, 4L * i * columns, out[i], 0, columns);
      Backend.canonicalScores(out[i], columns);
    }
    return out;
  }

  /**
   * Stages and launches the call, then returns: its kernel writes the scores straight into the pinned
   * memory of one of {@link PipelinedCalls#SLOTS} slots, and the pipeline's thread completes the future
   * once the call's event has passed. With a slot free, a call costs its caller only the host work of
   * staging and launching; the kernels of successive calls run back to back.
   */
  @Override
  public CompletableFuture<float[][]> scoreRowsAsync(Problem problem, int rows, int columns, Executor executor,
      BooleanSupplier cancelled) {
    int pairs = problem.pairs();
    if (!device.hostMapped) { // every call runs on the executor, in order
      return Backend.super.scoreRowsAsync(problem, rows, columns, executor, cancelled);
    }
    if (pairs == 0 || columns == 0) {
      float[][] empty = scoreRows(problem, rows, columns); // no device work
      return call(() -> pipeline == null ? CompletableFuture.completedFuture(empty) : pipeline.submitDone(empty));
    }
    return call(() -> {
      if (pipeline == null) {
        pipeline = new PipelinedCalls(device);
      }
      PipelinedCalls.Slot slot = pipeline.take();
      try {
        Tokens q = problem.queries();
        Staged in = inputs.stage(q, problem.documents(), 4L * pairs, slot::pinned, slot.lane);
        MemorySegment scores = in.download();
        scores.fill(POISON_BYTE);
        forward.launchOn(slot.lane, in.queries(), in.documents(), ForwardKernels.Pairs.of(problem),
            slot.deviceAddress(scores));
        return pipeline.submit(slot, scores, s -> rowsOf(s, rows, columns));
      } catch (RuntimeException | Error e) {
        try {
          Driver.synchronize(slot.lane.stream); // nothing queued may still read the slot's memory
        } catch (RuntimeException | Error failed) {
          e.addSuppressed(failed);
        } finally {
          pipeline.giveBack(slot); // a slot lost for good: after 8, take() would wait forever under the lock
        }
        throw e;
      }
    });
  }

  /**
   * One forward under the lock, its scores handed to {@code read} as pinned host memory after the
   * synchronisation (and the argmax, when asked for, copied into {@code argmax}). Scores only: the kernel
   * writes them straight into pinned memory, poisoned on the host, so the call is one launch and one
   * synchronisation (each driver call has a fixed cost a small call would feel). With the argmax, or without
   * unified addressing, they are poisoned in device buffers and copied down.
   */
  private <R> R forward(Problem problem, int[] argmax, Function<MemorySegment, R> read) {
    int pairs = problem.pairs();
    Tokens hostQueries = problem.queries();
    long outBytes = 4L * pairs + (argmax == null ? 0 : 4L * argmax.length);
    Staged in = inputs.stage(hostQueries, problem.documents(), outBytes);
    MemorySegment download = in.download();
    MemorySegment hostScores = download.asSlice(0, 4L * pairs);
    boolean direct = argmax == null && device.hostMapped;
    long scores;
    if (direct) {
      hostScores.fill(POISON_BYTE);
      scores = device.deviceAddress(hostScores);
    } else {
      scores = device.scratch(ScratchSlot.SCORES, 4L * pairs);
      Driver.fill32(scores, POISON_SCORE, pairs, device.stream);
    }
    long argmaxDevice = 0;
    if (argmax != null) {
      argmaxDevice = device.scratch(ScratchSlot.ARGMAX, 4L * argmax.length);
      Driver.fill32(argmaxDevice, POISON_ARGMAX, argmax.length, device.stream);
    }
    if (argmax == null) {
      forward.launch(in.queries(), in.documents(), ForwardKernels.Pairs.of(problem), scores);
    } else {
      forward.launchWithArgmax(in.queries(), in.documents(), ForwardKernels.Pairs.of(problem), scores, argmaxDevice,
          problem.argmaxStride(), false);
    }
    if (!direct) {
      Driver.copyToHost(hostScores, scores, 4L * pairs, device.stream);
    }
    if (argmax != null) {
      Driver.copyToHost(download.asSlice(4L * pairs), argmaxDevice, 4L * argmax.length, device.stream);
    }
    Driver.synchronize(device.stream);
    if (argmax != null) {
      MemorySegment.copy(download, JAVA_INT, 4L * pairs, argmax, 0, argmax.length);
    }
    return read.apply(hostScores);
  }

  // ------------------------------------------------------------------ other jobs, under the lock

  @Override
  public TopKResult topK(Tokens queries, Tokens documents, int k) {
    int keep = Math.min(k, documents.rows);
    if (queries.rows == 0 || keep == 0) {
      return new TopKResult(new float[queries.rows][0], new int[queries.rows][0]);
    }
    return call(() -> TopKQueryGroups.select(queries,
        DeviceTopK.queryGroupRows(queries.rows, documents.rows, keep, availableBytes()),
        group -> topK.topK(group, documents, keep, availableBytes())));
  }

  /**
   * Caps the device memory top-k and FDE encoding plan with, and that {@link #freeBytes} reports (what several GPUs'
   * shares of a resident batch are weighed by), at {@code bytes} (0: what the device has free, less headroom), as
   * the system property maxsim4j.cuda.memoryLimit does when the backend is made; other calls allocate what their
   * inputs need. Top-k over documents whose copy would not fit streams them from the host in chunks.
   */
  public void limitMemory(long bytes) {
    memory = new MemoryBudget(bytes);
  }

  /** Document chunks top-k has streamed from the host so far. */
  public ChunkCounts streamedChunks() {
    return call(topK::chunksStreamed);
  }

  /** Device bytes a call may still allocate. */
  private long availableBytes() {
    Driver.MemoryInfo info = Driver.memInfo();
    return memory.available(device.allocatedBytes(), info.free(), info.total());
  }

  // ------------------------------------------------------------------ the device lent to the benchmarks

  /**
   * Runs {@code work} with this backend's device under its lock: the benchmarks' measurements (device time, copy
   * bandwidth, corpora generated on the device) through a {@link DeviceAccess}, valid only inside {@code work}.
   * What it queued is waited for, and its scratch memory freed, before this returns.
   */
  public <T> T withDevice(Function<DeviceAccess, T> work) {
    return call(() -> {
      DeviceAccess access = new DeviceAccess(this, device, launcher, forward, training, inputs);
      T result;
      lent++;
      try {
        result = work.apply(access);
      } catch (RuntimeException | Error e) {
        try {
          access.end();
        } catch (RuntimeException | Error failed) {
          e.addSuppressed(failed);
        }
        throw e;
      } finally {
        lent--;
      }
      access.end();
      return result;
    });
  }

  /** Keeps {@code made} to free when this backend closes; under the lock. */
  DeviceDocuments register(DeviceDocuments made) {
    deviceDocuments.add(made);
    return made;
  }

  /** Each query's {@code k} best of documents written on the device. */
  public TopKResult topK(Tokens queries, DeviceDocuments onDevice, int k) {
    return call(() -> {
      DeviceTokens documents = onDevice.open(this);
      int keep = Math.min(k, documents.rows());
      if (queries.rows == 0 || keep < 1) {
        return new TopKResult(new float[queries.rows][0], new int[queries.rows][0]);
      }
      if (queries.dim != documents.dim() || queries.dtype != documents.dtype()) {
        throw new IllegalArgumentException("queries of " + queries.dtype + ", dim " + queries.dim
            + "; expected the documents' " + documents.dtype() + ", dim " + documents.dim());
      }
      return TopKQueryGroups.select(queries,
          DeviceTopK.queryGroupRows(queries.rows, documents.rows(), keep, availableBytes()),
          group -> topK.topK(group, documents, keep));
    });
  }

  void release(DeviceDocuments onDevice) {
    lock.lock();
    try {
      if (onDevice.closed() || closed) {
        return; // closing the backend already freed everything
      }
      onDevice.markClosed("these device documents are closed");
      keepingCallerContext(() -> {
        device.makeCurrent();
        device.synchronizeAll(); // where this fails they stay listed, and the backend's close frees them
        deviceDocuments.remove(onDevice);
        device.release(onDevice.pointer, onDevice.bytes);
        return null;
      });
    } finally {
      lock.unlock();
    }
  }

  /** Page-locked host memory kept to free when this backend closes; under the lock. */
  PinnedHostMemory registerPinned(MemorySegment allocation) {
    return pinned.add(allocation);
  }

  /** Frees pinned memory from {@link DeviceAccess#allocatePinned}; runs under the lock, before the device closes. */
  private void freePinned(MemorySegment allocation) {
    keepingCallerContext(() -> {
      device.makeCurrent();
      Releases releases = new Releases(); // freed even where the wait fails (a sticky error: nothing runs any more)
      releases.run(device::synchronizeAll); // a copy queued from or into it may still be running
      releases.run(() -> Driver.freeHost(allocation));
      releases.throwIfFailed();
      return null;
    });
  }

  /** The backward on the GPU: the argmax and dScores go up, dQ and dD (fp32) come back. */
  @Override
  public Gradients backward(Problem problem, int[] argmax, float[] dScores, boolean deterministic) {
    return call(() -> training.backward(problem, argmax, dScores, deterministic));
  }

  /** Forward with argmax, loss and backward on the device; scores, argmax and dScores never leave it. */
  @Override
  public LossStep lossStep(Problem problem, Loss loss, boolean deterministic) {
    if (problem.pairs() == 0) {
      return Backend.super.lossStep(problem, loss, deterministic);
    }
    return call(() -> training.lossStep(problem, loss, deterministic));
  }

  @Override
  public float[] project(float[] x, int rows, int in, float[] w, int out) {
    if ((long) rows * out == 0) {
      return new float[0];
    }
    return call(() -> linear.project(x, rows, in, w, out));
  }

  @Override
  public float[] projectionGradient(float[] x, int rows, int in, float[] dy, int out) {
    if ((long) in * out == 0) {
      return new float[0];
    }
    return call(() -> linear.weightGradient(x, rows, in, dy, out));
  }

  /** Fixed dimensional encodings by device kernels, rows in chunks within the memory calls may use. */
  @Override
  public float[][] encodeFde(FdeParameters parameters, Tokens tokens, boolean queries) {
    if (tokens.rows == 0) {
      return new float[0][];
    }
    return call(() -> fde.encode(parameters, tokens, queries, availableBytes()));
  }

  // ------------------------------------------------------------------ plumbing

  private interface DeviceCall<T> {
    T run();
  }

  private <T> T call(DeviceCall<T> body) {
    lock.lock();
    try {
      if (closed) {
        throw new IllegalStateException("this CUDA backend is closed");
      }
      return keepingCallerContext(() -> {
        device.makeCurrent();
        return body.run();
      });
    } finally {
      lock.unlock();
    }
  }

  /**
   * Runs {@code body}, which makes this device's context current, on the caller's thread, then makes current again
   * the context that thread had (another library's, or none): the caller's own CUDA work after a call runs where it
   * ran before, not on this GPU.
   */
  private static <T> T keepingCallerContext(DeviceCall<T> body) {
    Driver.Context caller = CudaDevice.callerContext();
    try {
      return body.run();
    } finally {
      CudaDevice.restoreCurrent(caller);
    }
  }

  /**
   * Closes the backend, whatever fails on the way: waits for the asynchronous calls in flight, invalidates the
   * pinned host memory and device documents still open (their later use throws {@link IllegalStateException}),
   * then frees them and everything else and releases the device. Throws the first failure, with the rest
   * suppressed; the backend is closed all the same, and a second close does nothing. Inside the work of
   * {@link #withDevice} it throws {@link IllegalStateException} and closes nothing.
   */
  @Override
  public void close() {
    close(PipelinedCalls.CLOSE_TIMEOUT);
  }

  /** {@link #close()}, waiting up to {@code callTimeout} for the asynchronous calls in flight. */
  void close(Duration callTimeout) {
    lock.lock();
    try {
      if (lent > 0) {
        throw new IllegalStateException("this CUDA backend closed inside the work of its withDevice call; expected"
            + " it closed once the work returns (the work's device memory is freed then)");
      }
      if (closed) {
        return;
      }
      closed = true;
      keepingCallerContext(() -> {
        releaseAll(callTimeout);
        return null;
      });
    } finally {
      lock.unlock();
    }
  }

  /** {@link #close(Duration)}'s work, under the lock: the device's context made current first. */
  private void releaseAll(Duration callTimeout) {
    Releases releases = new Releases();
    releases.run(device::makeCurrent);
    int[] running = {0};
    if (pipeline != null) {
      PipelinedCalls calls = pipeline;
      pipeline = null;
      releases.run(() -> running[0] = calls.close(callTimeout));
    }
    int held = pinned.close();
    for (DeviceDocuments d : deviceDocuments) {
      d.markClosed("these device documents' CUDA backend is closed");
    }
    if (running[0] > 0 || held > 0) {
      // A kernel still running may write into its call's pinned memory, and a native call may read the held
      // pinned memory, so nothing of the device is freed (the driver's frees would also wait for the kernel):
      // a leak until the process ends, rather than corrupted memory or a hang.
      releases.run(launcher::close); // host memory only, copied by the driver at each launch: no kernel reads it
      throw releases.suppressedIn(new IllegalStateException(leftAllocated(running[0], callTimeout, held)));
    }
    // work a failed call left queued may still read what is freed below: wait for it first, as every release does
    releases.run(device::synchronizeAll);
    releases.run(pinned::freeClosed);
    for (DeviceDocuments d : deviceDocuments) {
      releases.run(() -> device.release(d.pointer, d.bytes));
    }
    deviceDocuments.clear();
    releases.run(inputs::releaseAll);
    releases.run(topK::close);
    releases.run(device::close);
    releases.run(launcher::close);
    releases.throwIfFailed();
  }

  @Override
  public String toString() {
    return "the CUDA backend of GPU " + ordinal;
  }

  private String leftAllocated(int running, Duration callTimeout, int held) {
    StringBuilder why = new StringBuilder("this CUDA backend is closed, but ");
    if (running > 0) {
      why.append(running).append(" asynchronous call(s) still ran on the device after ")
          .append(callTimeout.toMillis()).append(" ms");
    }
    if (held > 0) {
      why.append(running > 0 ? " and " : "").append(held)
          .append(" pinned host memory block(s) were held by native calls on other threads");
    }
    return why.append(", so its device memory, pinned host memory and context on GPU ").append(ordinal)
        .append(" are left allocated: freeing memory still in use could corrupt it").toString();
  }
}
