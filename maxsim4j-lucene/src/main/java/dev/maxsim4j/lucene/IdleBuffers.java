package dev.maxsim4j.lucene;

import java.util.ArrayDeque;

/**
 * Gathering buffers between blocks, shared by every thread that rescores and kept up to {@code limitBytes} together:
 * kept per thread, the memory held idle grew with every thread that had ever rescored (a server's pool of hundreds).
 * A buffer in use is in no pool: a thread that takes another block while one of its own is still being scored (a
 * fork-join worker steals tasks while it waits) takes another.
 */
final class IdleBuffers {
  private final long limitBytes;
  private final ArrayDeque<StoredTokens> idle = new ArrayDeque<>();
  private long idleBytes;

  IdleBuffers(long limitBytes) {
    this.limitBytes = limitBytes;
  }

  /** The buffer last given back (grown by the blocks it served), or null where none is idle. */
  synchronized StoredTokens take() {
    StoredTokens buffer = idle.poll();
    if (buffer != null) {
      idleBytes -= buffer.capacityBytes();
    }
    return buffer;
  }

  /** Keeps {@code buffer} for a later block where the idle ones stay within the limit; else leaves it to the GC. */
  synchronized void giveBack(StoredTokens buffer) {
    long bytes = buffer.capacityBytes();
    if (bytes <= limitBytes - idleBytes) {
      idle.push(buffer);
      idleBytes += bytes;
    }
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
