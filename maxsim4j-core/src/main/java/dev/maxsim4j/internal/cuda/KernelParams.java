package dev.maxsim4j.internal.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.Consumer;

/**
 * Kernel parameters: one 8-byte slot per argument and the array of pointers to the slots that
 * cuLaunchKernel takes. The driver reads them during the launch call, so one block, used under the
 * backend's lock, serves every launch (no allocation per call).
 */
final class KernelParams implements AutoCloseable {
  static final int MAX = 28;

  /** Where a launch's scratch buffers and tensor maps come from: the lane it goes to. */
  interface Resolver {
    long scratch(KernelArgs.Scratch buffer);

    MemorySegment tensorMap(DeviceTokens documents);
  }

  /** For kernels that take neither scratch placeholders nor tensor maps. */
  static final Resolver PLAIN = new Resolver() {
    @Override
    public long scratch(KernelArgs.Scratch buffer) {
      throw new IllegalStateException("this launch has no lane to hand out scratch buffer " + buffer.slot());
    }

    @Override
    public MemorySegment tensorMap(DeviceTokens documents) {
      throw new IllegalStateException("this launch has no lane to encode a tensor map on");
    }
  };

  private final Arena arena = Arena.ofShared();
  private final MemorySegment slots = arena.allocate(8L * MAX, 8);
  private final MemorySegment pointers = arena.allocate(ADDRESS, MAX);
  /** The one argument passed by value that is larger than 8 bytes: a tensor map (64-byte aligned). */
  private final MemorySegment tensorMap = arena.allocate(Driver.TENSOR_MAP_BYTES, 64);
  private final Writer writer = new Writer();

  KernelParams() {
    for (int i = 0; i < MAX; i++) {
      pointers.setAtIndex(ADDRESS, i, slots.asSlice(8L * i, 8));
    }
  }

  /**
   * Writes {@code args}, their scratch buffers and tensor map from {@code resolver}, and returns the pointer
   * array for {@link Driver#launch}.
   */
  MemorySegment set(KernelArgs args, Resolver resolver) {
    args.writeTo(reset(resolver));
    return pointers;
  }

  /** Writes the arguments {@code arguments} gives (a kernel of another jar's) and returns the pointer array. */
  MemorySegment set(Consumer<LaunchArguments> arguments) {
    arguments.accept(reset(PLAIN));
    return pointers;
  }

  private Writer reset(Resolver resolver) {
    if (writer.mapSlot >= 0) { // the slot the last tensor map took points at its own 8 bytes again
      pointers.setAtIndex(ADDRESS, writer.mapSlot, slots.asSlice(8L * writer.mapSlot, 8));
      writer.mapSlot = -1;
    }
    writer.count = 0;
    writer.resolver = resolver;
    return writer;
  }

  @Override
  public void close() {
    arena.close();
  }

  /** Fills the slots in order: an int or float in the first 4 bytes of its slot, a tensor map copied whole. */
  private final class Writer implements KernelArgs.Sink {
    int count;
    Resolver resolver;
    /** The argument whose pointer points at the tensor map, or -1. */
    int mapSlot = -1;

    private long next() {
      if (count == MAX) {
        throw new IllegalArgumentException("more than " + MAX + " kernel arguments");
      }
      return 8L * count++;
    }

    @Override
    public KernelArgs.Sink i64(long value) {
      slots.set(JAVA_LONG, next(), value);
      return this;
    }

    @Override
    public KernelArgs.Sink i32(int value) {
      slots.set(JAVA_INT, next(), value);
      return this;
    }

    @Override
    public KernelArgs.Sink f32(float value) {
      slots.set(JAVA_FLOAT, next(), value);
      return this;
    }

    @Override
    public KernelArgs.Sink scratch(KernelArgs.Scratch buffer) {
      return i64(buffer == null ? 0L : resolver.scratch(buffer));
    }

    @Override
    public KernelArgs.Sink tensorMap(DeviceTokens documents) {
      MemorySegment map = resolver.tensorMap(documents);
      next();
      MemorySegment.copy(map, 0, tensorMap, 0, Driver.TENSOR_MAP_BYTES);
      mapSlot = count - 1;
      pointers.setAtIndex(ADDRESS, mapSlot, tensorMap);
      return this;
    }
  }
}
