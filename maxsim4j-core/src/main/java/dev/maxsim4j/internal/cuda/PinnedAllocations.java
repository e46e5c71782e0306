package dev.maxsim4j.internal.cuda;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * The page-locked host memory a backend has handed out ({@link PinnedHostMemory}) and not yet had back. Each is
 * freed at most once, by its own close or by the backend's, whichever comes first, and its segment is
 * invalidated before the memory is freed. Once the backend has closed, closing one does nothing: the driver's
 * context it came from may be gone. Thread-safe: everything runs under the backend's lock, as the driver calls
 * that free the memory must.
 */
final class PinnedAllocations {
  private final ReentrantLock lock;
  /** Frees an allocation (cuMemFreeHost with the backend's context current). */
  private final Consumer<MemorySegment> free;
  private final Set<PinnedHostMemory> open = Collections.newSetFromMap(new IdentityHashMap<>());
  /** Those {@link #close} invalidated, for {@link #freeClosed}. */
  private final List<PinnedHostMemory> closedUnfreed = new ArrayList<>();
  private boolean closed;

  PinnedAllocations(ReentrantLock lock, Consumer<MemorySegment> free) {
    this.lock = lock;
    this.free = free;
  }

  /** Hands {@code allocation} out; freed here if that fails. */
  PinnedHostMemory add(MemorySegment allocation) {
    lock.lock();
    try {
      if (closed) {
        throw new IllegalStateException("the pinned host memory of this CUDA backend is closed");
      }
      PinnedHostMemory memory;
      try {
        memory = new PinnedHostMemory(this, allocation);
      } catch (RuntimeException | Error e) {
        free.accept(allocation); // no caller gets a handle to close
        throw e;
      }
      open.add(memory);
      return memory;
    } finally {
      lock.unlock();
    }
  }

  /** {@link PinnedHostMemory#close}: invalidates and frees it unless it, or the backend, closed before. */
  void release(PinnedHostMemory memory) {
    lock.lock();
    try {
      if (closed || !open.contains(memory)) {
        return;
      }
      // throws while a native call holds it: it stays open, to be closed again
      memory.invalidate("this pinned host memory is closed");
      open.remove(memory);
      free.accept(memory.allocation);
    } finally {
      lock.unlock();
    }
  }

  /** Memory handed out and not yet closed. */
  int open() {
    lock.lock();
    try {
      return open.size();
    } finally {
      lock.unlock();
    }
  }

  /**
   * The backend closes: invalidates every segment still open, without freeing the memory yet
   * ({@link #freeClosed} does). Returns how many could not be invalidated because a native call on another
   * thread held them: those stay valid, and their memory must not be freed.
   */
  int close() {
    lock.lock();
    try {
      closed = true;
      int held = 0;
      for (PinnedHostMemory memory : open) {
        try {
          memory.invalidate("this pinned host memory's CUDA backend is closed");
          closedUnfreed.add(memory);
        } catch (IllegalStateException inUse) {
          held++;
        }
      }
      open.clear();
      return held;
    } finally {
      lock.unlock();
    }
  }

  /** Frees the memory {@link #close} invalidated, each whatever freeing the others did. */
  void freeClosed() {
    lock.lock();
    try {
      Releases releases = new Releases();
      for (PinnedHostMemory memory : closedUnfreed) {
        releases.run(() -> free.accept(memory.allocation));
      }
      closedUnfreed.clear();
      releases.throwIfFailed();
    } finally {
      lock.unlock();
    }
  }
}
