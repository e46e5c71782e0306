package dev.maxsim4j.internal.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.maxsim4j.CudaException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Hand-written FFM downcalls into the CUDA driver API ({@code libcuda.so.1}). The only class that touches
 * native CUDA symbols; every call's {@code CUresult} is checked and a failure becomes a
 * {@link CudaException} with the driver's own error name and text. CUDA handles are typed (a stream cannot stand
 * for an event, nor a module for a context); device pointers are {@code long}.
 */
final class Driver {
  /** A primary context (CUcontext). */
  record Context(MemorySegment handle) {}

  /** A loaded module of kernels (CUmodule). */
  record LoadedModule(MemorySegment handle) {}

  /** A kernel entry point of a loaded module (CUfunction). */
  record Entry(MemorySegment handle) {}

  /** A stream (CUstream): work queued on it runs in order. */
  record Stream(MemorySegment handle) {}

  /** An event (CUevent): a point of a stream, to wait for or to time. */
  record Event(MemorySegment handle) {}

  /** A GPU as the driver numbers it (CUdevice). */
  record Device(int handle) {}

  /** What {@link #attribute} reads of a device, with its CUdevice_attribute code. */
  enum DeviceAttribute {
    MULTIPROCESSOR_COUNT(16),
    UNIFIED_ADDRESSING(41),
    COMPUTE_CAPABILITY_MAJOR(75),
    COMPUTE_CAPABILITY_MINOR(76),
    MAX_SHARED_MEMORY_PER_BLOCK_OPTIN(97);

    final int code;

    DeviceAttribute(int code) {
      this.code = code;
    }
  }

  /** Free and total bytes of a device's memory. */
  record MemoryInfo(long free, long total) {}

  static final int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
  static final int CU_STREAM_NON_BLOCKING = 1;
  static final int CU_EVENT_DEFAULT = 0;
  static final int CU_EVENT_DISABLE_TIMING = 2;

  private static final Linker LINKER = Linker.nativeLinker();
  private static final String LOAD_ERROR;
  private static final SymbolLookup CUDA;
  /** Entry points the loaded library lacks: every handle is checked, so none is called as null. */
  private static final List<String> MISSING = new ArrayList<>();

  static {
    SymbolLookup lookup = null;
    String error = null;
    try {
      lookup = SymbolLookup.libraryLookup("libcuda.so.1", Arena.global());
    } catch (IllegalCallerException e) { // --illegal-native-access=deny, or a module not granted native access
      error = "the CUDA driver cannot be called: native access is not enabled for maxsim4j (start the JVM with"
          + " --enable-native-access=dev.maxsim4j on the module path, --enable-native-access=ALL-UNNAMED on the class"
          + " path): " + e.getMessage();
    } catch (IllegalArgumentException e) {
      error = "libcuda.so.1 (the CUDA driver) cannot be loaded: " + e.getMessage();
    }
    CUDA = lookup;
    LOAD_ERROR = error;
  }

  /** A required entry point: without it the backend is unavailable ({@link #loadError}). */
  private static MethodHandle fn(String name, FunctionDescriptor fd) {
    MethodHandle handle = optionalFn(name, fd);
    if (handle == null && CUDA != null) {
      MISSING.add(name);
    }
    return handle;
  }

  /** An entry point whose absence a caller handles (null): a feature of newer drivers. */
  private static MethodHandle optionalFn(String name, FunctionDescriptor fd) {
    return CUDA == null ? null : CUDA.find(name).map(addr -> LINKER.downcallHandle(addr, fd)).orElse(null);
  }

