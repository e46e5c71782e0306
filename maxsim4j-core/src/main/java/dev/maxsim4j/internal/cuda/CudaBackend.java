package dev.maxsim4j.internal.cuda;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.Problem;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cpu.CpuBackends;
import dev.maxsim4j.internal.cpu.TopKCollector;
import java.lang.foreign.MemorySegment;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.LongFunction;

/**
 * The GPU backend: fused forward kernels through the CUDA driver. Calls take turns under a lock (several
 * Java threads may call) and run on the device's stream; asynchronous calls stay in flight, on two streams
 * ({@link PipelinedCalls}). Host arrays are staged through
 * pinned memory into grow-only scratch buffers; documents made resident with {@link #makeResident} stay
 * on the device and are not copied again (queries too). The backward and the losses run on the device as
 * well (maxsim_backward.cu, maxsim_loss.cu). Which forward kernel runs a launch is {@link ForwardPlan}'s
 * job.
 */
public final class CudaBackend implements Backend {
  private static final String TOPK = "maxsim_topk";
  private static final String BACKWARD = "maxsim_backward";
  private static final String LOSS = "maxsim_loss";
  private static final String LINEAR = "maxsim_linear";
  private static final int LINEAR_TILE = 16;
  private static final int BACKWARD_WARPS = 8;
  private static final int OWNED_WARPS = 4;
  private static final int OWNED_FLOATS_PER_WARP = 2048;
  private static final int TOPK_THREADS = 1024;
  private static final int TOPK_SEGMENT = 2048;
  /** Largest k selected on the device: one segment sort keeps k of 2048, at least a 4x reduction. */
  private static final int TOPK_DEVICE_MAX_K = 512;
  /** The least time {@link #timeBatches} spends launching before it times. */
  private static final long TIMING_WARMUP_NANOS = 300_000_000L;

  /** Scores per top-k launch: bounds device and host buffers to Nq x block, never Nq x Nd. */
  private static final long TOPK_SCORES_PER_LAUNCH = 1L << 22;
  private static final int POISON_SCORE = 0x7fc0dead; // a NaN: an unwritten score can never pass as real
  private static final int POISON_ARGMAX = 0xdeadbeef;
  /** The poison of scores written straight to host memory: all-ones bytes, a NaN. */
  private static final byte POISON_BYTE = (byte) 0xff;

  private final CudaDevice device;
  private final Backend cpu;
  private final ReentrantLock lock = new ReentrantLock();
  private final KernelParams params = new KernelParams();
  private final ForwardKernels forward;
  private final Map<Tokens, Resident> resident = new IdentityHashMap<>();
  /** Asynchronous calls in flight; made on the first one. */
  private PipelinedCalls pipeline;
  private boolean closed;

  public CudaBackend(int cpuThreads) {
    this(cpuThreads, ForwardKernels.RULES);
  }

  /** A backend whose forward launches are planned by {@code planner} (tests force kernels this way). */
  CudaBackend(int cpuThreads, ForwardKernels.Planner planner) {
    this.device = new CudaDevice(0);
    this.cpu = CpuBackends.vectorUnavailableReason().isEmpty() ? CpuBackends.vector(cpuThreads)
        : CpuBackends.scalar(cpuThreads);
    this.forward = new ForwardKernels(device, params, planner);
  }

  /** Why the GPU cannot be used here, or empty when it can. */
  public static Optional<String> unavailableReason() {
    return CudaDevice.unavailableReason();
  }

  @Override
  public String name() {
    return "cuda";
  }

  @Override
  public String description() {
    return deviceDescription();
  }

  @Override
  public int threads() {
    return cpu.threads();
  }

  /** e.g. {@code NVIDIA H200 (sm_90, 132 SMs)}. */
  public String deviceDescription() {
    return device.name + " (sm_" + device.major + device.minor + ", " + device.multiprocessors + " SMs)";
  }

  /** Device bytes this backend holds now and at most so far (scratch and resident batches). */
  public long[] allocatedBytes() {
    return new long[] {device.allocatedBytes(), device.peakAllocatedBytes()};
  }

  /** The GPU's compute capability major version (9: Hopper, where the wgmma kernels run). */
  public int computeCapabilityMajor() {
    return device.major;
  }

  /** Bytes of the named scratch buffer this backend holds (0: never allocated), e.g. "argmax". */
  public long scratchBytes(String slot) {
    return call(() -> device.scratchBytes(slot));
  }

  /** Starts a new high-water mark of device bytes at what is allocated now. */
  public void resetPeakBytes() {
    call(() -> {
      device.resetPeak();
      return null;
    });
  }

  /** The driver's {free, total} device memory. */
  public long[] deviceMemoryInfo() {
    return call(Driver::memInfo);
  }

