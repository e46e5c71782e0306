package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.internal.Tokens;
import java.lang.foreign.MemorySegment;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.function.BiPredicate;
import java.util.function.LongFunction;

/**
 * The inputs of device calls: batches made resident (on the device until their last holder lets go) and
 * the staging of the others through pinned memory. Every job of the backend stages its inputs here, so a
 * resident batch is never copied again, whichever job reads it. Used under the backend's lock.
 */
final class DeviceInputs {
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

  /** Inputs on the device and the pinned region results come back through. */
  record Staged(DeviceTokens queries, DeviceTokens documents, MemorySegment download) {}

  private final CudaDevice device;
  /** Whether a call's queries carry their fp16 copy against its documents ({@link HalfOperands}). */
  private final BiPredicate<Tokens, Tokens> halfCopy;
  private final Map<Tokens, Resident> resident = new IdentityHashMap<>();

  DeviceInputs(CudaDevice device, BiPredicate<Tokens, Tokens> halfCopy) {
    this.device = device;
    this.halfCopy = halfCopy;
  }

  /** Whether a call stages {@code queries} with their fp16 copy against {@code documents}. */
  boolean halfCopy(Tokens queries, Tokens documents) {
    return halfCopy.test(queries, documents);
  }

  /** Uploads {@code tokens}, or counts one more holder where they are resident already. */
  void hold(Tokens tokens) {
    Resident existing = resident.get(tokens);
    if (existing != null) {
      existing.holders++;
    } else {
      long bytes = DeviceTokens.bytesFor(tokens);
      long p = device.allocate(bytes);
      DeviceTokens uploaded;
      try {
        uploaded = DeviceTokens.upload(device, tokens, p);
      } catch (RuntimeException | Error e) { // e.g. no pinned memory to stage through: no holder will free it
        Releases releases = new Releases(); // freed even where the wait fails (a sticky error: nothing runs)
        releases.run(device::synchronizeAll);
        releases.run(() -> device.release(p, bytes));
        releases.suppressedIn(e);
        throw e;
      }
      resident.put(tokens, new Resident(uploaded, p, bytes));
    }
  }

  /** One holder fewer; the last one frees the batch once no lane's queued work can still read it. */
  void release(Tokens tokens) {
    Resident r = resident.get(tokens);
    if (r != null && --r.holders == 0) {
      device.synchronizeAll(); // where this fails the batch stays listed, and the backend's close frees it
      resident.remove(tokens);
      device.release(r.pointer, r.bytes);
    }
  }

  /** Frees every resident batch (the backend closes). */
  void releaseAll() {
    Releases releases = new Releases(); // one failed free leaves the others freed
    for (Resident r : resident.values()) {
      releases.run(() -> device.release(r.pointer, r.bytes));
    }
    resident.clear();
    releases.throwIfFailed();
  }

  /** The device copy of {@code tokens} where resident, else null. */
  DeviceTokens resident(Tokens tokens) {
    Resident r = resident.get(tokens);
    return r == null ? null : r.tokens;
  }

  /**
   * Copies the queries and the documents, unless resident, to the device asynchronously through one pinned
   * buffer laid out as [queries | documents | download], so a call needs a single synchronisation, at its
   * end. The caller must not ask the device for more pinned memory before that synchronisation. A batch too large to
   * stage whole ({@link DeviceTokens#inPieces}) is copied before, in pieces, and waited for.
   */
  Staged stage(Tokens queries, Tokens documents, long downloadBytes) {
    return stage(queries, documents, downloadBytes, device::pinned, device.main);
  }

  /** As above, through the pinned memory {@code pinnedFor} gives for a size, on {@code lane}. */
  Staged stage(Tokens queries, Tokens documents, long downloadBytes, LongFunction<MemorySegment> pinnedFor,
      CudaDevice.Lane lane) {
    Resident rq = resident.get(queries);
    Resident rd = resident.get(documents);
    boolean half = rq == null && halfCopy.test(queries, documents);
    long queryBytes = rq != null ? 0 : DeviceTokens.align(DeviceTokens.bytesFor(queries, half));
    long docBytes = rd != null ? 0 : DeviceTokens.align(DeviceTokens.bytesFor(documents));
    // a batch too large to stage whole is copied first, in pieces, before the pinned memory below is handed out
    DeviceTokens d = rd != null ? rd.tokens : null;
    if (d == null && DeviceTokens.inPieces(docBytes)) {
      d = DeviceTokens.uploadInPieces(documents, lane.scratch(ScratchSlot.DOCUMENTS, docBytes), false, pinnedFor,
          lane.stream, DeviceTokens.PIECE_BYTES);
      docBytes = 0;
    }
    DeviceTokens q = rq != null ? rq.tokens : null;
    if (q == null && DeviceTokens.inPieces(queryBytes)) {
      q = DeviceTokens.uploadInPieces(queries, lane.scratch(ScratchSlot.QUERIES, queryBytes), half, pinnedFor,
          lane.stream, DeviceTokens.PIECE_BYTES);
      queryBytes = 0;
    }
    MemorySegment pinned = pinnedFor.apply(queryBytes + docBytes + downloadBytes);
    if (q == null) {
      q = DeviceTokens.uploadAsync(queries, lane.scratch(ScratchSlot.QUERIES, queryBytes),
          pinned.asSlice(0, queryBytes), lane.stream, half);
    }
    if (d == null) {
      d = DeviceTokens.uploadAsync(documents, lane.scratch(ScratchSlot.DOCUMENTS, docBytes),
          pinned.asSlice(queryBytes, docBytes), lane.stream);
    }
    return new Staged(q, d, pinned.asSlice(queryBytes + docBytes, downloadBytes));
  }

  /**
   * The queries staged as {@link #stage} stages them, with no documents (they are on the device already, or
   * come in chunks): {@code documents} of the result is null.
   */
  Staged stageQueries(Tokens queries, long downloadBytes) {
    Resident rq = resident.get(queries);
    long queryBytes = rq != null ? 0 : DeviceTokens.align(DeviceTokens.bytesFor(queries));
    DeviceTokens q = rq != null ? rq.tokens : null;
    if (q == null && DeviceTokens.inPieces(queryBytes)) {
      q = DeviceTokens.upload(device, queries, device.scratch(ScratchSlot.QUERIES, queryBytes));
      queryBytes = 0;
    }
    MemorySegment pinned = device.pinned(queryBytes + downloadBytes);
    if (q == null) {
      q = DeviceTokens.uploadAsync(queries, device.scratch(ScratchSlot.QUERIES, queryBytes),
          pinned.asSlice(0, queryBytes), device.stream);
    }
    return new Staged(q, null, pinned.asSlice(queryBytes, downloadBytes));
  }
}
