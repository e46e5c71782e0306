package dev.maxsim4j.bench.gpu;

import dev.maxsim4j.internal.cuda.CudaBackend;
import dev.maxsim4j.internal.cuda.PinnedHostMemory;
import java.lang.foreign.MemorySegment;

/** Copy bandwidths measured on the device by CUDA events: the floors the benchmarks at scale compare with. */
final class CopyBandwidth {
  private CopyBandwidth() {}

  /**
   * GB/s (10^9 bytes) of host-to-device copies from {@code pinned} (page-locked): {@code pieces} copies of
   * {@code pieceBytes} taken in turn from its start, after one unmeasured copy.
   */
  static double hostToDevice(CudaBackend backend, PinnedHostMemory pinned, long pieceBytes, int pieces) {
    MemorySegment from = pinned.segment();
    if (pieceBytes < 1 || pieces < 1 || from.byteSize() == 0) {
      throw new IllegalArgumentException("pieceBytes = " + pieceBytes + ", pieces = " + pieces + " from "
          + from.byteSize() + " pinned bytes; expected pieceBytes >= 1, pieces >= 1 and pinned memory of 1 byte"
          + " or more");
    }
    long piece = Math.min(pieceBytes, from.byteSize());
    long slots = Math.max(1, from.byteSize() / piece);
    return backend.withDevice(device -> {
      long to = device.allocateScratch(piece);
      device.copyToDevice(to, from, piece);
      double ms = device.millis(() -> {
        for (int i = 0; i < pieces; i++) {
          device.copyToDevice(to, from.asSlice(i % slots * piece, piece), piece);
        }
      });
      return (double) pieces * piece / (ms * 1e6);
    });
  }

  /**
   * GB/s through device memory of device-to-device copies of {@code bytes}, counting what is read and what is
   * written (a copy moves twice its size through device memory): {@code repetitions} copies after one unmeasured
   * copy.
   */
  static double deviceToDevice(CudaBackend backend, long bytes, int repetitions) {
    if (bytes < 1 || repetitions < 1) {
      throw new IllegalArgumentException("bytes = " + bytes + ", repetitions = " + repetitions
          + "; expected both >= 1");
    }
    return backend.withDevice(device -> {
      long from = device.allocateScratch(bytes);
      long to = device.allocateScratch(bytes);
      device.copyOnDevice(to, from, bytes);
      double ms = device.millis(() -> {
        for (int i = 0; i < repetitions; i++) {
          device.copyOnDevice(to, from, bytes);
        }
      });
      return 2.0 * repetitions * bytes / (ms * 1e6);
    });
  }
}
