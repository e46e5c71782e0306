package dev.maxsim4j.internal.cuda;

import java.lang.foreign.MemorySegment;
import java.util.function.Consumer;

/**
 * Queues kernels on a device's streams: writes a launch's arguments into the one parameter block, finds its entry
 * point (loading the module on first use), allows the dynamic shared memory it opts into, and launches. Every
 * kernel maxsim4j runs goes through here. Used under the backend's lock; owns the parameter block.
 */
final class Launcher implements AutoCloseable {
  private final CudaDevice device;
  private final KernelParams params = new KernelParams();

  Launcher(CudaDevice device) {
    this.device = device;
  }

  /** Queues {@code l}, which takes no scratch placeholders or tensor maps, on {@code stream}. */
  void launch(KernelLaunch l, Driver.Stream stream) {
    if (l.wholeDevice()) {
      throw new IllegalStateException(l.entry() + " holds the whole device: it is ordered on a lane, not a stream");
    }
    if (!hasBlocks(l.gridX(), l.gridY())) {
      return;
    }
    MemorySegment arguments = params.set(l.args(), KernelParams.PLAIN);
    Driver.launch(entry(l), l.entry(), l.gridX(), l.gridY(), l.threads(), l.sharedBytes(), stream, arguments);
  }

  /** Queues {@code l} on {@code lane}, its scratch buffers and tensor map from {@code resolver}. */
  void launch(KernelLaunch l, CudaDevice.Lane lane, KernelParams.Resolver resolver) {
    if (!hasBlocks(l.gridX(), l.gridY())) {
      return;
    }
    MemorySegment arguments = params.set(l.args(), resolver);
    Driver.Entry function = entry(l);
    // a grid on every SM that reads each document once per pass runs after the last such grid on another lane, not
    // interleaved with it: its passes share the document through L2 only while they run together
    if (l.wholeDevice()) {
      device.orderWholeDeviceLaunch(lane);
    }
    Driver.launch(function, l.entry(), l.gridX(), l.gridY(), l.threads(), l.sharedBytes(), lane.stream, arguments);
    if (l.wholeDevice()) {
      device.markWholeDeviceLaunch(lane);
    }
  }

  /**
   * Whether a grid has work: one of no blocks (a batch without documents, say) does nothing, which the driver does
   * not take as a launch (it fails with CUDA_ERROR_INVALID_VALUE), so it is not queued.
   */
  private static boolean hasBlocks(int gridX, int gridY) {
    return gridX != 0 && gridY != 0; // a negative size is a bug the driver names
  }

  /** {@code l}'s entry point, allowed the dynamic shared memory it opts into. */
  private Driver.Entry entry(KernelLaunch l) {
    Driver.Entry function = device.function(l.module(), l.entry());
    if (l.optIn()) {
      device.allowDynamicSharedMemory(function, l.sharedBytes());
    }
    return function;
  }

  /**
   * Queues {@code function} (a kernel of another jar's module, named {@code name}) on {@code stream}: {@code blocks}
   * blocks of {@code threads}, its arguments as {@code arguments} writes them.
   */
  void launch(Driver.Entry function, String name, int blocks, int threads, Driver.Stream stream,
      Consumer<LaunchArguments> arguments) {
    if (!hasBlocks(blocks, 1)) {
      return;
    }
    Driver.launch(function, name, blocks, 1, threads, 0, stream, params.set(arguments));
  }

  /** Frees the parameter block: host memory the driver copies at each launch, which no kernel reads. */
  @Override
  public void close() {
    params.close();
  }
}
