package dev.maxsim4j.internal.cuda;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.Backend.TopKResult;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cpu.TopKCollector;
import dev.maxsim4j.internal.cuda.DeviceInputs.Staged;
import dev.maxsim4j.internal.cuda.DocumentChunks.Chunk;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan;
import dev.maxsim4j.internal.cuda.plan.GpuCapabilities;
import dev.maxsim4j.internal.cuda.plan.KernelModule;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Top-k on the GPU: the forward scores a block of documents at a time and maxsim_topk.cu keeps the best k of
 * every segment on the device, so only Nq x k comes back. Documents whose device copy would not fit in the
 * memory the backend may use are streamed from the host in chunks ({@link StreamedChunks}), each scored while
 * the next is copied, their candidates kept with the others: the result is the one the whole batch gives (for
 * compressed documents, which a budget may keep from being expanded first, up to a score's last bits: rule 21).
 * Used under the backend's lock.
 */
final class DeviceTopK implements AutoCloseable {
  private static final int TOPK_THREADS = 1024;
  private static final int TOPK_SEGMENT = 2048;
  /** Largest k selected on the device (maxsim_topk.cu's MAX_K): a segment keeps k of 2048, at least 4x fewer. */
  private static final int TOPK_DEVICE_MAX_K = 512;
  /** Scores per top-k launch: bounds device and host buffers to Nq x block, never Nq x Nd. */
  private static final long TOPK_SCORES_PER_LAUNCH = 1L << 22;
  /** Device memory kept free for a forward's own scratch (partial maxima, counters) beside a streamed call's. */
  private static final long FORWARD_SCRATCH_BYTES = 64L << 20;

  private final CudaDevice device;
  private final Launcher launcher;
  private final ForwardKernels forward;
  private final DeviceInputs inputs;
  private final StreamedChunks streamed;

  DeviceTopK(CudaDevice device, Launcher launcher, ForwardKernels forward, DeviceInputs inputs) {
    this.device = device;
    this.launcher = launcher;
    this.forward = forward;
    this.inputs = inputs;
    this.streamed = new StreamedChunks(device);
  }

  /**
   * Each query's {@code keep} best documents, {@code keep} at least 1 and at most the documents. Documents not
   * resident whose copy with the call's buffers exceeds {@code availableBytes} of device memory are streamed.
   */
  TopKResult topK(Tokens queries, Tokens documents, int keep, long availableBytes) {
    int nq = queries.rows;
    int width = width(nq, documents.rows);
    boolean resident = inputs.resident(documents) != null;
    long needed = (resident ? 0 : DeviceTokens.bytesFor(documents)) + callBytes(queries, documents.rows, keep, width)
        + (inputs.halfCopy(queries, documents) ? HalfOperands.bytes(queries) : 0);
    if (!resident && needed > availableBytes) {
      return streamed(queries, documents, keep, width, availableBytes);
    }
    // compressed documents are expanded first (rule 21) only where their buffer fits too
    boolean mayExpand = needed + expansionBytes(queries, documents, forward.capabilities()) <= availableBytes;
    Staged in = inputs.stage(queries, documents, downloadBytes(nq, keep, width));
    return whole(in, queries, documents.rows, keep, width, mayExpand);
  }

  /** As above for documents already on the device (written there: {@link DeviceDocuments}). */
  TopKResult topK(Tokens queries, DeviceTokens documents, int keep) {
    int width = width(queries.rows, documents.rows());
    Staged in = inputs.stageQueries(queries, downloadBytes(queries.rows, keep, width));
    return whole(new Staged(in.queries(), documents, in.download()), queries, documents.rows(), keep, width, true);
  }

  private TopKResult whole(Staged in, Tokens queries, int nd, int keep, int width, boolean mayExpand) {
    Selection s = selection(in, queries, keep, width, segments(nd, width), mayExpand);
    for (int j0 = 0; j0 < nd; j0 += width) {
      s.block(in.documents(), j0, Math.min(width, nd - j0), j0);
    }
    return s.finish();
  }

  /**
   * Chunks of documents copied while the previous one is scored; the candidates of all of them kept together. The
   * chunks take the memory, so compressed ones are scored as stored, never expanded first (rule 21).
   */
  private TopKResult streamed(Tokens queries, Tokens documents, int keep, int width, long availableBytes) {
    List<Chunk> chunks = chunks(queries, documents, keep, width, availableBytes);
    long segments = 0;
    long bufferBytes = 0;
    for (Chunk c : chunks) {
      segments += segments(c.rows(), width);
      bufferBytes = Math.max(bufferBytes, DocumentChunks.deviceBytes(documents, c.rows(), c.tokens()));
    }
    Staged in = inputs.stageQueries(queries, downloadBytes(queries.rows, keep, width));
    Selection s = selection(in, queries, keep, width, segments, false);
    streamed.forEach(documents, chunks, bufferBytes, (d, c) -> {
      for (int j0 = 0; j0 < c.rows(); j0 += width) {
        s.block(d, j0, Math.min(width, c.rows() - j0), c.firstRow() + j0);
      }
    });
    return s.finish();
  }

  /**
   * The chunks a streamed call copies: two buffers of the largest one, beside the call's own buffers and the
   * candidates of the segments its chunk boundaries add, fit {@code availableBytes}.
   */
  static List<Chunk> chunks(Tokens queries, Tokens documents, int keep, int width, long availableBytes) {
    long reserve = callBytes(queries, documents.rows, keep, width);
    // a document past the usual chunk size still streams, alone in its chunk, when two of it fit
    long largest = DocumentChunks.deviceBytes(documents, 1, documents.maxRowLength);
    List<Chunk> chunks = DocumentChunks.plan(documents, MemoryBudget.chunkBytes(availableBytes, reserve, largest));
    // a chunk boundary may split a segment: its candidates come out of the chunks' share
    long extra = 0;
    if (chunks.size() > 1 && keep <= TOPK_DEVICE_MAX_K) {
      extra = 16L * queries.rows * keep * chunks.size();
      chunks = DocumentChunks.plan(documents, MemoryBudget.chunkBytes(availableBytes, reserve + extra, largest));
    }
    // smaller chunks may add more segments than that share holds: shrink them until it holds their own
    for (long added = addedCandidateBytes(queries, documents, keep, width, chunks); added > extra;
        added = addedCandidateBytes(queries, documents, keep, width, chunks)) {
      extra = added;
      chunks = DocumentChunks.plan(documents, MemoryBudget.chunkBytes(availableBytes, reserve + extra, largest));
    }
    return chunks;
  }

  /** Device bytes of the candidates of the segments {@code chunks} add to those of the whole batch. */
  private static long addedCandidateBytes(Tokens queries, Tokens documents, int keep, int width, List<Chunk> chunks) {
    if (keep > TOPK_DEVICE_MAX_K) {
      return 0;
    }
    long segments = -segments(documents.rows, width);
    for (Chunk c : chunks) {
      segments += segments(c.rows(), width);
    }
    return 16L * queries.rows * keep * Math.max(0, segments);
  }

  /**
   * Queries per device top-k call over {@code nd} documents when calls may use {@code availableBytes}: at most
   * {@link TopKQueryGroups#MAX_QUERIES}, halved while their candidates would take more than half of it. Past 2048
   * queries a launch scores fewer than 2048 documents, each keeping {@code keep} candidates a query, so the
   * candidates grow with the square of the queries; at most 2048 they grow with the queries alone.
   */
  static int queryGroupRows(int nq, int nd, int keep, long availableBytes) {
    int rows = Math.min(nq, TopKQueryGroups.MAX_QUERIES);
    int floor = (int) (TOPK_SCORES_PER_LAUNCH / TOPK_SEGMENT);
    while (keep <= TOPK_DEVICE_MAX_K && rows > floor
        && 16L * rows * segments(nd, width(rows, nd)) * keep > availableBytes / 2) {
      rows = Math.max(floor, (rows + 1) / 2);
    }
    return rows;
  }

  /** Documents per forward launch for {@code nq} queries. */
  static int width(int nq, int nd) {
    return (int) Math.max(1, Math.min(nd, TOPK_SCORES_PER_LAUNCH / nq));
  }

  /** The 2048-score segments of {@code nd} documents scored in blocks of {@code width}. */
  static long segments(int nd, int width) {
    long perBlock = (width + TOPK_SEGMENT - 1) / TOPK_SEGMENT;
    int rest = nd % width;
    return (long) (nd / width) * perBlock + (rest + TOPK_SEGMENT - 1) / TOPK_SEGMENT;
  }

  /** Device bytes of a call besides the documents: queries, a block of scores, candidates, the forward's scratch. */
  static long callBytes(Tokens queries, int nd, int keep, int width) {
    int nq = queries.rows;
    long bytes = DeviceTokens.bytesFor(queries) + 4L * nq * width + FORWARD_SCRATCH_BYTES;
    if (keep <= TOPK_DEVICE_MAX_K) {
      bytes += 16L * nq * segments(nd, width) * keep + 8L * nq * keep;
    }
    return bytes;
  }

  /**
   * Device bytes a forward of {@code queries} against the whole of {@code documents} on {@code gpu} may take to
   * expand them (rule 21 of {@link ForwardPlan}): 2 a stored value; 0 where no launch of theirs can, or where that is
   * over the expansion's cap.
   */
  static long expansionBytes(Tokens queries, Tokens documents, GpuCapabilities gpu) {
    long bytes = 2L * documents.storedTokens * documents.dim;
    return bytes <= ForwardPlan.EXPANDED_MAX_BYTES && ForwardPlan.expansionPossible(queries.dtype, queries.rows,
        queries.maxRowLength, documents.dtype, documents.dim, gpu) ? bytes : 0;
  }

  private static long downloadBytes(int nq, int keep, int width) {
    return keep <= TOPK_DEVICE_MAX_K ? 8L * nq * keep : 4L * nq * width;
  }

  private Selection selection(Staged in, Tokens queries, int keep, int width, long segments, boolean mayExpand) {
    return keep <= TOPK_DEVICE_MAX_K ? new OnDevice(in, queries, keep, width, segments, mayExpand)
        : new MergedOnHost(in, queries, keep, width, mayExpand);
  }

  /** Where the scores of each block of documents go. */
  private interface Selection {
    /** Scores documents {@code first .. first + w - 1} of {@code d}, which are the batch's from {@code global}. */
    void block(DeviceTokens d, int first, int w, int global);

    TopKResult finish();
  }

  /**
   * Keeps each (query, 2048-score segment)'s best k on the device (maxsim_topk.cu), reduces the candidates until
   * k remain per query, and brings back only Nq x k.
   */
  private final class OnDevice implements Selection {
    private final Staged in;
    private final int nq;
    private final int maxQueryLength;
    private final int keep;
    private final long stride; // candidates per query after the first selection
    private final long scores;
    private final long candidates;
    private final long reduced;
    private final long best;
    private final boolean mayExpand;
    private long segmentsUsed;

    OnDevice(Staged in, Tokens queries, int keep, int width, long segments, boolean mayExpand) {
      this.in = in;
      this.mayExpand = mayExpand;
      this.nq = queries.rows;
      this.maxQueryLength = queries.maxRowLength;
      this.keep = keep;
      this.stride = segments * keep;
      this.scores = device.scratch(ScratchSlot.SCORES, 4L * nq * width);
      this.candidates = device.scratch(ScratchSlot.TOPK_CANDIDATES, 8L * nq * stride);
      this.reduced = device.scratch(ScratchSlot.TOPK_REDUCED, 8L * nq * stride);
      this.best = device.scratch(ScratchSlot.TOPK_BEST, 8L * nq * keep);
      Driver.fill32(candidates, 0, 2L * nq * stride, device.stream); // key 0 pads what no segment writes
    }

    @Override
    public void block(DeviceTokens d, int first, int w, int global) {
      forward.launch(in.queries(), d, ForwardKernels.Pairs.all(nq, maxQueryLength, w, first), scores, mayExpand);
      int blockSegments = (w + TOPK_SEGMENT - 1) / TOPK_SEGMENT;
      launcher.launch(new KernelLaunch(KernelModule.TOPK, "maxsim_topk_from_scores", blockSegments, nq, TOPK_THREADS,
          new KernelArgs.TopKFromScores(scores, w, global, keep, candidates, stride, segmentsUsed * keep)),
          device.stream);
      segmentsUsed += blockSegments;
    }

    @Override
    public TopKResult finish() {
      long count = stride;
      long from = candidates;
      long to = reduced;
      while (count > TOPK_SEGMENT) { // each pass keeps k of every 2048: at least 4x fewer
        long segments = (count + TOPK_SEGMENT - 1) / TOPK_SEGMENT;
        launcher.launch(new KernelLaunch(KernelModule.TOPK, "maxsim_topk_from_keys", Math.toIntExact(segments), nq,
            TOPK_THREADS, new KernelArgs.TopKFromKeys(from, stride, count, keep, to, stride)), device.stream);
        count = segments * keep;
        long swap = from;
        from = to;
        to = swap;
      }
      // the last pass: sorted, compact
      launcher.launch(new KernelLaunch(KernelModule.TOPK, "maxsim_topk_from_keys", 1, nq, TOPK_THREADS,
          new KernelArgs.TopKFromKeys(from, stride, count, keep, best, keep)), device.stream);
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
  }

  /** For k beyond maxsim_topk.cu's MAX_K: blocks of scores come back and merge on the host. */
  private final class MergedOnHost implements Selection {
    private final Staged in;
    private final int nq;
    private final int maxQueryLength;
    private final long scores;
    private final float[] host;
    private final TopKCollector collector;
    private final boolean mayExpand;

    MergedOnHost(Staged in, Tokens queries, int keep, int width, boolean mayExpand) {
      this.in = in;
      this.mayExpand = mayExpand;
      this.nq = queries.rows;
      this.maxQueryLength = queries.maxRowLength;
      this.scores = device.scratch(ScratchSlot.SCORES, 4L * nq * width);
      this.host = new float[nq * width];
      this.collector = new TopKCollector(nq, keep);
    }

    @Override
    public void block(DeviceTokens d, int first, int w, int global) {
      int pairs = nq * w;
      forward.launch(in.queries(), d, ForwardKernels.Pairs.all(nq, maxQueryLength, w, first), scores, mayExpand);
      MemorySegment stage = in.download();
      Driver.copyToHost(stage, scores, 4L * pairs, device.stream);
      Driver.synchronize(device.stream);
      MemorySegment.copy(stage, JAVA_FLOAT, 0, host, 0, pairs);
      Backend.canonicalScores(host, pairs);
      for (int i = 0; i < nq; i++) {
        for (int c = 0; c < w; c++) {
          collector.offer(i, host[i * w + c], global + c);
        }
      }
    }

    @Override
    public TopKResult finish() {
      return collector.result();
    }
  }

  /** Chunks streamed so far: {from page-locked memory, through staging}. */
  CudaBackend.ChunkCounts chunksStreamed() {
    return streamed.chunksCopied();
  }

  @Override
  public void close() {
    streamed.close();
  }
}
