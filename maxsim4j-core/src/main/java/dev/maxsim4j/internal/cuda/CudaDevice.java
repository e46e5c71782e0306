package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.CudaException;
import dev.maxsim4j.internal.cuda.plan.KernelModule;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * One GPU as maxsim4j uses it: the primary context, the kernel modules loaded once from the fatbins in
 * the jar, a main stream and lanes of their own streams, grow-only device scratch buffers and reused pinned host
 * memory so steady-state calls allocate nothing, and a high-water mark of what it allocated. Not thread-safe:
 * {@link CudaBackend} serialises calls.
 */
final class CudaDevice implements AutoCloseable {
  static final int MIN_MAJOR = 7;
  static final int MIN_MINOR = 5;

  final Driver.Device handle;
  final String name;
  final int major;
  final int minor;
  final int multiprocessors;
  final int sharedMemoryPerBlockOptin;
  /** Whether kernels can write pinned host memory directly (unified addressing: every 64-bit platform). */
  final boolean hostMapped;
  /** Staging for copies, mapped where {@link #hostMapped} so kernels may write their results to it. */
  private final ReusedPinnedMemory pinned;
  private final Driver.Context context;
  final Driver.Stream stream;
  private final Map<String, Driver.LoadedModule> modules = new HashMap<>();
  private final Map<String, Driver.Entry> functions = new HashMap<>();
  private final Map<Driver.Entry, Integer> sharedMemoryAllowed = new HashMap<>();
  private final Map<Occupancy, Integer> residentBlocks = new HashMap<>();

  private record Occupancy(Driver.Entry function, int blockSize, int sharedBytes) {}
  private long allocatedBytes;
  private long peakAllocatedBytes;
  private boolean closed;
  /** The last launch ordered by orderWholeDeviceLaunch: a marker recorded after it, and its lane. */
  private Driver.Event wholeDeviceMarker;
  private Lane wholeDeviceLane;

  private static volatile Optional<String> probe;

  /** Why no usable GPU is here (no driver, no device, too old, no kernels in the jar), or empty. */
  static Optional<String> unavailableReason() {
    Optional<String> p = probe;
    if (p == null) {
      p = computeReason();
      probe = p;
    }
    return p;
  }

  private static Optional<String> computeReason() {
    Optional<String> load = Driver.loadError();
    if (load.isPresent()) {
      return load;
    }
    if (CudaDevice.class.getResource(KernelModule.FORWARD.resource()) == null) {
      return Optional.of("this build has no CUDA kernels (built with -Dmaxsim4j.cuda.skip=true)");
    }
    try {
      Driver.init();
      int count = Driver.deviceCount();
      if (count == 0) {
        return Optional.of("the CUDA driver reports no device");
      }
      return noneUsable(count, CudaDevice::unusableReason);
    } catch (CudaException e) {
      return Optional.of("the CUDA driver failed to start: " + e.getMessage());
    }
  }

  /**
   * Why none of {@code count} GPUs is usable, given each one's reason, or empty where one is: one usable GPU is
   * enough (CudaDevices uses the usable ones), as GPU 0 may be an old card beside a new one.
   */
  static Optional<String> noneUsable(int count, IntFunction<Optional<String>> reasonOf) {
    Optional<String> first = Optional.empty();
    for (int ordinal = 0; ordinal < count; ordinal++) {
      Optional<String> reason = reasonOf.apply(ordinal);
      if (reason.isEmpty()) {
        return reason;
      }
      first = first.isEmpty() ? reason : first;
    }
    return count == 1 ? first : Optional.of("none of the " + count + " visible GPUs can run maxsim4j's kernels: "
        + first.get() + (count == 2 ? ", and the other" : ", and the others") + " alike or worse");
  }

  /** Why visible GPU {@code ordinal} cannot run maxsim4j's kernels (compute capability too old), or empty. */
  static Optional<String> unusableReason(int ordinal) {
    Driver.Device dev = Driver.device(ordinal);
    int major = Driver.attribute(dev, Driver.DeviceAttribute.COMPUTE_CAPABILITY_MAJOR);
    int minor = Driver.attribute(dev, Driver.DeviceAttribute.COMPUTE_CAPABILITY_MINOR);
    if (major < MIN_MAJOR || (major == MIN_MAJOR && minor < MIN_MINOR)) {
      return Optional.of("GPU " + ordinal + " (" + Driver.deviceName(dev) + ") has compute capability " + major + "."
          + minor + "; maxsim4j needs " + MIN_MAJOR + "." + MIN_MINOR + " or newer");
    }
    return Optional.empty();
  }

