package dev.maxsim4j.internal.cuda;

import java.lang.foreign.MemorySegment;

/**
 * Page-locked host memory from the CUDA driver (cuMemAllocHost): the GPU copies from it at full bus speed and
 * {@link CudaBackend}'s streamed top-k reads it without staging. Close it to give it back.
 */
public final class PinnedHostMemory implements AutoCloseable {
  private final CudaBackend owner;
  private MemorySegment segment;

  PinnedHostMemory(CudaBackend owner, MemorySegment segment) {
    this.owner = owner;
    this.segment = segment;
  }

  /** The memory, readable and writable from any thread until closed. */
  public MemorySegment segment() {
    if (segment == null) {
      throw new IllegalStateException("this pinned host memory is closed");
    }
    return segment;
  }

  @Override
  public void close() {
    if (segment != null) {
      MemorySegment s = segment;
      segment = null;
      owner.freePinned(s);
    }
  }
}
