package dev.maxsim4j.internal.cuda;

import java.lang.foreign.MemorySegment;

/**
 * Page-locked host memory that grows (by half again, at least to what is asked) and never shrinks, and, where
 * {@code mapped}, its device address, so that a kernel writes its results straight to the host. Not thread-safe: the
 * owner serialises its use and grows it only while no queued work reads or writes it.
 */
final class GrowingPinnedMemory implements AutoCloseable {
  private final boolean mapped;
  private MemorySegment host = MemorySegment.NULL;
  private long device;

  GrowingPinnedMemory(boolean mapped) {
    this.mapped = mapped;
  }

  /** The bytes held now. */
  long byteSize() {
    return host.byteSize();
  }

  /** The memory, at least {@code bytes} of it; a growth frees the old memory first. */
  MemorySegment atLeast(long bytes) {
    if (host.byteSize() >= bytes) {
      return host;
    }
    long grown = Math.max(bytes, host.byteSize() * 3 / 2);
    close(); // a failure below must not leave the freed memory, or its device address, to the next use
    MemorySegment made = Driver.mallocHost(grown);
    try {
      device = mapped ? Driver.hostDevicePointer(made) : 0;
    } catch (RuntimeException | Error e) {
      Releases releases = new Releases();
      releases.run(() -> Driver.freeHost(made));
      releases.suppressedIn(e);
      throw e;
    }
    host = made;
    return host;
  }

  /** The device address of {@code slice}, a part of this memory as last handed out (mapped memory only). */
  long deviceAddress(MemorySegment slice) {
    long offset = slice.address() - host.address();
    if (!mapped || offset < 0 || offset + slice.byteSize() > host.byteSize()) {
      throw new IllegalStateException("not a slice of the mapped pinned memory");
    }
    return device + offset;
  }

  /** Frees the memory; a later {@link #atLeast} allocates again. */
  @Override
  public void close() {
    if (host.byteSize() > 0) {
      MemorySegment old = host;
      host = MemorySegment.NULL;
      device = 0;
      Driver.freeHost(old);
    }
  }
}