  // ------------------------------------------------------------------ residency

  /** A batch in device memory; uploading the same batch again shares it (counted), the last close frees it. */
  private static final class Resident {
    final DeviceTokens tokens;
    final long pointer;
    final long bytes;
    int holders = 1;

    Resident(DeviceTokens tokens, long pointer, long bytes) {
      this.tokens = tokens;
      this.pointer = pointer;
      this.bytes = bytes;
    }
  }

  @Override
  public AutoCloseable makeResident(Tokens documents) {
    call(() -> {
      Resident existing = resident.get(documents);
      if (existing != null) {
        existing.holders++;
      } else {
        long bytes = DeviceTokens.bytesFor(documents);
        long p = device.allocate(bytes);
        resident.put(documents, new Resident(DeviceTokens.upload(device, documents, p), p, bytes));
      }
      return null;
    });
    return new AutoCloseable() {
      private boolean released;

      @Override
      public void close() {
        lock.lock();
        try {
          if (released || closed) {
            return; // closing the backend already freed everything
          }
          released = true;
          device.makeCurrent();
          Resident r = resident.get(documents);
          if (r != null && --r.holders == 0) {
            resident.remove(documents);
            device.synchronizeAll(); // calls in flight on any lane may still read them
            device.release(r.pointer, r.bytes);
          }
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
      return out;
    }));
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
  public CompletableFuture<float[][]> scoreRowsAsync(Problem problem, int rows, int columns, Executor executor) {
    int pairs = problem.pairs();
    if (pairs == 0 || columns == 0 || !device.hostMapped) {
      return Backend.super.scoreRowsAsync(problem, rows, columns, executor);
    }
    return call(() -> {
      if (pipeline == null) {
        pipeline = new PipelinedCalls(device);
      }
      PipelinedCalls.Slot slot = pipeline.take();
      try {
        Tokens q = problem.queries();
        Staged in = stageInputs(q, problem.documents(), 4L * pairs, slot::pinned, slot.lane);
        MemorySegment scores = in.download();
        scores.fill(POISON_BYTE);
        forward.use(slot.lane);
        try {
          forward.launch(in.queries(), in.documents(), problem.kind() == Problem.Kind.ALL_PAIRS ? 0 : 1,
              problem.documentsPerQuery(), 0, pairs, slot.deviceAddress(scores), 0, problem.argmaxStride(),
              q.maxRowLength, q.rows);
        } finally {
          forward.use(device.main);
        }
        return pipeline.submit(slot, scores, s -> rowsOf(s, rows, columns));
      } catch (RuntimeException e) {
        Driver.synchronize(slot.lane.stream); // nothing queued may still read the slot's memory
        pipeline.giveBack(slot);
        throw e;
      }
    });
  }

  /**
   * One forward under the lock, its scores handed to {@code read} as pinned host memory after the
   * synchronisation (and the argmax, when asked for, copied into {@code argmax}). Scores only: the kernel
   * writes them straight into pinned memory, poisoned on the host, so the call is one launch and one
   * synchronisation (each driver call costs a few µs on the H200). With the argmax, or without unified
   * addressing, they are poisoned in device buffers and copied down.
   */
  private <R> R forward(Problem problem, int[] argmax, Function<MemorySegment, R> read) {
    int pairs = problem.pairs();
    Tokens hostQueries = problem.queries();
    long outBytes = 4L * pairs + (argmax == null ? 0 : 4L * argmax.length);
    Staged in = stageInputs(hostQueries, problem.documents(), outBytes);
    MemorySegment download = in.download();
    MemorySegment hostScores = download.asSlice(0, 4L * pairs);
    boolean direct = argmax == null && device.hostMapped;
    long scores;
    if (direct) {
      hostScores.fill(POISON_BYTE);
      scores = device.deviceAddress(hostScores);
    } else {
      scores = device.scratch("scores", 4L * pairs);
      Driver.fill32(scores, POISON_SCORE, pairs, device.stream);
    }
    long argmaxDevice = 0;
    if (argmax != null) {
      argmaxDevice = device.scratch("argmax", 4L * argmax.length);
      Driver.fill32(argmaxDevice, POISON_ARGMAX, argmax.length, device.stream);
    }
    forward.launch(in.queries(), in.documents(), problem.kind() == Problem.Kind.ALL_PAIRS ? 0 : 1,
        problem.documentsPerQuery(), 0, pairs, scores, argmaxDevice, problem.argmaxStride(),
        hostQueries.maxRowLength, hostQueries.rows);
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

  /** Inputs on the device and the pinned region results come back through. */
  private record Staged(DeviceTokens queries, DeviceTokens documents, MemorySegment download) {}

  /**
   * Copies the queries and the documents, unless resident, to the device asynchronously through one pinned
   * buffer laid out as [queries | documents | download], so a call needs a single synchronisation, at its
   * end. The caller must not ask the device for more pinned memory before that synchronisation.
   */
  private Staged stageInputs(Tokens queries, Tokens documents, long downloadBytes) {
    return stageInputs(queries, documents, downloadBytes, device::pinned, device.main);
  }

  /** As above, through the pinned memory {@code pinnedFor} gives for a size, on {@code lane}. */
  private Staged stageInputs(Tokens queries, Tokens documents, long downloadBytes,
      LongFunction<MemorySegment> pinnedFor, CudaDevice.Lane lane) {
    Resident rq = resident.get(queries);
    Resident rd = resident.get(documents);
    long queryBytes = rq != null ? 0 : DeviceTokens.align(DeviceTokens.bytesFor(queries));
    long docBytes = rd != null ? 0 : DeviceTokens.align(DeviceTokens.bytesFor(documents));
    MemorySegment pinned = pinnedFor.apply(queryBytes + docBytes + downloadBytes);
    DeviceTokens q = rq != null ? rq.tokens
        : DeviceTokens.uploadAsync(queries, lane.scratch("queries", queryBytes), pinned.asSlice(0, queryBytes),
            lane.stream);
    DeviceTokens d = rd != null ? rd.tokens
        : DeviceTokens.uploadAsync(documents, lane.scratch("documents", docBytes), pinned.asSlice(queryBytes, docBytes),
            lane.stream);
    return new Staged(q, d, pinned.asSlice(queryBytes + docBytes, downloadBytes));
  }

  // ------------------------------------------------------------------ benchmarking

  /**
   * Milliseconds per all-pairs forward launch on device-resident documents, by CUDA events: after
   * {@code warmup} launches, {@code batches} batches of {@code perBatch} back-to-back launches (launch gaps
   * hidden by the queue), rotating through {@code residentDocs} so the working set can exceed L2. Returns
   * the per-launch time of every batch, sorted.
   */
  public double[] timeAllPairsKernel(Tokens queries, java.util.List<Tokens> residentDocs, int warmup, int batches,
      int perBatch) {
    return call(() -> {
      DeviceTokens q = DeviceTokens.upload(device, queries, device.scratch("queries", DeviceTokens.bytesFor(queries)));
      DeviceTokens[] docs = new DeviceTokens[residentDocs.size()];
      for (int i = 0; i < docs.length; i++) {
        Resident r = resident.get(residentDocs.get(i));
        if (r == null) {
          throw new IllegalArgumentException("documents " + i + " are not resident; upload them first");
        }
        docs[i] = r.tokens;
      }
      int nd = residentDocs.get(0).rows;
      int pairs = queries.rows * nd;
      long scores = device.scratch("scores", 4L * pairs);
      int[] n = {0};
      return timeBatches(() -> forward.launch(q, docs[n[0]++ % docs.length], 0, nd, 0, pairs, scores, 0, 0,
          queries.maxRowLength, queries.rows), warmup, batches, perBatch);
    });
  }

  /**
   * Runs {@code launch} {@code warmup} times and for at least {@value #TIMING_WARMUP_NANOS} ns, then
   * {@code batches} batches of {@code perBatch} launches between two CUDA events; returns the per-launch
   * milliseconds of every batch, sorted. Called under the lock. The timed warm-up lets the JIT compile the
   * launch path first: ten launches left it interpreted, and where the host then takes longer per launch
   * than the kernel, the batch times the host (rule 5 of docs/design/kernel-selection.md).
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
      java.util.Arrays.sort(perLaunch);
      return perLaunch;
    } finally {
      Driver.destroyEvent(start);
      Driver.destroyEvent(end);
    }
  }

  /**
   * Milliseconds per training step on resident inputs by CUDA events: forward with argmax, dScores = 1
   * (the gradient of {@code scores.sum()}), backward into dQ and dD in the inputs' dtype
   * ({@code narrowGradients}) or fp32. {@code opBytes[0]} receives the device bytes the first step
   * allocated above what was held before it (scores, argmax, dScores, gradients, partial maxima): the op's
   * memory when this backend held only the inputs. Returns the per-step time of every batch, sorted.
   */
  public double[] timeTrainingStep(Tokens queries, Tokens documents, boolean deterministic, boolean narrowGradients,
      int warmup, int batches, int perBatch, long[] opBytes) {
    return call(() -> {
      if (resident.get(queries) == null || resident.get(documents) == null) {
        throw new IllegalArgumentException("upload the queries and the documents first");
      }
      Problem problem = Problem.allPairs(queries, documents);
      Staged in = stageInputs(queries, documents, 0);
      DType qType = narrowGradients ? queries.dtype : DType.FLOAT32;
      DType dType = narrowGradients ? documents.dtype : DType.FLOAT32;
      Driver.synchronize(device.stream);
      long before = device.allocatedBytes();
      long freeBefore = Driver.memInfo()[0];
      device.resetPeak();
      launchSumStep(problem, in, deterministic, qType, dType);
      Driver.synchronize(device.stream);
      opBytes[0] = device.peakAllocatedBytes() - before;
      if (opBytes.length > 1) {
        // the driver's view: free memory lost to the step (allocation granularity included; the step frees
        // nothing, its buffers stay as scratch)
        opBytes[1] = freeBefore - Driver.memInfo()[0];
      }
      return timeBatches(() -> launchSumStep(problem, in, deterministic, qType, dType), warmup, batches, perBatch);
    });
  }

  /** Forward with argmax, dScores = 1, backward: {@code scores.sum()} differentiated, all on the stream. */
  private void launchSumStep(Problem problem, Staged in, boolean deterministic, DType qType, DType dType) {
    int pairs = problem.pairs();
    int stride = problem.argmaxStride();
    long scores = device.scratch("scores", 4L * pairs);
    boolean argmax16 = forward.narrowArgmax(in.queries(), in.documents(), 0, problem.documentsPerQuery(), pairs,
        problem.queries().maxRowLength, problem.queries().rows);
    long argmax = device.scratch("argmax", Math.max(4, (argmax16 ? 2L : 4L) * pairs * stride));
    long dScores = device.scratch("dscores", 4L * pairs);
    forward.launch(in.queries(), in.documents(), 0, problem.documentsPerQuery(), 0, pairs, scores, argmax, stride,
        problem.queries().maxRowLength, problem.queries().rows, argmax16);
    Driver.fill32(dScores, Float.floatToRawIntBits(1f), pairs, device.stream);
    launchBackward(problem, in, argmax, argmax16, dScores, deterministic, qType, dType);
  }

  // ------------------------------------------------------------------ top-k

  @Override
  public TopKResult topK(Tokens queries, Tokens documents, int k) {
    int keep = Math.min(k, documents.rows);
    if (queries.rows == 0 || keep == 0) {
      return new TopKResult(new float[queries.rows][0], new int[queries.rows][0]);
    }
    return call(() -> {
      int width = (int) Math.max(1, Math.min(documents.rows, TOPK_SCORES_PER_LAUNCH / queries.rows));
      boolean onDevice = keep <= TOPK_DEVICE_MAX_K;
      Staged in = stageInputs(queries, documents, onDevice ? 8L * queries.rows * keep : 4L * queries.rows * width);
      long scores = device.scratch("scores", 4L * queries.rows * width);
      return onDevice
          ? topKOnDevice(in, queries, documents.rows, keep, width, scores)
          : topKMergedOnHost(in, queries, documents.rows, keep, width, scores);
    });
  }

  /**
   * Scores a block of documents at a time, keeps each (query, 2048-score segment)'s best k on the device
   * (maxsim_topk.cu), reduces the candidates until k remain per query, and brings back only Nq x k.
   */
  private TopKResult topKOnDevice(Staged in, Tokens queries, int nd, int keep, int width, long scores) {
    DeviceTokens q = in.queries();
    DeviceTokens d = in.documents();
    int nq = queries.rows;
    int chunks = (nd + width - 1) / width;
    int segmentsPerChunk = (width + TOPK_SEGMENT - 1) / TOPK_SEGMENT;
    long stride = (long) chunks * segmentsPerChunk * keep; // candidates per query after the first selection
    long candidates = device.scratch("topk-candidates", 8L * nq * stride);
    long reduced = device.scratch("topk-reduced", 8L * nq * stride);
    long best = device.scratch("topk-best", 8L * nq * keep);
    Driver.fill32(candidates, 0, 2L * nq * stride, device.stream); // key 0 pads what no segment writes
    MemorySegment fromScores = device.function(TOPK, "maxsim_topk_from_scores");
    MemorySegment fromKeys = device.function(TOPK, "maxsim_topk_from_keys");
    for (int c = 0; c < chunks; c++) {
      int j0 = c * width;
      int w = Math.min(width, nd - j0);
      forward.launch(q, d, 0, w, j0, nq * w, scores, 0, 0, queries.maxRowLength, nq);
      params.set(scores, w, j0, keep, candidates, stride, (long) c * segmentsPerChunk * keep);
      Driver.launch(fromScores, "maxsim_topk_from_scores", (w + TOPK_SEGMENT - 1) / TOPK_SEGMENT, nq,
          TOPK_THREADS, 0, device.stream, params.pointers());
    }
    long count = stride;
    while (count > TOPK_SEGMENT) { // each pass keeps k of every 2048: at least 4x fewer
      long segments = (count + TOPK_SEGMENT - 1) / TOPK_SEGMENT;
      params.set(candidates, stride, count, keep, reduced, stride);
      Driver.launch(fromKeys, "maxsim_topk_from_keys", Math.toIntExact(segments), nq, TOPK_THREADS, 0,
          device.stream, params.pointers());
      count = segments * keep;
      long swap = candidates;
      candidates = reduced;
      reduced = swap;
    }
    params.set(candidates, stride, count, keep, best, (long) keep); // last pass: sorted and compact
    Driver.launch(fromKeys, "maxsim_topk_from_keys", 1, nq, TOPK_THREADS, 0, device.stream, params.pointers());
    MemorySegment stage = in.download();
    Driver.copyToHost(stage, best, 8L * nq * keep, device.stream);
    Driver.synchronize(device.stream);
    float[][] outScores = new float[nq][keep];
    int[][] outDocs = new int[nq][keep];
    for (int i = 0; i < nq; i++) {
      for (int r = 0; r < keep; r++) {
        long key = stage.getAtIndex(JAVA_LONG, (long) i * keep + r);
        int ordered = (int) (key >>> 32);
        outScores[i][r] = Float.intBitsToFloat(ordered < 0 ? ordered & 0x7fffffff : ~ordered);
        outDocs[i][r] = ~(int) key;
      }
    }
    return new TopKResult(outScores, outDocs);
  }

  /** For k beyond what one 2048-key segment sorts well: blocks of scores come back and merge on the host. */
  private TopKResult topKMergedOnHost(Staged in, Tokens queries, int nd, int keep, int width, long scores) {
    DeviceTokens q = in.queries();
    DeviceTokens d = in.documents();
    int nq = queries.rows;
    MemorySegment stage = in.download();
    float[] host = new float[nq * width];
    TopKCollector collector = new TopKCollector(nq, keep);
    for (int j0 = 0; j0 < nd; j0 += width) {
      int w = Math.min(width, nd - j0);
      int pairs = nq * w;
      forward.launch(q, d, 0, w, j0, pairs, scores, 0, 0, queries.maxRowLength, nq);
      Driver.copyToHost(stage, scores, 4L * pairs, device.stream);
      Driver.synchronize(device.stream);
      MemorySegment.copy(stage, JAVA_FLOAT, 0, host, 0, pairs);
      for (int i = 0; i < nq; i++) {
        for (int c = 0; c < w; c++) {
          collector.offer(i, host[i * w + c], j0 + c);
        }
      }
    }
    return collector.result();
  }

  // ------------------------------------------------------------------ backward and losses

  /**
   * The backward on the GPU (maxsim_backward.cu): the argmax and dScores go up, dQ and dD (fp32) come
   * back. Inputs that are resident are not copied again.
   */
  @Override
  public Gradients backward(Problem problem, int[] argmax, float[] dScores, boolean deterministic) {
    Tokens q = problem.queries();
    Tokens d = problem.documents();
    return call(() -> {
      long dq = 4L * q.storedTokens * q.dim;
      long dd = 4L * d.storedTokens * d.dim;
      long argmaxBytes = DeviceTokens.align(4L * argmax.length);
      long dScoresBytes = DeviceTokens.align(4L * dScores.length);
      Staged in = stageInputs(q, d, argmaxBytes + dScoresBytes + DeviceTokens.align(dq) + dd);
      MemorySegment pinned = in.download();
      long argmaxDevice = device.scratch("argmax", argmaxBytes);
      long dScoresDevice = device.scratch("dscores", dScoresBytes);
      MemorySegment.copy(argmax, 0, pinned, JAVA_INT, 0, argmax.length);
      MemorySegment.copy(dScores, 0, pinned, JAVA_FLOAT, argmaxBytes, dScores.length);
      Driver.copyToDevice(argmaxDevice, pinned, argmaxBytes, device.stream);
      Driver.copyToDevice(dScoresDevice, pinned.asSlice(argmaxBytes), dScoresBytes, device.stream);
      long[] grads = launchBackward(problem, in, argmaxDevice, false, dScoresDevice, deterministic, DType.FLOAT32,
          DType.FLOAT32);
      MemorySegment out = pinned.asSlice(argmaxBytes + dScoresBytes);
      Driver.copyToHost(out, grads[0], dq, device.stream);
      Driver.copyToHost(out.asSlice(DeviceTokens.align(dq)), grads[1], dd, device.stream);
      Driver.synchronize(device.stream);
      float[] gq = new float[q.storedTokens * q.dim];
      float[] gd = new float[d.storedTokens * d.dim];
      MemorySegment.copy(out, JAVA_FLOAT, 0, gq, 0, gq.length);
      MemorySegment.copy(out, JAVA_FLOAT, DeviceTokens.align(dq), gd, 0, gd.length);
      return new Gradients(gq, gd);
    });
  }

  /**
   * dQ and dD into zeroed scratch ("grad-queries", "grad-documents"), in the given storage types; returns
   * their device pointers. dQ by gather; dD owned (deterministic) or atomic (fp32 only).
   */
  private long[] launchBackward(Problem problem, Staged in, long argmax, boolean argmax16, long dScores,
      boolean deterministic, DType queryGradType, DType documentGradType) {
    Tokens qt = problem.queries();
    Tokens dt = problem.documents();
    DeviceTokens q = in.queries();
    DeviceTokens d = in.documents();
    int dim = q.dim();
    int mode = problem.kind() == Problem.Kind.ALL_PAIRS ? 0 : 1;
    int perQuery = problem.documentsPerQuery();
    int stride = problem.argmaxStride();
    boolean atomic = !deterministic;
    if (atomic && documentGradType != DType.FLOAT32) {
      throw new UnsupportedOperationException("the atomic backward accumulates in fp32; narrowed gradients need "
          + "the deterministic backward");
    }
    DType ddType = documentGradType;
    long dqBytes = (long) qt.storedTokens * dim * queryGradType.byteSize();
    long ddBytes = (long) dt.storedTokens * dim * ddType.byteSize();
    long dQ = device.scratch("grad-queries", dqBytes);
    long dD = device.scratch("grad-documents", ddBytes);
    // the gather writes every token of every query row, and the owned dD kernel every token of every
    // document row: zeros are needed only for storage slots outside the rows (padding) and for atomics.
    // (rule 15 of docs/design/kernel-selection.md: a step skips memsets of every dD byte).
    boolean gradsCoverRows = qt.rows > 0 && stride > 0;
    if (!gradsCoverRows || !qt.rowsCoverStorage) {
      Driver.fill32(dQ, 0, (dqBytes + 3) / 4, device.stream);
    }
    if (!gradsCoverRows || atomic || !dt.rowsCoverStorage || dt.rows == 0 || dt.maxRowLength == 0) {
      Driver.fill32(dD, 0, (ddBytes + 3) / 4, device.stream);
    }
    if (qt.rows > 0 && stride > 0) {
      String width = argmax16 ? "a16_" : ""; // int16 argmax: entries for the half types only
      String dqKernel = "maxsim_backward_dq_" + width + ForwardPlan.suffix(d.dtype());
      params.set(d.data(), d.rowStart(), d.rowLength(), q.rowStart(), q.rowLength(), argmax, stride, dScores, mode,
          perQuery, dim, dQ, gradientType(queryGradType));
      Driver.launch(device.function(BACKWARD, dqKernel), dqKernel, qt.rows,
          (stride + BACKWARD_WARPS - 1) / BACKWARD_WARPS, BACKWARD_WARPS * 32, 0, device.stream, params.pointers());
      if (atomic) {
        String kernel = "maxsim_backward_dd_atomic_" + width + ForwardPlan.suffix(q.dtype());
        params.set(q.data(), q.rowStart(), q.rowLength(), d.rowStart(), d.rowLength(), argmax, stride, dScores, mode,
            perQuery, dim, dD);
        Driver.launch(device.function(BACKWARD, kernel), kernel, problem.pairs(),
            (stride + BACKWARD_WARPS - 1) / BACKWARD_WARPS, BACKWARD_WARPS * 32, 0, device.stream, params.pointers());
      } else if (dt.rows > 0 && dt.maxRowLength > 0) {
        String kernel = "maxsim_backward_dd_owned_" + width + ForwardPlan.suffix(q.dtype());
        int tokensPerWarp = Math.max(1, Math.min(32, OWNED_FLOATS_PER_WARP / dim));
        int tokensPerBlock = OWNED_WARPS * tokensPerWarp;
        params.set(q.data(), q.rowStart(), q.rowLength(), d.rowStart(), d.rowLength(), argmax, stride, dScores, mode,
            perQuery, qt.rows, dim, dD, gradientType(documentGradType));
        Driver.launch(device.function(BACKWARD, kernel), kernel, dt.rows,
            (dt.maxRowLength + tokensPerBlock - 1) / tokensPerBlock, OWNED_WARPS * 32,
            4 * tokensPerBlock * dim, device.stream, params.pointers());
      }
    }
    return new long[] {dQ, dD};
  }

  private static int gradientType(DType t) {
    return switch (t) {
      case FLOAT32 -> 0;
      case FLOAT16 -> 1;
      case BFLOAT16 -> 2;
    };
  }

  /**
   * Forward with argmax, loss and backward on the device (maxsim_loss.cu, maxsim_backward.cu): scores,
   * argmax and dScores never leave it; the row losses, the scores and fp32 gradients come back.
   */
  @Override
  public LossStep lossStep(Problem problem, dev.maxsim4j.Loss loss, boolean deterministic) {
    Tokens q = problem.queries();
    Tokens d = problem.documents();
    int rows = q.rows;
    int pairs = problem.pairs();
    if (pairs == 0) {
      return Backend.super.lossStep(problem, loss, deterministic);
    }
    return call(() -> {
      float[] lossInput = lossInput(loss);
      long dq = 4L * q.storedTokens * q.dim;
      long dd = 4L * d.storedTokens * d.dim;
      long inputBytes = DeviceTokens.align(4L * lossInput.length);
      long scoreBytes = DeviceTokens.align(4L * pairs);
      long rowBytes = DeviceTokens.align(4L * rows);
      Staged in = stageInputs(q, d, inputBytes + scoreBytes + rowBytes + DeviceTokens.align(dq) + dd);
      MemorySegment pinned = in.download();
      long lossInputDevice = device.scratch("loss-input", inputBytes);
      if (lossInput.length > 0) {
        MemorySegment.copy(lossInput, 0, pinned, JAVA_FLOAT, 0, lossInput.length);
        Driver.copyToDevice(lossInputDevice, pinned, inputBytes, device.stream);
      }
      DeviceStep step = launchLossStep(problem, in, loss, lossInputDevice, deterministic, DType.FLOAT32,
          DType.FLOAT32);
      MemorySegment out = pinned.asSlice(inputBytes);
      Driver.copyToHost(out, step.scores(), 4L * pairs, device.stream);
      Driver.copyToHost(out.asSlice(scoreBytes), step.rowLoss(), 4L * rows, device.stream);
      Driver.copyToHost(out.asSlice(scoreBytes + rowBytes), step.dQ(), dq, device.stream);
      Driver.copyToHost(out.asSlice(scoreBytes + rowBytes + DeviceTokens.align(dq)), step.dD(), dd, device.stream);
      Driver.synchronize(device.stream);
      float[] scores = new float[pairs];
      MemorySegment.copy(out, JAVA_FLOAT, 0, scores, 0, pairs);
      double total = 0;
      for (int i = 0; i < rows; i++) { // fixed order, float64
        total += out.getAtIndex(JAVA_FLOAT, scoreBytes / 4 + i);
      }
      float[] gq = new float[q.storedTokens * q.dim];
      float[] gd = new float[d.storedTokens * d.dim];
      MemorySegment.copy(out, JAVA_FLOAT, scoreBytes + rowBytes, gq, 0, gq.length);
      MemorySegment.copy(out, JAVA_FLOAT, scoreBytes + rowBytes + DeviceTokens.align(dq), gd, 0, gd.length);
      return new LossStep(total / rows, scores, new Gradients(gq, gd));
    });
  }

  /** Device pointers of one training step's results. */
  private record DeviceStep(long scores, long rowLoss, long dQ, long dD) {}

  /** The loss's own inputs as one float array (positives as int bits, teacher scores or margins). */
  private static float[] lossInput(dev.maxsim4j.Loss loss) {
    return switch (loss) {
      case dev.maxsim4j.Loss.Contrastive c -> {
        int[] p = c.positives();
        float[] f = new float[p == null ? 0 : p.length];
        for (int i = 0; i < f.length; i++) {
          f[i] = Float.intBitsToFloat(p[i]);
        }
        yield f;
      }
      case dev.maxsim4j.Loss.KlDistillation k -> k.teacherFlat();
      case dev.maxsim4j.Loss.MarginMse m -> m.teacherMargins();
    };
  }

  /** Forward (with argmax), loss and backward, queued on the stream; nothing is copied back. */
  private DeviceStep launchLossStep(Problem problem, Staged in, dev.maxsim4j.Loss loss, long lossInput,
      boolean deterministic, DType queryGradType, DType documentGradType) {
    Tokens q = problem.queries();
    int rows = q.rows;
    int columns = problem.documentsPerQuery();
    int pairs = problem.pairs();
    int stride = problem.argmaxStride();
    long scores = device.scratch("scores", 4L * pairs);
    int mode = problem.kind() == Problem.Kind.ALL_PAIRS ? 0 : 1;
    boolean argmax16 = forward.narrowArgmax(in.queries(), in.documents(), mode, columns, pairs, q.maxRowLength, rows);
    long argmaxBytes = (argmax16 ? 2L : 4L) * pairs * stride;
    long argmax = device.scratch("argmax", Math.max(4, argmaxBytes));
    long rowLoss = device.scratch("loss-rows", 4L * rows);
    long dScores = device.scratch("dscores", 4L * pairs);
    Driver.fill32(scores, POISON_SCORE, pairs, device.stream);
    Driver.fill32(argmax, POISON_ARGMAX, (argmaxBytes + 3) / 4, device.stream);
    forward.launch(in.queries(), in.documents(), mode, columns, 0, pairs, scores, argmax, stride, q.maxRowLength, rows,
        argmax16);
    String kernel;
    switch (loss) {
      case dev.maxsim4j.Loss.Contrastive c -> {
        kernel = "maxsim_loss_cross_entropy";
        params.set(scores, rows, columns, c.positives() == null ? 0L : lossInput,
            Float.floatToRawIntBits(c.temperature()), rowLoss, dScores);
      }
      case dev.maxsim4j.Loss.KlDistillation k -> {
        kernel = "maxsim_loss_kl";
        params.set(scores, lossInput, rows, columns, Float.floatToRawIntBits(k.temperature()), rowLoss, dScores);
      }
      case dev.maxsim4j.Loss.MarginMse m -> {
        kernel = "maxsim_loss_margin_mse";
        params.set(scores, lossInput, rows, rowLoss, dScores);
      }
    }
    boolean perRowBlock = !(loss instanceof dev.maxsim4j.Loss.MarginMse);
    Driver.launch(device.function(LOSS, kernel), kernel, perRowBlock ? rows : (rows + 255) / 256, 1, 256, 0,
        device.stream, params.pointers());
    long[] grads = launchBackward(problem, in, argmax, argmax16, dScores, deterministic, queryGradType,
        documentGradType);
    return new DeviceStep(scores, rowLoss, grads[0], grads[1]);
  }

  // ------------------------------------------------------------------ projection layer

  @Override
  public float[] project(float[] x, int rows, int in, float[] w, int out) {
    return linear("maxsim_linear_forward", x, w, rows, in, out, out, rows, (long) rows * out);
  }

  @Override
  public float[] projectionGradient(float[] x, int rows, int in, float[] dy, int out) {
    return linear("maxsim_linear_weight_gradient", x, dy, rows, in, out, out, in, (long) in * out);
  }

  /**
   * One launch of maxsim_linear.cu: both operands up through one pinned buffer, the output poisoned, then
   * computed over a grid of 16 x 16 tiles ({@code columns} x {@code rows} of the output) and copied back.
   */
  private float[] linear(String kernel, float[] a, float[] b, int rows, int in, int out, int columns, int outputRows,
      long results) {
    if (results == 0) {
      return new float[0];
    }
    return call(() -> {
      long aBytes = DeviceTokens.align(Math.max(4, 4L * a.length));
      long bBytes = DeviceTokens.align(Math.max(4, 4L * b.length));
      long outBytes = 4L * results;
      MemorySegment pinned = device.pinned(aBytes + bBytes + outBytes);
      MemorySegment.copy(a, 0, pinned, JAVA_FLOAT, 0, a.length);
      MemorySegment.copy(b, 0, pinned, JAVA_FLOAT, aBytes, b.length);
      long deviceA = device.scratch("linear-a", aBytes);
      long deviceB = device.scratch("linear-b", bBytes);
      long deviceOut = device.scratch("linear-out", outBytes);
      Driver.copyToDevice(deviceA, pinned, aBytes, device.stream);
      Driver.copyToDevice(deviceB, pinned.asSlice(aBytes), bBytes, device.stream);
      Driver.fill32(deviceOut, POISON_SCORE, results, device.stream);
      params.set(deviceA, deviceB, deviceOut, rows, in, out);
      Driver.launch(device.function(LINEAR, kernel), kernel, (columns + LINEAR_TILE - 1) / LINEAR_TILE,
          (outputRows + LINEAR_TILE - 1) / LINEAR_TILE, LINEAR_TILE * LINEAR_TILE, 0, device.stream, params.pointers());
      MemorySegment download = pinned.asSlice(aBytes + bBytes, outBytes);
      Driver.copyToHost(download, deviceOut, outBytes, device.stream);
      Driver.synchronize(device.stream);
      float[] result = new float[Math.toIntExact(results)];
      MemorySegment.copy(download, JAVA_FLOAT, 0, result, 0, result.length);
      return result;
    });
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
      device.makeCurrent();
      return body.run();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void close() {
    lock.lock();
    try {
      if (closed) {
        return;
      }
      device.makeCurrent();
      if (pipeline != null) {
        pipeline.close(); // the calls in flight complete first
        pipeline = null;
      }
      for (Resident r : resident.values()) {
        device.release(r.pointer, r.bytes);
      }
      resident.clear();
      device.close();
      cpu.close();
      params.close();
      closed = true;
    } finally {
      lock.unlock();
    }
  }
}
