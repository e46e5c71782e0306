package dev.maxsim4j.internal.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.Problem;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cpu.CpuBackends;
import dev.maxsim4j.internal.cpu.TopKCollector;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The GPU backend: fused forward kernels through the CUDA driver. Calls are serialised on one stream by a
 * lock (several Java threads may call; they take turns on the device). Host arrays are staged through
 * pinned memory into grow-only scratch buffers; documents made resident with {@link #makeResident} stay
 * on the device and are not copied again. The backward runs on the CPU from the argmax the GPU recorded
 * (the GPU backward is issue 4).
 */
public final class CudaBackend implements Backend {
  private static final String FORWARD = "maxsim_forward";
  private static final String FORWARD_MMA = "maxsim_forward_mma";
  private static final String TOPK = "maxsim_topk";
  private static final String MERGE = "maxsim_merge";
  private static final int MERGE_WARPS = 8;
  private static final int SPLIT_BLOCKS_PER_SM = 8;
  private static final int SPLIT_MIN_SLICE = 512;
  private static final int TOPK_THREADS = 1024;
  private static final int TOPK_SEGMENT = 2048;
  /** Largest k selected on the device: one segment sort keeps k of 2048, at least a 4x reduction. */
  private static final int TOPK_DEVICE_MAX_K = 512;
  private static final int THREADS = 256;
  private static final int MMA_THREADS = 128;
  private static final int MMA_CHUNK = 32;
  private static final int MMA_LOAD_GROUP = 4;
  private static final int GROUP_QUERIES = 4;
  private static final int GROUP_ROWS = 32;
  private static final int MMA_REGISTER_CHUNKS = 4;
  static final String VARIANT_PROPERTY = "maxsim4j.cuda.variant";
  /**
   * Shared memory for the query fragments of one pass. Above 48 KB a kernel needs the opt-in attribute;
   * 96 KB holds 32 query rows even at d = 1024 (one pass, each document read once), and leaves room for
   * two blocks per SM on sm_80+ (whose opt-in maximum is at least 99 KB; less is clamped below).
   */
  private static final int MMA_FRAGMENT_BUDGET = 96 * 1024;
  private static final int MMA_STATIC_SHARED = 4 * 1024 + 512;
  /** Scores per top-k launch: bounds device and host buffers to Nq x block, never Nq x Nd. */
  private static final long TOPK_SCORES_PER_LAUNCH = 1L << 22;
  private static final int POISON_SCORE = 0x7fc0dead; // a NaN: an unwritten score can never pass as real
  private static final int POISON_ARGMAX = 0xdeadbeef;
  private static final int MAX_PARAMS = 24;

  private final CudaDevice device;
  private final Backend cpu;
  private final ReentrantLock lock = new ReentrantLock();
  /** {@value #VARIANT_PROPERTY}, read once: forces a kernel variant for A/B measurements (null: by rule). */
  private final String forcedVariant = System.getProperty(VARIANT_PROPERTY);
  /**
   * Kernel parameters: one 8-byte slot per argument and the array of pointers to the slots that
   * cuLaunchKernel takes. The driver reads them during the launch call, so one block, used under the lock,
   * serves every launch (no allocation per call).
   */
  private final Arena launchArena = Arena.ofShared();
  private final MemorySegment paramSlots = launchArena.allocate(8L * MAX_PARAMS, 8);
  private final MemorySegment paramPointers = launchArena.allocate(ADDRESS, MAX_PARAMS);
  private final Map<Tokens, Resident> resident = new IdentityHashMap<>();
  private boolean closed;

  public CudaBackend(int cpuThreads) {
    this.device = new CudaDevice(0);
    this.cpu = CpuBackends.vectorUnavailableReason().isEmpty() ? CpuBackends.vector(cpuThreads)
        : CpuBackends.scalar(cpuThreads);
    for (int i = 0; i < MAX_PARAMS; i++) {
      paramPointers.setAtIndex(ADDRESS, i, paramSlots.asSlice(8L * i, 8));
    }
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
            Driver.synchronize(device.stream);
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
    return call(() -> {
      Tokens hostQueries = problem.queries();
      long outBytes = 4L * pairs + (argmax == null ? 0 : 4L * argmax.length);
      Staged in = stageInputs(hostQueries, problem.documents(), outBytes);
      DeviceTokens q = in.queries();
      DeviceTokens d = in.documents();
      MemorySegment download = in.download();
      long scores = device.scratch("scores", 4L * pairs);
      long argmaxDevice = 0;
      int stride = problem.argmaxStride();
      if (argmax != null) {
        argmaxDevice = device.scratch("argmax", 4L * argmax.length);
        Driver.fill32(argmaxDevice, POISON_ARGMAX, argmax.length, device.stream);
      }
      Driver.fill32(scores, POISON_SCORE, pairs, device.stream);
      boolean allPairs = problem.kind() == Problem.Kind.ALL_PAIRS;
      launchForward(q, d, allPairs ? 0 : 1, problem.documentsPerQuery(), 0, pairs, scores, argmaxDevice, stride,
          hostQueries.maxRowLength, hostQueries.rows);
      Driver.copyToHost(download, scores, 4L * pairs, device.stream);
      if (argmax != null) {
        Driver.copyToHost(download.asSlice(4L * pairs), argmaxDevice, 4L * argmax.length, device.stream);
      }
      Driver.synchronize(device.stream);
      float[] out = new float[pairs];
      MemorySegment.copy(download, JAVA_FLOAT, 0, out, 0, pairs);
      if (argmax != null) {
        MemorySegment.copy(download, JAVA_INT, 4L * pairs, argmax, 0, argmax.length);
      }
      return out;
    });
  }

  /** Inputs on the device and the pinned region results come back through. */
  private record Staged(DeviceTokens queries, DeviceTokens documents, MemorySegment download) {}

  /**
   * Copies the queries (and the documents, unless resident) to the device asynchronously through one
   * pinned buffer laid out as [queries | documents | download], so a call needs a single synchronisation,
   * at its end. The caller must not ask the device for more pinned memory before that synchronisation.
   */
  private Staged stageInputs(Tokens queries, Tokens documents, long downloadBytes) {
    Resident r = resident.get(documents);
    long queryBytes = DeviceTokens.align(DeviceTokens.bytesFor(queries));
    long docBytes = r != null ? 0 : DeviceTokens.align(DeviceTokens.bytesFor(documents));
    MemorySegment pinned = device.pinned(queryBytes + docBytes + downloadBytes);
    DeviceTokens q = DeviceTokens.uploadAsync(device, queries, device.scratch("queries", queryBytes),
        pinned.asSlice(0, queryBytes));
    DeviceTokens d = r != null ? r.tokens
        : DeviceTokens.uploadAsync(device, documents, device.scratch("documents", docBytes),
            pinned.asSlice(queryBytes, docBytes));
    return new Staged(q, d, pinned.asSlice(queryBytes + docBytes, downloadBytes));
  }

  /**
   * Launches one forward over {@code pairs} pairs. Tensor cores ({@code maxsim_forward_mma}) when queries
   * and documents share a half type, d is a multiple of 8 (16-byte rows) and the GPU supports that type's
   * mma; otherwise the fp32 FFMA kernel, which is also the fp32-accuracy path for fp32 inputs. Few pairs
   * with long documents are split along Ld ({@link #splitFor}) and merged by a second launch.
   */
  private void launchForward(DeviceTokens q, DeviceTokens d, int mode, int perQuery, int docOffset, int pairs,
      long scores, long argmax, int argmaxStride, int maxQueryLength, int queries) {
    // bf16 mma needs sm_80; fp16 has tensor cores from sm_75 (m16n8k8, see maxsim_forward_mma.cu)
    boolean tensorCores = q.dtype() == d.dtype() && q.dim() % 8 == 0
        && (q.dtype() == DType.BFLOAT16 && device.major >= 8
            || q.dtype() == DType.FLOAT16 && (device.major > 7 || device.major == 7 && device.minor >= 5));
    if (!tensorCores) {
      String kernel = FORWARD + "_" + suffix(q.dtype()) + "_" + suffix(d.dtype());
      setParams(q.data(), q.rowStart(), q.rowLength(), q.mask(), d.data(), d.rowStart(), d.rowLength(), d.mask(),
          d.validCount(), q.dim(), mode, perQuery, docOffset, 0L, scores, argmax, argmaxStride);
      Driver.launch(device.function(FORWARD, kernel), kernel, pairs, 1, THREADS, 0, device.stream, paramPointers);
      return;
    }
    String module = q.dtype() == DType.FLOAT16 && "k8".equals(forcedVariant) ? FORWARD_MMA + "_k8" : FORWARD_MMA;
    int chunks = (q.dim() + MMA_CHUNK - 1) / MMA_CHUNK;
    long groupBlocks = (long) perQuery * ((queries + GROUP_QUERIES - 1) / GROUP_QUERIES);
    Split groupSplit = splitFor(groupBlocks, d.maxLength());
    boolean groups = mode == 0 && docOffset == 0
        && queryGroupsPay(queries, groupBlocks * groupSplit.slices(), maxQueryLength, chunks);
    Split split = groups ? groupSplit : splitFor(pairs, d.maxLength());
    long partialMax = 0;
    long partialArgmax = 0;
    if (split.slices() > 1) {
      long partials = (long) pairs * split.slices() * maxQueryLength;
      partialMax = device.scratch("partial-max", 4L * partials);
      partialArgmax = device.scratch("partial-argmax", 4L * partials);
    }
    String kernel;
    int blocks;
    int sharedBytes;
    if (groups) {
      kernel = FORWARD + "_group4_" + suffix(q.dtype());
      sharedBytes = GROUP_ROWS * GROUP_QUERIES / 16 * chunks * 1024;
      blocks = Math.toIntExact(groupBlocks);
      setParams(q.data(), q.rowStart(), q.rowLength(), q.mask(), d.data(), d.rowStart(), d.rowLength(), d.mask(),
          d.validCount(), q.dim(), queries, perQuery, scores, argmax, argmaxStride, split.sliceTokens(), partialMax,
          partialArgmax, maxQueryLength);
    } else {
      int mTiles = maxQueryLength <= 32 ? 2 : 8;
      int tilesPerPass = Math.max(1, Math.min(mTiles, fragmentBudget() / (chunks * 1024)));
      sharedBytes = tilesPerPass * chunks * 1024;
      kernel = FORWARD + "_mma" + mmaVariant(mTiles, chunks) + "_" + suffix(q.dtype());
      blocks = pairs;
      setParams(q.data(), q.rowStart(), q.rowLength(), q.mask(), d.data(), d.rowStart(), d.rowLength(), d.mask(),
          d.validCount(), q.dim(), mode, perQuery, docOffset, 0L, scores, argmax, argmaxStride, 16 * tilesPerPass,
          split.sliceTokens(), partialMax, partialArgmax, maxQueryLength);
    }
    MemorySegment fn = device.function(module, kernel);
    if (sharedBytes > 48 * 1024) {
      device.allowDynamicSharedMemory(fn, sharedBytes);
    }
    Driver.launch(fn, kernel, blocks, split.slices(), MMA_THREADS, sharedBytes, device.stream, paramPointers);
    if (split.slices() > 1) {
      setParams(partialMax, partialArgmax, split.slices(), split.sliceTokens(), maxQueryLength, q.rowStart(),
          q.rowLength(), q.mask(), d.rowLength(), d.validCount(), mode, perQuery, docOffset, scores, argmax,
          argmaxStride, (long) pairs);
      Driver.launch(device.function(MERGE, "maxsim_merge_slices"), "maxsim_merge_slices",
          (pairs + MERGE_WARPS - 1) / MERGE_WARPS, 1, MERGE_WARPS * 32, 0, device.stream, paramPointers);
    }
  }

  /** How a launch splits documents along Ld: {@code slices} blocks per pair, {@code sliceTokens} tokens each. */
  private record Split(int slices, int sliceTokens) {
    static final Split NONE = new Split(1, 0);
  }

  /**
   * Split-Ld for launches of too few blocks with long documents (16 x 32 pairs of 8192 tokens: 512 blocks
   * of 8192 tokens each, about one per SM slot): slices of at least {@value #SPLIT_MIN_SLICE} tokens until
   * the grid has {@value #SPLIT_BLOCKS_PER_SM} blocks per SM. The property value "nosplit" turns it off.
   */
  private Split splitFor(long blocks, int maxDocumentLength) {
    long wanted = (long) SPLIT_BLOCKS_PER_SM * device.multiprocessors;
    if (blocks >= wanted || maxDocumentLength < 2 * SPLIT_MIN_SLICE || "nosplit".equals(forcedVariant)) {
      return Split.NONE;
    }
    long slices = Math.min((wanted + blocks - 1) / blocks, maxDocumentLength / SPLIT_MIN_SLICE);
    int step = 64; // a multiple of every kernel's token step (warps x 8 x n-tiles)
    int sliceTokens = (int) ((maxDocumentLength + slices - 1) / slices + step - 1) / step * step;
    int count = (maxDocumentLength + sliceTokens - 1) / sliceTokens;
    return count < 2 ? Split.NONE : new Split(count, sliceTokens);
  }

  /** Dynamic shared memory a tensor-core launch may use for query fragments on this device. */
  private int fragmentBudget() {
    return Math.min(MMA_FRAGMENT_BUDGET, device.sharedMemoryPerBlockOptin - MMA_STATIC_SHARED);
  }

  /**
   * Whether stacking 4 queries per block pays. A/B on the H200 (docs/results/ab-groups-*): 8x1000 and
   * 128x128 (x32x300x128) 22% and 10% faster; 16x32x32x8192 1.6x slower, because 4 groups x 32 documents
   * is 128 blocks for 132 SMs. So: only while the groups (with their split-Ld slices, counted in
   * {@code blocks}) still give several blocks per SM. The property value "pair" turns groups off.
   */
  private boolean queryGroupsPay(int queries, long blocks, int maxQueryLength, int chunks) {
    return queries > 1 && maxQueryLength <= GROUP_ROWS
        && GROUP_ROWS * GROUP_QUERIES / 16 * chunks * 1024 <= fragmentBudget()
        && blocks >= 4L * device.multiprocessors
        && !"pair".equals(forcedVariant);
  }

  /**
   * Which tensor-core variant (see maxsim_forward_mma.cu) runs a launch. By an A/B run of every applicable
   * variant on the H200 (docs/benchmarks.md, docs/results/ab-variants-*): for d <= 128 the variant with
   * query fragments in registers and the next n-tile's loads issued early ("2rp") was fastest on every
   * shape but d = 64, where plain "2" was ~5% ahead (within run-to-run spread); beyond d = 128, two n-tiles
   * per step ("2n"); beyond 32 query rows per pass, "8n". The system property {@value #VARIANT_PROPERTY}
   * forces a variant where it applies, for such measurements.
   */
  private String mmaVariant(int mTiles, int chunks) {
    if (mTiles == 8) {
      return "8n";
    }
    boolean fitsRegisters = chunks <= MMA_LOAD_GROUP && chunks <= MMA_REGISTER_CHUNKS;
    String forced = forcedVariant;
    if (forced != null) {
      boolean applies = switch (forced) {
        case "2", "2n" -> true;
        case "2p" -> chunks <= MMA_LOAD_GROUP;
        case "2r", "2rp" -> fitsRegisters;
        default -> false;
      };
      if (applies) {
        return forced;
      }
    }
    return fitsRegisters ? "2rp" : "2n";
  }

  private static String suffix(DType t) {
    return switch (t) {
      case FLOAT32 -> "f32";
      case FLOAT16 -> "f16";
      case BFLOAT16 -> "bf16";
    };
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
      int n = 0;
      for (int i = 0; i < warmup; i++) {
        launchForward(q, docs[n++ % docs.length], 0, nd, 0, pairs, scores, 0, 0, queries.maxRowLength, queries.rows);
      }
      MemorySegment start = Driver.createEvent();
      MemorySegment end = Driver.createEvent();
      try {
        double[] perLaunch = new double[batches];
        for (int b = 0; b < batches; b++) {
          Driver.record(start, device.stream);
          for (int i = 0; i < perBatch; i++) {
            launchForward(q, docs[n++ % docs.length], 0, nd, 0, pairs, scores, 0, 0, queries.maxRowLength, queries.rows);
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
    });
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
      launchForward(q, d, 0, w, j0, nq * w, scores, 0, 0, queries.maxRowLength, nq);
      setParams(scores, w, j0, keep, candidates, stride, (long) c * segmentsPerChunk * keep);
      Driver.launch(fromScores, "maxsim_topk_from_scores", (w + TOPK_SEGMENT - 1) / TOPK_SEGMENT, nq,
          TOPK_THREADS, 0, device.stream, paramPointers);
    }
    long count = stride;
    while (count > TOPK_SEGMENT) { // each pass keeps k of every 2048: at least 4x fewer
      long segments = (count + TOPK_SEGMENT - 1) / TOPK_SEGMENT;
      setParams(candidates, stride, count, keep, reduced, stride);
      Driver.launch(fromKeys, "maxsim_topk_from_keys", Math.toIntExact(segments), nq, TOPK_THREADS, 0,
          device.stream, paramPointers);
      count = segments * keep;
      long swap = candidates;
      candidates = reduced;
      reduced = swap;
    }
    setParams(candidates, stride, count, keep, best, (long) keep); // last pass: sorted and compact
    Driver.launch(fromKeys, "maxsim_topk_from_keys", 1, nq, TOPK_THREADS, 0, device.stream, paramPointers);
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
      launchForward(q, d, 0, w, j0, pairs, scores, 0, 0, queries.maxRowLength, nq);
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

  /** Writes kernel arguments into the reused parameter block (ints take 4 bytes of their 8-byte slot). */
  private void setParams(Object... args) {
    for (int i = 0; i < args.length; i++) {
      if (args[i] instanceof Integer v) {
        paramSlots.set(JAVA_INT, 8L * i, v);
      } else {
        paramSlots.set(JAVA_LONG, 8L * i, (Long) args[i]);
      }
    }
  }

  // ------------------------------------------------------------------ backward

  @Override
  public Gradients backward(Problem problem, int[] argmax, float[] dScores) {
    return cpu.backward(problem, argmax, dScores);
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
      for (Resident r : resident.values()) {
        device.release(r.pointer, r.bytes);
      }
      resident.clear();
      device.close();
      cpu.close();
      launchArena.close();
      closed = true;
    } finally {
      lock.unlock();
    }
  }
}
