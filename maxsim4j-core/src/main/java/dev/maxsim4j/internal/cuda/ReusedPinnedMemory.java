package dev.maxsim4j.internal.cuda;

import java.lang.foreign.MemorySegment;

/**
 * Page-locked host memory reused from call to call, sized by {@link PinnedSizing} (grown to what is asked, given
 * back where a period of calls left most of it unused), and, where {@code mapped}, its device address, so that a
 * kernel writes its results straight to the host. Not thread-safe: the owner serialises its use, and a request may
 * replace the memory, so that no slice of an earlier one may be used after it.
 */
final class ReusedPinnedMemory implements AutoCloseable {
  private final boolean mapped;
  private final PinnedSizing sizing;
  private MemorySegment host = MemorySegment.NULL;
  private long device;

  ReusedPinnedMemory(boolean mapped) {
    this(mapped, new PinnedSizing());
  }

  /** Memory sized by {@code sizing} (tests pass one on a clock of their own). */
  ReusedPinnedMemory(boolean mapped, PinnedSizing sizing) {
    this.mapped = mapped;
    this.sizing = sizing;
  }

  /** The bytes held now. */
  long byteSize() {
    return host.byteSize();
  }

  /**
   * The memory, at least {@code bytes} of it. Where it is replaced (grown, or given back), {@code beforeReplacing}
   * runs first: the owner waits there for queued work that may still read or write it.
   */
  MemorySegment atLeast(long bytes, Runnable beforeReplacing) {
    long held = host.byteSize();
    long size = sizing.next(held, bytes);
    if (size == held) {
      return host;
    }
    beforeReplacing.run();
    if (size == 0) {
      close(); // a period of empty requests: nothing is held, where a block of no bytes could not be freed
      return host;
    }
    if (size < held) {
      return shrunk(size);
    }
    close(); // a failure below must not leave the freed memory, or its device address, to the next use
    MemorySegment made = Driver.mallocHost(size);
    long address;
    try {
      address = mapped ? Driver.hostDevicePointer(made) : 0;
    } catch (RuntimeException | Error e) {
      Releases releases = new Releases();
      releases.run(() -> Driver.freeHost(made));
      releases.suppressedIn(e);
      throw e;
    }
    host = made;
    device = address;
    return host;
  }

  /**
   * The memory replaced by {@code size} bytes, or kept as it is where the smaller memory cannot be had: giving memory
   * back is optional, so no failure of it fails the call.
   */
  private MemorySegment shrunk(long size) {
    MemorySegment made;
    try {
      made = Driver.mallocHost(size);
    } catch (RuntimeException e) {
      return host;
    }
    long address;
    try {
      address = mapped ? Driver.hostDevicePointer(made) : 0;
    } catch (RuntimeException e) {
      new Releases().run(() -> Driver.freeHost(made)); // a failure to free it too is the driver's, and is dropped
      return host;
    }
    MemorySegment old = host;
    host = made;
    device = address;
    new Releases().run(() -> Driver.freeHost(old)); // the smaller memory is in place whether or not this frees
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
