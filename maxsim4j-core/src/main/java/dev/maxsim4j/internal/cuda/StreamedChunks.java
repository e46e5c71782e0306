package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.internal.PoolTasks;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cuda.DocumentChunks.Chunk;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Documents copied to the device chunk by chunk while the previous chunk is scored: two device buffers take
 * turns, the copies run on a stream of their own, and events order each copy after the scoring that last read
 * its buffer. Documents already in page-locked memory (cuMemAllocHost) are copied from where they lie; any
 * others (heap, off-heap, memory-mapped) go through two pinned staging buffers, filled by several threads.
 * Pinned staging memory is reused from call to call (pinning is slow; a minute of smaller calls gives it back);
 * device buffers are not. Used under the backend's lock.
 */
final class StreamedChunks implements AutoCloseable {
  /** Pieces the staging copy is split into for threads: small enough to balance, large enough to be cheap. */
  private static final long COPY_PIECE_BYTES = 8L << 20;

  /** Scores one chunk, on the device's stream, once its documents are there. */
  interface ChunkScorer {
    void score(DeviceTokens documents, Chunk chunk);
  }

  private final CudaDevice device;
  private Driver.Stream copyStream;
  private final Driver.Event[] copied = new Driver.Event[MemoryBudget.CHUNK_BUFFERS];
  private final Driver.Event[] scored = new Driver.Event[MemoryBudget.CHUNK_BUFFERS];
  private final ReusedPinnedMemory[] staging = new ReusedPinnedMemory[MemoryBudget.CHUNK_BUFFERS];
  /** Chunks copied so far by every call: {from page-locked memory where they lie, through staging}. */
  private long fromPageLocked;
  private long staged;

  StreamedChunks(CudaDevice device) {
    this.device = device;
    for (int b = 0; b < staging.length; b++) {
      staging[b] = new ReusedPinnedMemory(false);
    }
  }

  /**
   * Copies each chunk of {@code documents} into one of two device buffers of {@code chunkBytes} and calls
   * {@code scorer} for it, in order; returns once every chunk's scoring is queued on the device's stream and
   * no copy can still read host memory the caller may free.
   */
  void forEach(Tokens documents, List<Chunk> chunks, long chunkBytes, ChunkScorer scorer) {
    if (copyStream == null) {
      createStreamAndEvents();
    }
    MemorySegment source = documents.storage();
    boolean pinnedSource = source.isNative() && source.byteSize() > 0 && Driver.isPinned(source)
        && Driver.isPinned(source.asSlice(source.byteSize() - 1));
    int buffers = Math.min(chunks.size(), MemoryBudget.CHUNK_BUFFERS);
    long[] device = new long[buffers];
    try {
      for (int b = 0; b < buffers; b++) {
        device[b] = this.device.allocate(chunkBytes);
      }
      for (int i = 0; i < chunks.size(); i++) {
        int b = i % MemoryBudget.CHUNK_BUFFERS;
        Chunk chunk = chunks.get(i);
        Tokens part = DocumentChunks.view(documents, chunk);
        long region = DeviceTokens.dataRegion(part);
        long bytes = DeviceTokens.bytesFor(part);
        if (i >= MemoryBudget.CHUNK_BUFFERS) {
          Driver.waitFor(copied[b]); // the staging memory of chunk i - 2 is read
        }
        MemorySegment stage = staging(b, pinnedSource ? bytes - region : Math.max(bytes, chunkBytes));
        if (!pinnedSource) {
          copyInParallel(part.segment, stage);
        }
        DeviceTokens tokens = DeviceTokens.stageMetadata(part, device[b],
            stage.asSlice(pinnedSource ? 0 : region, bytes - region));
        if (i >= MemoryBudget.CHUNK_BUFFERS) {
          Driver.streamWait(copyStream, scored[b]); // chunk i - 2's scoring has read this buffer
        }
        if (pinnedSource) {
          if (part.segment.byteSize() > 0) {
            Driver.copyToDevice(device[b], part.segment, part.segment.byteSize(), copyStream);
          }
          Driver.copyToDevice(device[b] + region, stage, bytes - region, copyStream);
        } else {
          Driver.copyToDevice(device[b], stage, bytes, copyStream);
        }
        Driver.record(copied[b], copyStream);
        if (pinnedSource) {
          fromPageLocked++;
        } else {
          staged++;
        }
        Driver.streamWait(this.device.stream, copied[b]);
        scorer.score(tokens, chunk);
        Driver.record(scored[b], this.device.stream);
      }
    } catch (RuntimeException | Error e) {
      releaseBuffers(device, chunkBytes).suppressedIn(e);
      throw e;
    }
    releaseBuffers(device, chunkBytes).throwIfFailed();
  }