  /**
   * Whether the driver reports a GPU, usable or not: where it does, a fall back to the CPU (a jar built without
   * kernels, a GPU too old) is news, where it does not it is the normal case.
   */
  static boolean gpuPresent() {
    if (Driver.loadError().isPresent()) {
      return false;
    }
    try {
      Driver.init();
      return Driver.deviceCount() > 0;
    } catch (CudaException e) {
      return false;
    }
  }

  /** GPUs the driver reports (those CUDA_VISIBLE_DEVICES leaves visible). */
  static int visibleDevices() {
    return Driver.deviceCount();
  }

  CudaDevice(int ordinal) {
    unavailableReason().ifPresent(r -> {
      throw new IllegalStateException("the CUDA backend is unavailable: " + r);
    });
    // the backend is available where any GPU is usable: this one may still be an old card beside it
    unusableReason(ordinal).ifPresent(r -> {
      throw new IllegalStateException("the CUDA backend cannot use " + r);
    });
    this.handle = Driver.device(ordinal);
    this.name = Driver.deviceName(handle);
    this.major = Driver.attribute(handle, Driver.DeviceAttribute.COMPUTE_CAPABILITY_MAJOR);
    this.minor = Driver.attribute(handle, Driver.DeviceAttribute.COMPUTE_CAPABILITY_MINOR);
    this.multiprocessors = Driver.attribute(handle, Driver.DeviceAttribute.MULTIPROCESSOR_COUNT);
    this.sharedMemoryPerBlockOptin =
        Driver.attribute(handle, Driver.DeviceAttribute.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    this.hostMapped = Driver.attribute(handle, Driver.DeviceAttribute.UNIFIED_ADDRESSING) == 1;
    this.pinned = new ReusedPinnedMemory(hostMapped);
    this.context = Driver.retainPrimaryContext(handle);
    try {
      Driver.setCurrent(context);
      this.stream = Driver.createStream();
    } catch (RuntimeException | Error e) {
      try {
        Driver.releasePrimaryContext(handle); // no instance reaches a caller to close
      } catch (RuntimeException | Error suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    this.main = new Lane(stream);
  }

  /** Binds the context to the calling thread; every entry point calls this first. */
  void makeCurrent() {
    if (closed) {
      throw new IllegalStateException("the CUDA device is closed");
    }
    Driver.setCurrent(context);
  }

  /**
   * The context current on the calling thread (another library's, or none), for a call from a caller's thread to
   * make current again when it ends ({@link #restoreCurrent}): the caller's own CUDA work after the call runs where
   * it ran before, not on this device.
   */
  static Driver.Context callerContext() {
    try {
      return Driver.currentContext();
    } catch (CudaException e) {
      return null; // a driver that cannot say fails the call's own steps by name; nothing to make current again
    }
  }

  /**
   * Makes {@code previous}, from {@link #callerContext}, current again on the calling thread; where that fails (a
   * context another thread destroyed meanwhile) the thread is left with none rather than with this device's. Never
   * throws: the call's own result or failure stands, and the thread's context is a courtesy to the caller.
   */
  static void restoreCurrent(Driver.Context previous) {
    if (previous == null) {
      return;
    }
    try {
      Driver.setCurrent(previous);
    } catch (CudaException e) {
      try {
        Driver.setCurrent(new Driver.Context(MemorySegment.NULL));
      } catch (CudaException ignored) {
        // a driver that cannot unbind fails the next call's own steps by name
      }
    }
  }

  /** A kernel of one of the jar's modules, loaded on first use. */
  Driver.Entry function(KernelModule module, String kernel) {
    return functions.computeIfAbsent(module.name() + "/" + kernel,
        k -> Driver.function(modules.computeIfAbsent(module.name(), m -> load(jarImage(module))), kernel));
  }

  /**
   * A kernel of a module another jar brings (the fatbin {@code image}), loaded on first use; its name is kept apart
   * from the jar's modules, so that it never stands for one of them.
   */
  Driver.Entry function(String module, Supplier<byte[]> image, String kernel) {
    String key = "external:" + module;
    return functions.computeIfAbsent(key + "/" + kernel,
        k -> Driver.function(modules.computeIfAbsent(key, m -> load(image.get())), kernel));
  }

  private static byte[] jarImage(KernelModule module) {
    String path = module.resource();
    try (InputStream in = CudaDevice.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("kernel module " + path + " is missing from the jar");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new IllegalStateException("cannot read kernel module " + path + ": " + e, e);
    }
  }

  private static Driver.LoadedModule load(byte[] image) {
    // the image must outlive the load call only; the driver copies it
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment copy = arena.allocate(image.length + 1L, 16);
      MemorySegment.copy(image, 0, copy, ValueLayout.JAVA_BYTE, 0, image.length);
      return Driver.loadModule(copy);
    }
  }

  /**
   * Blocks of {@code blockSize} threads with {@code sharedBytes} of dynamic shared memory one SM holds, asked
   * once per kernel and size.
   */
  int residentBlocksPerMultiprocessor(Driver.Entry function, int blockSize, int sharedBytes) {
    return residentBlocks.computeIfAbsent(new Occupancy(function, blockSize, sharedBytes),
        o -> Math.max(1, Driver.maxActiveBlocksPerMultiprocessor(o.function(), o.blockSize(), o.sharedBytes())));
  }

  /** Lets {@code function} launch with up to {@code bytes} of dynamic shared memory (set once per size). */
  void allowDynamicSharedMemory(Driver.Entry function, int bytes) {
    Integer allowed = sharedMemoryAllowed.get(function);
    if (allowed == null || allowed < bytes) {
      Driver.setMaxDynamicSharedMemory(function, bytes);
      sharedMemoryAllowed.put(function, bytes);
    }
  }

  /** The main lane's scratch buffer {@code slot} of at least {@code bytes}; grows, never shrinks. */
  long scratch(ScratchSlot slot, long bytes) {
    return main.scratch(slot, bytes);
  }

  /**
   * Orders a launch whose grid holds every SM for its whole run (a persistent, compute-bound grid) after
   * the previous such launch when that went to another lane. Two of them gain nothing by overlapping, and
   * their blocks interleaved lose the L2 reuse their work order is built on (rule 8 of
   * docs/design/kernel-selection.md). Call before
   * the launch, then {@link #markWholeDeviceLaunch} after it.
   */
  void orderWholeDeviceLaunch(Lane lane) {
    if (wholeDeviceLane != null && wholeDeviceLane != lane) {
      Driver.streamWait(lane.stream, wholeDeviceMarker);
    }
  }

  /** Records the end of a launch that {@link #orderWholeDeviceLaunch} ordered, on its lane. */
  void markWholeDeviceLaunch(Lane lane) {
    if (wholeDeviceMarker == null) {
      wholeDeviceMarker = Driver.createMarker();
    }
    Driver.record(wholeDeviceMarker, lane.stream);
    wholeDeviceLane = lane;
  }

  /**
   * A stream with scratch buffers and work counters of its own, so that launches on different lanes may
   * run at once (PipelinedCalls alternates them). The device's own stream is {@link #main}.
   */
  final class Lane {
    /** A scratch buffer: its device address and size. */
    private record Buffer(long pointer, long bytes) {}

    final Driver.Stream stream;
    private final Map<ScratchSlot, Buffer> scratch = new EnumMap<>(ScratchSlot.class);

    private Lane(Driver.Stream stream) {
      this.stream = stream;
    }

    /** This lane's buffer {@code slot} of at least {@code bytes}; grows, never shrinks. */
    long scratch(ScratchSlot slot, long bytes) {
      return scratch(slot, bytes, Long.MAX_VALUE);
    }

    /**
     * As above, growing by half its size each time but past {@code growthCap} bytes only as far as {@code bytes}
     * asks: for buffers whose users keep within a cap.
     */
    long scratch(ScratchSlot slot, long bytes, long growthCap) {
      Buffer entry = scratch.get(slot);
      if (entry != null && entry.bytes() >= bytes) {
        return entry.pointer();
      }
      if (entry != null) {
        Driver.synchronize(stream); // the old buffer may still be in use by queued work
        scratch.remove(slot); // a failed allocation below must not leave the freed buffer to the next call
        release(entry.pointer(), entry.bytes());
      }
      long size = Math.max(bytes, entry == null ? 0 : Math.min(growthCap, entry.bytes() * 3 / 2));
      long p = allocate(size);
      scratch.put(slot, new Buffer(p, size));
      return p;
    }

    /**
     * This lane's buffer {@code slot}, zeroed on its stream whenever it is (re)allocated: for counters that
     * every launch using them leaves zero.
     */
    long zeroedScratch(ScratchSlot slot, long bytes) {
      Buffer before = scratch.get(slot);
      long p = scratch(slot, bytes);
      Buffer now = scratch.get(slot);
      // another entry (by identity) is a new allocation, even at the old address: the driver may hand the freed
      // block back, its tail past the old size holding whatever was there
      if (now != before) {
        Driver.fill32(p, 0, now.bytes() / 4, stream);
      }
      return p;
    }

    /** Bytes of this lane's buffer {@code slot} (0: never allocated). */
    long scratchBytes(ScratchSlot slot) {
      Buffer entry = scratch.get(slot);
      return entry == null ? 0 : entry.bytes();
    }

    private void freeScratch(Releases releases) {
      for (Buffer e : scratch.values()) {
        releases.run(() -> Driver.free(e.pointer()));
      }
      scratch.clear();
    }
  }

  /** The lane of the device's own stream: every call but those {@link #lane} hands out. */
  final Lane main;
  private final List<Lane> lanes = new ArrayList<>();

  /** Lane {@code i} (0: {@link #main}; others made on first use, each with its own stream). */
  Lane lane(int i) {
    if (i == 0) {
      return main;
    }
    while (lanes.size() < i) {
      lanes.add(new Lane(Driver.createStream()));
    }
    return lanes.get(i - 1);
  }

  /** Waits for the work queued on every lane. */
  void synchronizeAll() {
    Driver.synchronize(stream);
    for (Lane l : lanes) {
      Driver.synchronize(l.stream);
    }
  }

  /**
   * Pinned host memory of at least {@code bytes} for staging copies, reused from call to call (given back where
   * calls leave most of it unused: {@link PinnedSizing}); a slice of an earlier request is not used after this one.
   */
  MemorySegment pinned(long bytes) {
    return pinned.atLeast(bytes, waitForMainStream);
  }

  /** Work queued on the main stream may still read or write pinned memory that is replaced: waited for first. */
  private final Runnable waitForMainStream = this::synchronizeMain;

  private void synchronizeMain() {
    Driver.synchronize(stream);
  }

  /**
   * The device address of {@code slice}, a part of the current {@link #pinned} memory, for a kernel to
   * write its results straight to the host (only where {@link #hostMapped}).
   */
  long deviceAddress(MemorySegment slice) {
    return pinned.deviceAddress(slice);
  }

  /** A tracked device allocation (freed with {@link #release}). */
  long allocate(long bytes) {
    long p = Driver.malloc(bytes);
    allocatedBytes += bytes;
    peakAllocatedBytes = Math.max(peakAllocatedBytes, allocatedBytes);
    return p;
  }

  void release(long pointer, long bytes) {
    Driver.free(pointer);
    allocatedBytes -= bytes;
  }

  void resetPeak() {
    peakAllocatedBytes = allocatedBytes;
  }

  long allocatedBytes() {
    return allocatedBytes;
  }

  long peakAllocatedBytes() {
    return peakAllocatedBytes;
  }

  /**
   * Frees everything and releases the context, each step whatever the others did (after a kernel's sticky
   * error the synchronisation fails, yet nothing runs any more and the context must still be released); throws
   * the first failure, with the rest suppressed. A second close does nothing.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      Driver.setCurrent(context);
    } catch (RuntimeException | Error e) { // the frees below would go to whatever context this thread has
      try {
        Driver.releasePrimaryContext(handle);
      } catch (RuntimeException | Error failed) {
        e.addSuppressed(failed);
      }
      throw e;
    }
    Releases releases = new Releases();
    releases.run(this::synchronizeAll);
    main.freeScratch(releases);
    for (Lane l : lanes) {
      l.freeScratch(releases);
    }
    releases.run(pinned::close);
    for (Driver.LoadedModule m : modules.values()) {
      releases.run(() -> Driver.unloadModule(m));
    }
    modules.clear();
    functions.clear();
    if (wholeDeviceMarker != null) {
      Driver.Event marker = wholeDeviceMarker;
      wholeDeviceMarker = null;
      releases.run(() -> Driver.destroyEvent(marker));
    }
    releases.run(() -> Driver.destroyStream(stream));
    for (Lane l : lanes) {
      releases.run(() -> Driver.destroyStream(l.stream));
    }
    lanes.clear();
    releases.run(() -> Driver.releasePrimaryContext(handle));
    releases.throwIfFailed();
  }
}
