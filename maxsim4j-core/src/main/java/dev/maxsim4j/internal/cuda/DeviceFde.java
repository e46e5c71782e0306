package dev.maxsim4j.internal.cuda;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;

import dev.maxsim4j.internal.FdeParameters;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cuda.plan.KernelModule;
import dev.maxsim4j.internal.cuda.plan.KernelType;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Fixed dimensional encodings on the GPU (maxsim_fde.cu), bit for bit {@link dev.maxsim4j.internal.FdeEncoding}'s.
 * The encoder's matrix (and sketch table) go up once per call; the rows go in chunks of whole rows whose device
 * buffers fit {@link #CHUNK_BYTES}: a chunk's tokens up as stored, then widened (exactly, to float64) and
 * compacted, multiplied, partitioned (and sketched), its encodings down. A call's device memory is one allocation,
 * freed before it returns. Used under the backend's lock.
 */
final class DeviceFde {
  /** A chunk's device buffers at most: enough rows to fill the GPU, little beside its memory. */
  static final long CHUNK_BYTES = 512L << 20;
  private static final int THREADS = 256;
  private static final int TILE_M = 128;
  private static final int TILE_N = 64;
  /** Blocks per SM of the gather's grid-stride loop. */
  private static final int GATHER_BLOCKS_PER_SM = 8;

  private final CudaDevice device;
  private final Launcher launcher;

  DeviceFde(CudaDevice device, Launcher launcher) {
    this.device = device;
    this.launcher = launcher;
  }

  /** Every row's encoding; {@code available}: the device bytes the call may allocate. */
  float[][] encode(FdeParameters p, Tokens t, boolean queries, long available) {
    long weightBytes = DeviceTokens.align(8L * p.weights().length);
    SketchTable sketch = p.finalDim() > 0 ? sketchTable(p) : null;
    long tableBytes = sketch == null ? 0 : sketch.deviceBytes();
    long budget = Math.min(CHUNK_BYTES, available - weightBytes - tableBytes);
    List<DocumentChunks.Chunk> chunks = plan(t, p, budget, weightBytes + tableBytes, available);
    long chunkBytes = 0;
    for (DocumentChunks.Chunk c : chunks) {
      chunkBytes = Math.max(chunkBytes, new Layout(t, p, c).bytes);
    }
    long total = weightBytes + tableBytes + chunkBytes;
    long base = device.allocate(total);
    Throwable failure = null;
    try {
      long weights = base;
      long table = base + weightBytes;
      upload(p, sketch, weights, table, weightBytes);
      float[][] out = new float[t.rows][];
      for (DocumentChunks.Chunk c : chunks) {
        encodeChunk(p, t, c, queries, weights, table, sketch, base + weightBytes + tableBytes, out);
      }
      return out;
    } catch (RuntimeException | Error e) {
      failure = e;
      throw e;
    } finally {
      // freed even when the wait reports a failed launch; the call's own failure stays the one thrown
      Releases releases = new Releases();
      releases.run(() -> Driver.synchronize(device.stream)); // nothing queued may still use the memory
      releases.run(() -> device.release(base, total));
      if (failure != null) {
        releases.suppressedIn(failure);
      } else {
        releases.throwIfFailed();
      }
    }
  }

  /** The matrix, and the sketch table after it, up through pinned memory. */
  private void upload(FdeParameters p, SketchTable sketch, long weights, long table, long weightBytes) {
    long bytes = weightBytes + (sketch == null ? 0 : 4L * (sketch.bucketStart().length + sketch.members().length));
    MemorySegment pinned = device.pinned(bytes);
    MemorySegment.copy(p.weights(), 0, pinned, JAVA_DOUBLE_UNALIGNED, 0, p.weights().length);
    if (p.weights().length > 0) { // no hyperplanes and no projection: nothing to multiply by
      Driver.copyToDevice(weights, pinned, 8L * p.weights().length, device.stream);
    }
    if (sketch != null) {
      MemorySegment at = pinned.asSlice(weightBytes);
      int[] start = sketch.bucketStart();
      MemorySegment.copy(start, 0, at, JAVA_INT_UNALIGNED, 0, start.length);
      Driver.copyToDevice(table, at, 4L * start.length, device.stream);
      MemorySegment members = at.asSlice(4L * start.length);
      MemorySegment.copy(sketch.members(), 0, members, JAVA_INT_UNALIGNED, 0, sketch.members().length);
      Driver.copyToDevice(table + sketch.startBytes(), members, 4L * sketch.members().length,
          device.stream);
    }
    Driver.synchronize(device.stream); // the pinned memory stages the chunks next
  }

  /**
   * The sketch as the kernel reads it: {@code bucketStart} each bucket's first entry in {@code members} (and one
   * past the last), {@code members} every bucket's coordinates ascending, {@code i} for sign +1 and {@code ~i} for -1.
   */
  record SketchTable(int[] bucketStart, int[] members) {
    /** Bytes of {@code bucketStart} on the device, where {@code members} begin (aligned). */
    long startBytes() {
      return DeviceTokens.align(4L * bucketStart.length);
    }

    /** Bytes of both on the device. */
    long deviceBytes() {
      return startBytes() + DeviceTokens.align(4L * members.length);
    }
  }

  /** The sketch table of {@code p}'s final projection. */
  static SketchTable sketchTable(FdeParameters p) {
    int[] bucket = p.finalBucket();
    int[] start = new int[p.finalDim() + 1];
    for (int b : bucket) {
      start[b + 1]++;
    }
    for (int j = 0; j < p.finalDim(); j++) {
      start[j + 1] += start[j];
    }
    int[] next = start.clone();
    int[] members = new int[bucket.length];
    for (int i = 0; i < bucket.length; i++) {
      members[next[bucket[i]]++] = p.finalSign()[i] > 0 ? i : ~i;
    }
    return new SketchTable(start, members);
  }

  /** Where one chunk's buffers lie from the start of the chunk area, and their total. */
  private static final class Layout {
    final long tokens = 0;
    final long slots;
    final long rowFirst;
    final long compact;
    final long products;
    final long patterns;
    final long raw;
    final long out;
    final long bytes;

    Layout(Tokens t, FdeParameters p, DocumentChunks.Chunk c) {
      this(t, p, c.rows(), c.tokens(), validTokens(t, c.firstRow(), c.firstRow() + c.rows()));
    }

    Layout(Tokens t, FdeParameters p, int rows, long spanTokens, long valid) {
      slots = DocumentChunks.deviceBytes(t, rows, spanTokens);
      rowFirst = slots + DeviceTokens.align(4L * valid);
      compact = rowFirst + DeviceTokens.align(4L * (rows + 1));
      products = compact + DeviceTokens.align(8L * valid * p.dim()); // widened to float64
      patterns = products + DeviceTokens.align(8L * valid * p.columns());
      raw = patterns + DeviceTokens.align(4L * valid);
      out = raw + (p.finalDim() > 0 ? DeviceTokens.align(8L * rows * p.rawDimension()) : 0);
      bytes = out + DeviceTokens.align(4L * rows * p.dimension());
    }
  }

  private static long validTokens(Tokens t, int from, int to) {
    long n = 0;
    for (int r = from; r < to; r++) {
      n += t.validCount[r];
    }
    return n;
  }

  /**
   * Consecutive chunks of whole rows covering {@code t} in order, each as many rows as fit {@code budget} bytes;
   * throws {@link IllegalArgumentException} when one row alone does not.
   */
  private static List<DocumentChunks.Chunk> plan(Tokens t, FdeParameters p, long budget, long fixedBytes,
      long available) {
    List<DocumentChunks.Chunk> chunks = new ArrayList<>();
    int first = 0;
    long lo = Long.MAX_VALUE; // the chunk's stored tokens: [lo, hi), empty while lo > hi
    long hi = Long.MIN_VALUE;
    long valid = 0;
    for (int r = 0; r < t.rows; r++) {
      int length = t.rowLength[r];
      long start = t.rowStart[r];
      long alone = new Layout(t, p, 1, length, t.validCount[r]).bytes;
      if (alone > budget) {
        throw new IllegalArgumentException("encoding row " + r + " on the GPU needs " + (fixedBytes + alone)
            + " bytes of device memory (the encoder's matrix and the row); the GPU backend may use " + available
            + " (raise maxsim4j.cuda.memoryLimit, or encode on the CPU)");
      }
      long newLo = length > 0 ? Math.min(lo, start) : lo;
      long newHi = length > 0 ? Math.max(hi, start + length) : hi;
      long newValid = valid + t.validCount[r];
      if (r > first && new Layout(t, p, r + 1 - first, span(newLo, newHi), newValid).bytes > budget) {
        chunks.add(chunk(first, r - first, lo, hi));
        first = r;
        newLo = length > 0 ? start : Long.MAX_VALUE;
        newHi = length > 0 ? start + length : Long.MIN_VALUE;
        newValid = t.validCount[r];
      }
      lo = newLo;
      hi = newHi;
      valid = newValid;
    }
    if (t.rows > first) {
      chunks.add(chunk(first, t.rows - first, lo, hi));
    }
    return chunks;
  }

  private static DocumentChunks.Chunk chunk(int first, int rows, long lo, long hi) {
    return lo > hi ? new DocumentChunks.Chunk(first, rows, 0, 0)
        : new DocumentChunks.Chunk(first, rows, (int) lo, (int) (hi - lo));
  }

  private static long span(long lo, long hi) {
    return lo > hi ? 0 : hi - lo;
  }

  /** One chunk: up, four launches, down into {@code out}'s rows. */
  private void encodeChunk(FdeParameters p, Tokens t, DocumentChunks.Chunk c, boolean queries, long weights,
      long table, SketchTable sketch, long area, float[][] out) {
    Tokens view = DocumentChunks.view(t, c);
    int rows = view.rows;
    int valid = Math.toIntExact(validTokens(t, c.firstRow(), c.firstRow() + rows));
    Layout at = new Layout(t, p, c);
    long tokenBytes = DeviceTokens.bytesFor(view);
    long slotsAt = tokenBytes;
    long rowFirstAt = slotsAt + 4L * valid;
    long outAt = DeviceTokens.align(rowFirstAt + 4L * (rows + 1));
    long outBytes = 4L * rows * p.dimension();
    MemorySegment pinned = device.pinned(outAt + outBytes);
    DeviceTokens tokens = DeviceTokens.uploadAsync(device, view, area + at.tokens, pinned);
    stageRows(view, pinned.asSlice(slotsAt, 4L * valid), pinned.asSlice(rowFirstAt, 4L * (rows + 1)));
    if (valid > 0) {
      Driver.copyToDevice(area + at.slots, pinned.asSlice(slotsAt), 4L * valid, device.stream);
    }
    Driver.copyToDevice(area + at.rowFirst, pinned.asSlice(rowFirstAt), 4L * (rows + 1), device.stream);
    long result = area + at.out;
    Driver.fill32(result, CudaBackend.POISON_SCORE, (long) rows * p.dimension(), device.stream);
    if (valid > 0) {
      long values = (long) valid * p.dim();
      int blocks = (int) Math.max(1, Math.min((values + THREADS - 1) / THREADS,
          (long) device.multiprocessors * GATHER_BLOCKS_PER_SM));
      int storage = KernelType.of(view.dtype).storageCode();
      launch("maxsim_fde_gather", blocks, 1, new KernelArgs.FdeGather(tokens.data(), storage, area + at.slots,
          tokens.scales(), p.dim(), valid, area + at.compact));
      if (p.columns() > 0) {
        launch("maxsim_fde_products", (valid + TILE_M - 1) / TILE_M, (p.columns() + TILE_N - 1) / TILE_N,
            new KernelArgs.FdeProducts(area + at.compact, weights, area + at.products, valid, p.dim(), p.columns()));
      }
    }
    boolean sketched = sketch != null;
    launch("maxsim_fde_partitions", rows, 1, new KernelArgs.FdePartitions(area + at.products, area + at.compact,
        area + at.rowFirst, area + at.patterns, sketched ? 0 : result, sketched ? area + at.raw : 0, p.simHashBits(),
        p.repetitions(), p.projectionDim(), p.projects() ? 1 : 0, p.columns(), queries ? 0 : 1, p.fillEmpty() ? 1 : 0));
    if (sketched) {
      launch("maxsim_fde_sketch", rows, 1, new KernelArgs.FdeSketch(area + at.raw, table,
          table + sketch.startBytes(), p.rawDimension(), p.finalDim(), result));
    }
    MemorySegment download = pinned.asSlice(outAt, outBytes);
    Driver.copyToHost(download, result, outBytes, device.stream);
    Driver.synchronize(device.stream);
    for (int i = 0; i < rows; i++) {
      float[] row = new float[p.dimension()];
      MemorySegment.copy(download, JAVA_FLOAT_UNALIGNED, 4L * i * row.length, row, 0, row.length);
      out[c.firstRow() + i] = row;
    }
  }

  /** Each valid token's slot, rows in order and slots ascending, and where each row's valid tokens begin. */
  private static void stageRows(Tokens t, MemorySegment slots, MemorySegment rowFirst) {
    int n = 0;
    for (int r = 0; r < t.rows; r++) {
      rowFirst.setAtIndex(JAVA_INT_UNALIGNED, r, n);
      for (int s = 0; s < t.rowLength[r]; s++) {
        if (t.mask == null || t.mask[t.rowStart[r] + s]) {
          slots.setAtIndex(JAVA_INT_UNALIGNED, n++, t.rowStart[r] + s);
        }
      }
    }
    rowFirst.setAtIndex(JAVA_INT_UNALIGNED, t.rows, n);
  }

  private void launch(String kernel, int gridX, int gridY, KernelArgs args) {
    launcher.launch(new KernelLaunch(KernelModule.FDE, kernel, gridX, gridY, THREADS, args), device.stream);
  }
}
