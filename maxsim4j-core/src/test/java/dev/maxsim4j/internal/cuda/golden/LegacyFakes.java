package dev.maxsim4j.internal.cuda.golden;

import dev.maxsim4j.DType;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@link LegacyForwardKernels} (the forward-kernel choice as it stood before the plan existed, its
 * device calls pointed here) saw of a GPU: capabilities, a shared-memory occupancy model, and a log of every
 * launch, shared-memory opt-in, scratch request and ordering it made. Used only to write the expected plans.
 */
final class LegacyFakes {
  private LegacyFakes() {}

  /** The forward's view of a batch on the device (as the main code's DeviceTokens). */
  record DeviceTokens(DType dtype, int dim, int rows, int maxLength, int storedTokens, long data, long rowStart,
      long rowLength, long validCount, long mask) {}

  static void encodeTiled2d(MemorySegment map, boolean bf16, long data, int tokens, int dim, int box, int box2) {}

  /** Symbolic names of fake device addresses, so logged arguments read as names. */
  static final Map<Long, String> NAMES = new HashMap<>();

  static long pointer(String name) {
    long p = (0x7000L << 32) + 0x1000L * (NAMES.size() + 1);
    NAMES.put(p, name);
    return p;
  }

  static String show(Object o) {
    if (o instanceof Integer i) {
      return i.toString();
    }
    if (o instanceof Long l) {
      String n = NAMES.get(l);
      return n != null ? n : l + "L";
    }
    return "tensorMap";
  }

  static final class Params {
    Object[] args = new Object[0];

    MemorySegment set(Object... args) {
      this.args = args.clone();
      return null;
    }

    MemorySegment pointers() {
      return null;
    }
  }

  /** A stream's scratch: each slot one fixed fake address, each request logged with its size. */
  static final class Lane {
    final Object stream = "stream";
    private final Device device;
    private final Map<String, Long> slots = new HashMap<>();

    Lane(Device device) {
      this.device = device;
    }

    long scratch(String slot, long bytes) {
      device.log.add("scratch " + slot + " " + bytes);
      return slots.computeIfAbsent(slot, LegacyFakes::pointer);
    }

    long zeroedScratch(String slot, long bytes) {
      device.log.add("zeroed " + slot + " " + bytes);
      return slots.computeIfAbsent(slot, LegacyFakes::pointer);
    }

    long workCounters() {
      return zeroedScratch("work-counters", 16);
    }
  }

  static final class Device {
    final int major;
    final int minor;
    final int multiprocessors;
    final int sharedMemoryPerBlockOptin;
    final boolean tensorMaps;
    final Lane main = new Lane(this);
    final List<String> log = new ArrayList<>();
    private final Map<String, MemorySegment> functions = new LinkedHashMap<>();
    private final Map<Long, String> functionNames = new HashMap<>();
    private Params params;

    Device(int major, int minor, int multiprocessors, int sharedMemoryPerBlockOptin, boolean tensorMaps) {
      this.major = major;
      this.minor = minor;
      this.multiprocessors = multiprocessors;
      this.sharedMemoryPerBlockOptin = sharedMemoryPerBlockOptin;
      this.tensorMaps = tensorMaps;
    }

    void watch(Params params) {
      this.params = params;
    }

    MemorySegment function(String module, String kernel) {
      return functions.computeIfAbsent(module + "/" + kernel, k -> {
        MemorySegment fn = MemorySegment.ofAddress(functions.size() + 1);
        functionNames.put(fn.address(), k);
        return fn;
      });
    }

    void allowDynamicSharedMemory(MemorySegment fn, int bytes) {
      log.add("allow " + bytes);
    }

    int residentBlocksPerMultiprocessor(MemorySegment fn, int threads, int sharedBytes) {
      return occupancy(threads, sharedBytes, sharedMemoryPerBlockOptin);
    }

    void orderWholeDeviceLaunch(Lane lane) {
      log.add("order");
    }

    void markWholeDeviceLaunch(Lane lane) {
      log.add("mark");
    }

    void launch(MemorySegment fn, String kernel, int gridX, int gridY, int threads, int sharedBytes, Object stream,
        MemorySegment pointers) {
      StringBuilder b = new StringBuilder("launch ").append(functionNames.get(fn.address())).append(" grid ")
          .append(gridX).append('x').append(gridY).append(" threads ").append(threads).append(" shared ")
          .append(sharedBytes).append(" (");
      for (int i = 0; i < params.args.length; i++) {
        b.append(i == 0 ? "" : ", ").append(show(params.args[i]));
      }
      log.add(b.append(')').toString());
    }
  }

  /**
   * Blocks per SM as a shared-memory and thread bound (an SM holds 2048 threads and the opt-in maximum plus
   * 1 KB of shared memory, each block 1 KB of it reserved): a model, identical for the old and new code.
   */
  static int occupancy(int threads, int sharedBytes, int sharedMemoryPerBlockOptin) {
    int bySharedMemory = (sharedMemoryPerBlockOptin + 1024) / (sharedBytes + 1024);
    return Math.max(1, Math.min(2048 / threads, bySharedMemory));
  }
}
