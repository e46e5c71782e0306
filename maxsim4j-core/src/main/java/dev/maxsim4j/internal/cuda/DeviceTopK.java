package dev.maxsim4j.internal.cuda;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.maxsim4j.internal.Backend.TopKResult;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cpu.TopKCollector;
import dev.maxsim4j.internal.cuda.DeviceInputs.Staged;
import java.lang.foreign.MemorySegment;

/**
 * Top-k on the GPU: the forward scores a block of documents at a time and maxsim_topk.cu keeps the best k of
 * every segment on the device, so only Nq x k comes back. Used under the backend's lock.
 */
final class DeviceTopK {
  private static final String TOPK = "maxsim_topk";
  private static final int TOPK_THREADS = 1024;
  private static final int TOPK_SEGMENT = 2048;
  /** Largest k selected on the device: one segment sort keeps k of 2048, at least a 4x reduction. */
  private static final int TOPK_DEVICE_MAX_K = 512;
  /** Scores per top-k launch: bounds device and host buffers to Nq x block, never Nq x Nd. */
  private static final long TOPK_SCORES_PER_LAUNCH = 1L << 22;

  private final CudaDevice device;
  private final KernelParams params;
  private final ForwardKernels forward;
  private final DeviceInputs inputs;

  DeviceTopK(CudaDevice device, KernelParams params, ForwardKernels forward, DeviceInputs inputs) {
    this.device = device;
    this.params = params;
    this.forward = forward;
    this.inputs = inputs;
  }

  /** Each query's {@code keep} best documents, {@code keep} at least 1 and at most the documents. */
  TopKResult topK(Tokens queries, Tokens documents, int keep) {
    int width = (int) Math.max(1, Math.min(documents.rows, TOPK_SCORES_PER_LAUNCH / queries.rows));
    boolean onDevice = keep <= TOPK_DEVICE_MAX_K;
    Staged in = inputs.stage(queries, documents, onDevice ? 8L * queries.rows * keep : 4L * queries.rows * width);
    long scores = device.scratch(ScratchSlot.SCORES, 4L * queries.rows * width);
    return onDevice
        ? onDevice(in, queries, documents.rows, keep, width, scores)
        : mergedOnHost(in, queries, documents.rows, keep, width, scores);
  }

  /**
   * Scores a block of documents at a time, keeps each (query, 2048-score segment)'s best k on the device
   * (maxsim_topk.cu), reduces the candidates until k remain per query, and brings back only Nq x k.
   */
  private TopKResult onDevice(Staged in, Tokens queries, int nd, int keep, int width, long scores) {
    DeviceTokens q = in.queries();
    DeviceTokens d = in.documents();
    int nq = queries.rows;
    int chunks = (nd + width - 1) / width;
    int segmentsPerChunk = (width + TOPK_SEGMENT - 1) / TOPK_SEGMENT;
    long stride = (long) chunks * segmentsPerChunk * keep; // candidates per query after the first selection
    long candidates = device.scratch(ScratchSlot.TOPK_CANDIDATES, 8L * nq * stride);
    long reduced = device.scratch(ScratchSlot.TOPK_REDUCED, 8L * nq * stride);
    long best = device.scratch(ScratchSlot.TOPK_BEST, 8L * nq * keep);
    Driver.fill32(candidates, 0, 2L * nq * stride, device.stream); // key 0 pads what no segment writes
    MemorySegment fromScores = device.function(TOPK, "maxsim_topk_from_scores");
    MemorySegment fromKeys = device.function(TOPK, "maxsim_topk_from_keys");
    for (int c = 0; c < chunks; c++) {
      int j0 = c * width;
      int w = Math.min(width, nd - j0);
      forward.launch(q, d, 0, w, j0, nq * w, scores, 0, 0, queries.maxRowLength, nq);
      params.set(new KernelArgs.TopKFromScores(scores, w, j0, keep, candidates, stride,
          (long) c * segmentsPerChunk * keep));
      Driver.launch(fromScores, "maxsim_topk_from_scores", (w + TOPK_SEGMENT - 1) / TOPK_SEGMENT, nq,
          TOPK_THREADS, 0, device.stream, params.pointers());
    }
    long count = stride;
    while (count > TOPK_SEGMENT) { // each pass keeps k of every 2048: at least 4x fewer
      long segments = (count + TOPK_SEGMENT - 1) / TOPK_SEGMENT;
      params.set(new KernelArgs.TopKFromKeys(candidates, stride, count, keep, reduced, stride));
      Driver.launch(fromKeys, "maxsim_topk_from_keys", Math.toIntExact(segments), nq, TOPK_THREADS, 0,
          device.stream, params.pointers());
      count = segments * keep;
      long swap = candidates;
      candidates = reduced;
      reduced = swap;
    }
    params.set(new KernelArgs.TopKFromKeys(candidates, stride, count, keep, best, keep)); // last: sorted, compact
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
  private TopKResult mergedOnHost(Staged in, Tokens queries, int nd, int keep, int width, long scores) {
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
}
