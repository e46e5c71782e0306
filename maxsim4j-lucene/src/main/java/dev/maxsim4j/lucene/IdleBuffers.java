package dev.maxsim4j.lucene;

import java.util.ArrayList;
import java.util.List;

/**
 * Gathering buffers between blocks, shared by every thread that rescores and kept up to {@code limitBytes} together,
 * so that the memory held idle does not grow with the number of threads that rescore (a server's pool of hundreds).
 * A buffer in use is in no pool: a thread that takes another block while one of its own is still being scored (a
 * fork-join worker steals tasks while it waits) takes another.
 */
final class IdleBuffers {
  private final long limitBytes;
  private final List<StoredTokens> idle = new ArrayList<>();
  private long idleBytes;

  IdleBuffers(long limitBytes) {
    this.limitBytes = limitBytes;
  }

  /** The largest idle buffer (grown by the blocks it served: the least likely to grow again), or null. */
  synchronized StoredTokens take() {
    StoredTokens largest = null;
    for (StoredTokens buffer : idle) {
      if (largest == null || buffer.capacityBytes() > largest.capacityBytes()) {
        largest = buffer;
      }
    }
    if (largest != null) {
      idle.remove(largest);
      idleBytes -= largest.capacityBytes();
    }
    return largest;
  }

  /**
   * Keeps {@code buffer} for a later block within the limit, leaving smaller idle ones to the GC to make room (the
   * larger a buffer has grown, the less it grows again); else leaves it to the GC.
   */
  synchronized void giveBack(StoredTokens buffer) {
    long bytes = buffer.capacityBytes();
    if (bytes > limitBytes) {
      return;
    }
    while (bytes > limitBytes - idleBytes) {
      StoredTokens smallest = null;
      for (StoredTokens b : idle) {
        if (smallest == null || b.capacityBytes() < smallest.capacityBytes()) {
          smallest = b;
        }
      }
      if (smallest == null || smallest.capacityBytes() >= bytes) {
        return; // the idle ones are as large: this one goes
      }
      idle.remove(smallest);
      idleBytes -= smallest.capacityBytes();
    }
    idle.add(buffer);
    idleBytes += bytes;
  }

  /** Bytes held idle now. */
  synchronized long idleBytes() {
    return idleBytes;
  }

  /** Buffers held idle now. */
  synchronized int size() {
    return idle.size();
  }
}
