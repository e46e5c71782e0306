package dev.maxsim4j.internal.cuda;

import java.lang.foreign.MemorySegment;

/**
 * Copy bandwidths measured on the device by CUDA events: the floors the benchmarks at scale compare with. Used
 * under the backend's lock.
 */
final class CopyBandwidth {
  private CopyBandwidth() {}

  /**
   * GB/s (10^9 bytes) of host-to-device copies from {@code pinned} (page-locked): {@code pieces} copies of
   * {@code pieceBytes} taken in turn from its start, after one unmeasured copy.
   */
  static double hostToDevice(CudaDevice device, MemorySegment pinned, long pieceBytes, int pieces) {
    long piece = Math.min(pieceBytes, pinned.byteSize());
    long slots = Math.max(1, pinned.byteSize() / piece);
    long dst = device.allocate(piece);
    try {
      Driver.copyToDevice(dst, pinned, piece, device.stream);
      return timed(device, (long) pieces * piece, () -> {
        for (int i = 0; i < pieces; i++) {
          Driver.copyToDevice(dst, pinned.asSlice(i % slots * piece, piece), piece, device.stream);
        }
      });
    } finally {
      Driver.synchronize(device.stream);
      device.release(dst, piece);
    }
  }

  /**
   * GB/s of device-to-device copies of {@code bytes}, counting what is read and what is written (a copy moves
   * twice its size through device memory): {@code repetitions} copies after one unmeasured copy.
   */
  static double deviceToDevice(CudaDevice device, long bytes, int repetitions) {
    long a = device.allocate(bytes);
    long b = 0;
    try {
      b = device.allocate(bytes);
      long from = a;
      long to = b;
      Driver.copyOnDevice(to, from, bytes, device.stream);
      return timed(device, 2L * repetitions * bytes, () -> {
        for (int i = 0; i < repetitions; i++) {
          Driver.copyOnDevice(to, from, bytes, device.stream);
        }
      });
    } finally {
      Driver.synchronize(device.stream);
      device.release(a, bytes);
      if (b != 0) {
        device.release(b, bytes);
      }
    }
  }

  /** GB/s of {@code bytes} moved by the work {@code queue} puts on the device's stream. */
  private static double timed(CudaDevice device, long bytes, Runnable queue) {
    MemorySegment start = Driver.createEvent();
    MemorySegment end = Driver.createEvent();
    try {
      Driver.record(start, device.stream);
      queue.run();
      Driver.record(end, device.stream);
      float ms = Driver.elapsedMillis(start, end);
      return bytes / (ms * 1e6);
    } finally {
      Driver.destroyEvent(start);
      Driver.destroyEvent(end);
    }
  }
}
