package dev.maxsim4j.internal.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Kernel parameters: one 8-byte slot per argument and the array of pointers to the slots that
 * cuLaunchKernel takes. The driver reads them during the launch call, so one block, used under the
 * backend's lock, serves every launch (no allocation per call).
 */
final class KernelParams implements AutoCloseable {
  static final int MAX = 28;

  private final Arena arena = Arena.ofShared();
  private final MemorySegment slots = arena.allocate(8L * MAX, 8);
  private final MemorySegment pointers = arena.allocate(ADDRESS, MAX);
  /** The one argument passed by value that is larger than 8 bytes: a tensor map (64-byte aligned). */
  private final MemorySegment tensorMap = arena.allocate(Driver.TENSOR_MAP_BYTES, 64);

  KernelParams() {
    for (int i = 0; i < MAX; i++) {
      pointers.setAtIndex(ADDRESS, i, slots.asSlice(8L * i, 8));
    }
  }

  /**
   * Writes the arguments (Integer: 4 bytes of its slot; Long: device pointers and 64-bit counts; a
   * MemorySegment: a tensor map, copied whole) and returns the pointer array for {@link Driver#launch}.
   */
  MemorySegment set(Object... args) {
    if (args.length > MAX) {
      throw new IllegalArgumentException(args.length + " kernel arguments; at most " + MAX);
    }
    for (int i = 0; i < args.length; i++) {
      MemorySegment target = slots.asSlice(8L * i, 8);
      if (args[i] instanceof Integer v) {
        slots.set(JAVA_INT, 8L * i, v);
      } else if (args[i] instanceof MemorySegment map) {
        MemorySegment.copy(map, 0, tensorMap, 0, Driver.TENSOR_MAP_BYTES);
        target = tensorMap;
      } else {
        slots.set(JAVA_LONG, 8L * i, (Long) args[i]);
      }
      pointers.setAtIndex(ADDRESS, i, target);
    }
    return pointers;
  }

  /** The pointer array as last set. */
  MemorySegment pointers() {
    return pointers;
  }

  @Override
  public void close() {
    arena.close();
  }
}
