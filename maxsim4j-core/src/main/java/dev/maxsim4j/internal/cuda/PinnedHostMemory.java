package dev.maxsim4j.internal.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Page-locked host memory from the CUDA driver (cuMemAllocHost): the GPU copies from it at full bus speed and
 * {@link CudaBackend}'s streamed top-k reads it without staging. Close it to give it back; closing its backend
 * gives it back too. Either way its segment is invalidated before the memory is freed: a later access throws
 * {@link IllegalStateException} instead of reaching freed memory.
 */
public final class PinnedHostMemory implements AutoCloseable {
  private final PinnedAllocations owner;
  /** The allocation as the driver returned it, of global scope: only to free it. */
  final MemorySegment allocation;
  /** The segment's lifetime: shared, so that any thread may read it and closing it stops every thread's access. */
  private final Arena scope = Arena.ofShared();
  private final MemorySegment segment;
  /** Why the segment was invalidated, for {@link #segment} to say; set just before it is. */
  private volatile String closedBecause = "this pinned host memory is closed";

  PinnedHostMemory(PinnedAllocations owner, MemorySegment allocation) {
    this.owner = owner;
    this.allocation = allocation;
    this.segment = Driver.scoped(allocation, scope);
  }

  /** The memory, readable and writable from any thread until this or its backend is closed. */
  public MemorySegment segment() {
    if (!scope.scope().isAlive()) {
      throw new IllegalStateException(closedBecause);
    }
    return segment;
  }

  /**
   * Ends every access to the segment, {@code why} then being what {@link #segment} throws; throws
   * {@link IllegalStateException} (and changes nothing) while a native call on another thread still holds it.
   */
  void invalidate(String why) {
    String before = closedBecause;
    closedBecause = why;
    try {
      scope.close();
    } catch (IllegalStateException e) {
      closedBecause = before;
      throw new IllegalStateException("this pinned host memory is in use by a native call on another thread;"
          + " close it once that call has returned", e);
    }
  }

  /** Frees the memory; closing it again, or after its backend closed, does nothing. */
  @Override
  public void close() {
    owner.release(this);
  }
}