  /**
   * Frees a call's device buffers once nothing queued can read them, or host memory the caller frees after the
   * call; each step runs whatever the ones before did (after a kernel's sticky error the waits fail, yet nothing
   * runs any more and the buffers must still go).
   */
  private Releases releaseBuffers(long[] buffers, long chunkBytes) {
    Releases releases = new Releases();
    releases.run(() -> Driver.synchronize(copyStream));
    releases.run(device::synchronizeAll);
    for (long p : buffers) {
      if (p != 0) {
        releases.run(() -> device.release(p, chunkBytes));
      }
    }
    return releases;
  }

  /** The copy stream and its events, all or none: what a failure leaves made is destroyed again. */
  private void createStreamAndEvents() {
    Driver.Stream stream = Driver.createStream();
    try {
      for (int b = 0; b < copied.length; b++) {
        copied[b] = Driver.createMarker();
        scored[b] = Driver.createMarker();
      }
    } catch (RuntimeException | Error e) {
      Releases releases = new Releases();
      destroyEvents(releases);
      releases.run(() -> Driver.destroyStream(stream));
      releases.suppressedIn(e);
      throw e;
    }
    copyStream = stream;
  }

  /** Chunks copied so far by every call. */
  CudaBackend.ChunkCounts chunksCopied() {
    return new CudaBackend.ChunkCounts(fromPageLocked, staged);
  }

  /** Staging buffer {@code b}, at least {@code bytes} (its last copy has been waited for). */
  private MemorySegment staging(int b, long bytes) {
    return staging[b].atLeast(bytes, () -> Driver.synchronize(copyStream));
  }

  /**
   * Copies {@code from} to the start of {@code to} in pieces on the common pool's threads, all of them done (or
   * stopped) before it returns or throws: a piece still being written would write into staging freed by then.
   */
  private static void copyInParallel(MemorySegment from, MemorySegment to) {
    long bytes = from.byteSize();
    int pieces = Math.toIntExact((bytes + COPY_PIECE_BYTES - 1) / COPY_PIECE_BYTES);
    PoolTasks.forEach(pieces, p -> {
      long off = p * COPY_PIECE_BYTES;
      MemorySegment.copy(from, off, to, off, Math.min(COPY_PIECE_BYTES, bytes - off));
    });
  }

  @Override
  public void close() {
    if (copyStream == null) {
      return;
    }
    Driver.Stream stream = copyStream;
    copyStream = null;
    // each step whatever the ones before did, so that one failure leaves nothing else allocated
    Releases releases = new Releases();
    releases.run(() -> Driver.synchronize(stream));
    for (ReusedPinnedMemory host : staging) {
      releases.run(host::close);
    }
    destroyEvents(releases);
    releases.run(() -> Driver.destroyStream(stream));
    releases.throwIfFailed();
  }

  /** Destroys the events made so far, each whatever the others did. */
  private void destroyEvents(Releases releases) {
    for (int b = 0; b < copied.length; b++) {
      for (Driver.Event event : new Driver.Event[] {copied[b], scored[b]}) {
        if (event != null) {
          releases.run(() -> Driver.destroyEvent(event));
        }
      }
      copied[b] = null;
      scored[b] = null;
    }
  }
}