  private static final FunctionDescriptor I_I = FunctionDescriptor.of(JAVA_INT, JAVA_INT);
  private static final FunctionDescriptor I_A = FunctionDescriptor.of(JAVA_INT, ADDRESS);
  private static final FunctionDescriptor I_AI = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT);
  private static final FunctionDescriptor I_AA = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS);

  private static final MethodHandle INIT = fn("cuInit", I_I);
  private static final MethodHandle DEVICE_GET_COUNT = fn("cuDeviceGetCount", I_A);
  private static final MethodHandle DEVICE_GET = fn("cuDeviceGet", I_AI);
  private static final MethodHandle DEVICE_GET_ATTRIBUTE = fn("cuDeviceGetAttribute",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
  private static final MethodHandle DEVICE_GET_NAME = fn("cuDeviceGetName",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
  private static final MethodHandle PRIMARY_CTX_RETAIN = fn("cuDevicePrimaryCtxRetain", I_AI);
  private static final MethodHandle PRIMARY_CTX_RELEASE = fn("cuDevicePrimaryCtxRelease_v2", I_I);
  private static final MethodHandle CTX_SET_CURRENT = fn("cuCtxSetCurrent", I_A);
  private static final MethodHandle CTX_GET_CURRENT = fn("cuCtxGetCurrent", I_A);
  private static final MethodHandle MODULE_LOAD_DATA = fn("cuModuleLoadData", I_AA);
  private static final MethodHandle MODULE_UNLOAD = fn("cuModuleUnload", I_A);
  private static final MethodHandle MODULE_GET_FUNCTION = fn("cuModuleGetFunction",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
  private static final MethodHandle FUNC_SET_ATTRIBUTE = fn("cuFuncSetAttribute",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
  private static final MethodHandle OCCUPANCY_MAX_BLOCKS = fn("cuOccupancyMaxActiveBlocksPerMultiprocessor",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG));
  private static final MethodHandle TENSOR_MAP_ENCODE_TILED = optionalFn("cuTensorMapEncodeTiled",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, ADDRESS,
          JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT));
  private static final MethodHandle LAUNCH_KERNEL = fn("cuLaunchKernel", FunctionDescriptor.of(JAVA_INT,
      ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
  private static final MethodHandle MEM_ALLOC = fn("cuMemAlloc_v2",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
  private static final MethodHandle MEM_FREE = fn("cuMemFree_v2", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
  private static final MethodHandle MEM_ALLOC_HOST = fn("cuMemAllocHost_v2",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
  private static final MethodHandle MEM_FREE_HOST = fn("cuMemFreeHost", I_A);
  private static final MethodHandle MEM_HOST_GET_DEVICE_POINTER = fn("cuMemHostGetDevicePointer_v2",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
  private static final MethodHandle MEM_GET_INFO = fn("cuMemGetInfo_v2", I_AA);
  private static final MethodHandle MEMCPY_HTOD_ASYNC = fn("cuMemcpyHtoDAsync_v2",
      FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS, JAVA_LONG, ADDRESS));
  private static final MethodHandle MEMCPY_DTOH_ASYNC = fn("cuMemcpyDtoHAsync_v2",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS));
  private static final MethodHandle MEMCPY_DTOD_ASYNC = fn("cuMemcpyDtoDAsync_v2",
      FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS));
  private static final MethodHandle MEM_HOST_GET_FLAGS = optionalFn("cuMemHostGetFlags", I_AA);
  private static final MethodHandle MEMSET_D32_ASYNC = fn("cuMemsetD32Async",
      FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG, ADDRESS));
  private static final MethodHandle STREAM_CREATE = fn("cuStreamCreate", I_AI);
  private static final MethodHandle STREAM_DESTROY = fn("cuStreamDestroy_v2", I_A);
  private static final MethodHandle STREAM_SYNCHRONIZE = fn("cuStreamSynchronize", I_A);
  private static final MethodHandle EVENT_CREATE = fn("cuEventCreate", I_AI);
  private static final MethodHandle EVENT_DESTROY = fn("cuEventDestroy_v2", I_A);
  private static final MethodHandle EVENT_RECORD = fn("cuEventRecord", I_AA);
  private static final MethodHandle EVENT_SYNCHRONIZE = fn("cuEventSynchronize", I_A);
  private static final MethodHandle STREAM_WAIT_EVENT = fn("cuStreamWaitEvent",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
  private static final MethodHandle EVENT_ELAPSED_TIME = fn("cuEventElapsedTime",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
  private static final MethodHandle GET_ERROR_NAME = fn("cuGetErrorName",
      FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
  private static final MethodHandle GET_ERROR_STRING = fn("cuGetErrorString",
      FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));

  private Driver() {}

  /** Why the driver library or one of its symbols is missing, or empty when all are there. */
  static Optional<String> loadError() {
    if (LOAD_ERROR != null) {
      return Optional.of(LOAD_ERROR);
    }
    if (!MISSING.isEmpty()) {
      return Optional.of("libcuda.so.1 lacks driver API entry points maxsim4j needs (" + String.join(", ", MISSING)
          + "): the driver is too old");
    }
    return Optional.empty();
  }

  // ---------------------------------------------------------------- error handling

  static void check(int result, String call) {
    if (result != 0) {
      throw new CudaException(call, result, errorText(GET_ERROR_NAME, result, "CUDA_ERROR_" + result),
          errorText(GET_ERROR_STRING, result, "unknown error"));
    }
  }

  private static String errorText(MethodHandle h, int result, String fallback) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      if ((int) h.invokeExact(result, out) != 0) {
        return fallback;
      }
      MemorySegment str = out.get(ADDRESS, 0).reinterpret(4096);
      return str.getString(0);
    } catch (Throwable t) {
      return fallback;
    }
  }

  private static RuntimeException rethrow(Throwable t) {
    if (t instanceof RuntimeException r) {
      return r;
    }
    if (t instanceof Error e) {
      throw e;
    }
    return new IllegalStateException(t);
  }

  /** A downcall returning a CUresult. */
  @FunctionalInterface
  private interface Call {
    int invoke() throws Throwable;
  }

  /** A downcall returning a CUresult and writing its answer into {@code out}. */
  @FunctionalInterface
  private interface OutCall {
    int invoke(MemorySegment out) throws Throwable;
  }

  /** Runs a downcall and checks its result. */
  private static void run(String name, Call call) {
    int result;
    try {
      result = call.invoke();
    } catch (Throwable t) {
      throw rethrow(t);
    }
    check(result, name);
  }

  /** Runs a downcall with one out-parameter of {@code layout} and returns what it wrote. */
  private static MemorySegment out(String name, java.lang.foreign.MemoryLayout layout, Arena arena, OutCall call) {
    MemorySegment out = arena.allocate(layout);
    run(name, () -> call.invoke(out));
    return out;
  }

  private static int intOut(String name, OutCall call) {
    try (Arena arena = Arena.ofConfined()) {
      return out(name, JAVA_INT, arena, call).get(JAVA_INT, 0);
    }
  }

  private static long longOut(String name, OutCall call) {
    try (Arena arena = Arena.ofConfined()) {
      return out(name, JAVA_LONG, arena, call).get(JAVA_LONG, 0);
    }
  }

  private static MemorySegment addressOut(String name, OutCall call) {
    try (Arena arena = Arena.ofConfined()) {
      return out(name, ADDRESS, arena, call).get(ADDRESS, 0);
    }
  }

  // ---------------------------------------------------------------- device and context

  static void init() {
    run("cuInit", () -> (int) INIT.invokeExact(0));
  }

  static int deviceCount() {
    return intOut("cuDeviceGetCount", n -> (int) DEVICE_GET_COUNT.invokeExact(n));
  }

  static Device device(int ordinal) {
    return new Device(intOut("cuDeviceGet", d -> (int) DEVICE_GET.invokeExact(d, ordinal)));
  }

  static int attribute(Device device, DeviceAttribute attribute) {
    return intOut("cuDeviceGetAttribute(" + attribute + " = " + attribute.code + ")",
        v -> (int) DEVICE_GET_ATTRIBUTE.invokeExact(v, attribute.code, device.handle()));
  }

  static String deviceName(Device device) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment name = arena.allocate(256);
      run("cuDeviceGetName", () -> (int) DEVICE_GET_NAME.invokeExact(name, 256, device.handle()));
      return name.getString(0);
    }
  }

  static Context retainPrimaryContext(Device device) {
    return new Context(addressOut("cuDevicePrimaryCtxRetain",
        c -> (int) PRIMARY_CTX_RETAIN.invokeExact(c, device.handle())));
  }

  static void releasePrimaryContext(Device device) {
    run("cuDevicePrimaryCtxRelease", () -> (int) PRIMARY_CTX_RELEASE.invokeExact(device.handle()));
  }

  static void setCurrent(Context ctx) {
    run("cuCtxSetCurrent", () -> (int) CTX_SET_CURRENT.invokeExact(ctx.handle()));
  }

  /** The context current on the calling thread: a NULL handle where none is. */
  static Context currentContext() {
    return new Context(addressOut("cuCtxGetCurrent", c -> (int) CTX_GET_CURRENT.invokeExact(c)));
  }

  // ---------------------------------------------------------------- modules and launches

  static LoadedModule loadModule(MemorySegment image) {
    return new LoadedModule(addressOut("cuModuleLoadData", m -> (int) MODULE_LOAD_DATA.invokeExact(m, image)));
  }

  static void unloadModule(LoadedModule module) {
    run("cuModuleUnload", () -> (int) MODULE_UNLOAD.invokeExact(module.handle()));
  }

  static Entry function(LoadedModule module, String name) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment cName = arena.allocateFrom(name);
      return new Entry(addressOut("cuModuleGetFunction(" + name + ")",
          f -> (int) MODULE_GET_FUNCTION.invokeExact(f, module.handle(), cName)));
    }
  }

  static void setMaxDynamicSharedMemory(Entry function, int bytes) {
    run("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", () -> (int) FUNC_SET_ATTRIBUTE.invokeExact(
        function.handle(), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes));
  }

  /** How many blocks of {@code blockSize} threads of {@code function} one multiprocessor holds at once. */
  static int maxActiveBlocksPerMultiprocessor(Entry function, int blockSize, long dynamicSharedBytes) {
    return intOut("cuOccupancyMaxActiveBlocksPerMultiprocessor",
        n -> (int) OCCUPANCY_MAX_BLOCKS.invokeExact(n, function.handle(), blockSize, dynamicSharedBytes));
  }

  static void launch(Entry function, String name, int gridX, int gridY, int blockX, int sharedBytes, Stream stream,
      MemorySegment params) {
    run("cuLaunchKernel(" + name + ")", () -> (int) LAUNCH_KERNEL.invokeExact(function.handle(), gridX, gridY, 1,
        blockX, 1, 1, sharedBytes, stream.handle(), params, MemorySegment.NULL));
  }

  /** Bytes of a CUtensorMap (it must be 64-byte aligned). */
  static final int TENSOR_MAP_BYTES = 128;

  /** Whether this driver has tensor maps (CUDA 12 and later). */
  static boolean hasTensorMaps() {
    return TENSOR_MAP_ENCODE_TILED != null;
  }

  /** A tensor map's element type: its CUtensorMapDataType and bytes. */
  enum MapElement {
    BYTE(0, 1), FLOAT16(6, 2), BFLOAT16(9, 2);

    final int code;
    final int bytes;

    MapElement(int code, int bytes) {
      this.code = code;
      this.bytes = bytes;
    }
  }

  /**
   * Fills {@code map} (128 bytes, 64-byte aligned) with a tensor map over a row-major matrix of
   * {@code element}s at device address {@code data}: {@code rows} x {@code columns}, read in boxes of
   * {@code boxRows} x {@code boxColumns} with the 128-byte swizzle (a box row of at most 128 bytes), zeros
   * outside the matrix.
   */
  static void encodeTiled2d(MemorySegment map, MapElement element, long data, long rows, long columns, int boxRows,
      int boxColumns) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment dims = arena.allocateFrom(JAVA_LONG, columns, rows);
      MemorySegment strides = arena.allocateFrom(JAVA_LONG, element.bytes * columns);
      MemorySegment box = arena.allocateFrom(JAVA_INT, boxColumns, boxRows);
      MemorySegment elementStrides = arena.allocateFrom(JAVA_INT, 1, 1);
      run("cuTensorMapEncodeTiled(" + rows + " x " + columns + ")", () -> (int) TENSOR_MAP_ENCODE_TILED.invokeExact(
          map, element.code, 2, data, dims, strides, box, elementStrides,
          0 /* no interleave */, 3 /* 128-byte swizzle */, 2 /* L2 promotion 128 B */, 0 /* zeros outside */));
    }
  }

  // ---------------------------------------------------------------- memory

  static long malloc(long bytes) {
    return longOut("cuMemAlloc(" + bytes + " bytes)", p -> (int) MEM_ALLOC.invokeExact(p, Math.max(bytes, 1L)));
  }

  static void free(long pointer) {
    run("cuMemFree", () -> (int) MEM_FREE.invokeExact(pointer));
  }

  static MemorySegment mallocHost(long bytes) {
    return addressOut("cuMemAllocHost(" + bytes + " bytes)",
        p -> (int) MEM_ALLOC_HOST.invokeExact(p, Math.max(bytes, 1L))).reinterpret(bytes);
  }

  /**
   * {@code pinned}, memory from {@link #mallocHost}, as a segment that lives only as long as {@code scope}: once
   * it closes, access throws instead of reaching the memory freed after it.
   */
  static MemorySegment scoped(MemorySegment pinned, Arena scope) {
    return pinned.reinterpret(pinned.byteSize(), scope, null);
  }

  static void freeHost(MemorySegment p) {
    run("cuMemFreeHost", () -> (int) MEM_FREE_HOST.invokeExact(p));
  }

  /** The device address of pinned host memory from {@link #mallocHost}: kernels write there directly. */
  static long hostDevicePointer(MemorySegment p) {
    return longOut("cuMemHostGetDevicePointer", d -> (int) MEM_HOST_GET_DEVICE_POINTER.invokeExact(d, p, 0));
  }

  /** Free and total bytes of device memory. */
  static MemoryInfo memInfo() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment free = arena.allocate(JAVA_LONG);
      MemorySegment total = arena.allocate(JAVA_LONG);
      run("cuMemGetInfo", () -> (int) MEM_GET_INFO.invokeExact(free, total));
      return new MemoryInfo(free.get(JAVA_LONG, 0), total.get(JAVA_LONG, 0));
    }
  }

  static void copyToDevice(long dst, MemorySegment src, long bytes, Stream stream) {
    run("cuMemcpyHtoDAsync(" + bytes + " bytes)",
        () -> (int) MEMCPY_HTOD_ASYNC.invokeExact(dst, src, bytes, stream.handle()));
  }

  static void copyOnDevice(long dst, long src, long bytes, Stream stream) {
    run("cuMemcpyDtoDAsync(" + bytes + " bytes)",
        () -> (int) MEMCPY_DTOD_ASYNC.invokeExact(dst, src, bytes, stream.handle()));
  }

  /**
   * Whether {@code address} lies in page-locked memory the driver allocated (cuMemAllocHost): copies from there
   * need no staging. Any other memory is an answer, not an error.
   */
  static boolean isPinned(MemorySegment address) {
    if (MEM_HOST_GET_FLAGS == null) {
      return false;
    }
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment flags = arena.allocate(JAVA_INT);
      return (int) MEM_HOST_GET_FLAGS.invokeExact(flags, address) == 0;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static void copyToHost(MemorySegment dst, long src, long bytes, Stream stream) {
    run("cuMemcpyDtoHAsync(" + bytes + " bytes)",
        () -> (int) MEMCPY_DTOH_ASYNC.invokeExact(dst, src, bytes, stream.handle()));
  }

  static void fill32(long dst, int value, long count, Stream stream) {
    run("cuMemsetD32Async", () -> (int) MEMSET_D32_ASYNC.invokeExact(dst, value, count, stream.handle()));
  }

  // ---------------------------------------------------------------- streams and events

  static Stream createStream() {
    return new Stream(addressOut("cuStreamCreate", s -> (int) STREAM_CREATE.invokeExact(s, CU_STREAM_NON_BLOCKING)));
  }

  static void destroyStream(Stream stream) {
    run("cuStreamDestroy", () -> (int) STREAM_DESTROY.invokeExact(stream.handle()));
  }

  static void synchronize(Stream stream) {
    run("cuStreamSynchronize", () -> (int) STREAM_SYNCHRONIZE.invokeExact(stream.handle()));
  }

  static Event createEvent() {
    return new Event(addressOut("cuEventCreate", e -> (int) EVENT_CREATE.invokeExact(e, CU_EVENT_DEFAULT)));
  }

  /** An event that only marks a point of a stream (no timing: cheaper to record and to wait for). */
  static Event createMarker() {
    return new Event(addressOut("cuEventCreate", e -> (int) EVENT_CREATE.invokeExact(e, CU_EVENT_DISABLE_TIMING)));
  }

  /** Blocks until the work before {@code event}'s last record has finished (a failed kernel throws). */
  static void waitFor(Event event) {
    run("cuEventSynchronize", () -> (int) EVENT_SYNCHRONIZE.invokeExact(event.handle()));
  }

  static void destroyEvent(Event event) {
    run("cuEventDestroy", () -> (int) EVENT_DESTROY.invokeExact(event.handle()));
  }

  static void record(Event event, Stream stream) {
    run("cuEventRecord", () -> (int) EVENT_RECORD.invokeExact(event.handle(), stream.handle()));
  }

  /** Makes {@code stream}'s later work wait, on the device, for the work before {@code event}'s last record. */
  static void streamWait(Stream stream, Event event) {
    run("cuStreamWaitEvent", () -> (int) STREAM_WAIT_EVENT.invokeExact(stream.handle(), event.handle(), 0));
  }

  static float elapsedMillis(Event start, Event end) {
    waitFor(end);
    try (Arena arena = Arena.ofConfined()) {
      return out("cuEventElapsedTime", JAVA_FLOAT, arena,
          ms -> (int) EVENT_ELAPSED_TIME.invokeExact(ms, start.handle(), end.handle())).get(JAVA_FLOAT, 0);
    }
  }
}
