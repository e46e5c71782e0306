package dev.maxsim4j.internal.cuda;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;

import dev.maxsim4j.internal.cuda.plan.GpuCapabilities;
import dev.maxsim4j.internal.cuda.plan.KernelModule;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/** The projection layer on the GPU (maxsim_linear.cu): {@code Y = X W} and {@code dW = X^T dY}. Used under the lock. */
final class DeviceLinear {
  private static final int LINEAR_TILE = 16;
  /**
   * Output rows one launch covers: a 16-row tile per grid row, of at most {@link GpuCapabilities#MAX_GRID_Y} grid
   * rows.
   */
  static final int MAX_ROWS_PER_LAUNCH = GpuCapabilities.MAX_GRID_Y * LINEAR_TILE;

  private final CudaDevice device;
  private final Launcher launcher;

  DeviceLinear(CudaDevice device, Launcher launcher) {
    this.device = device;
    this.launcher = launcher;
  }

  /** {@code Y = X W}: {@code x} rows x in, {@code w} in x out; at least one result. */
  float[] project(float[] x, int rows, int in, float[] w, int out) {
    return linear("maxsim_linear_forward", x, w, out, (long) rows * out,
        (a, b, y) -> forwardLaunches(a, b, y, rows, in, out).stream().map(f -> new Launch(f, f.rows())).toList());
  }

  /**
   * The launches of {@code Y = X W} at device addresses {@code x}, {@code w}, {@code y}: one per
   * {@link #MAX_ROWS_PER_LAUNCH} rows of X and Y, each over its own rows.
   */
  static List<KernelArgs.LinearForward> forwardLaunches(long x, long w, long y, int rows, int in, int out) {
    List<KernelArgs.LinearForward> launches = new ArrayList<>();
    for (int r0 = 0; r0 < rows; r0 += Math.min(MAX_ROWS_PER_LAUNCH, rows - r0)) {
      launches.add(new KernelArgs.LinearForward(x + 4L * r0 * in, w, y + 4L * r0 * out,
          Math.min(MAX_ROWS_PER_LAUNCH, rows - r0), in, out));
    }
    return launches;
  }

  /** {@code dW = X^T dY}: {@code x} rows x in, {@code dy} rows x out; at least one result. */
  float[] weightGradient(float[] x, int rows, int in, float[] dy, int out) {
    if (in > MAX_ROWS_PER_LAUNCH) { // dW's rows are X's columns: one launch covers them all, or none can
      throw new IllegalArgumentException("projectionGradient's in = " + in + "; the GPU backend's kernel takes at most "
          + MAX_ROWS_PER_LAUNCH);
    }
    return linear("maxsim_linear_weight_gradient", x, dy, out, (long) in * out,
        (a, dYs, dW) -> List.of(new Launch(new KernelArgs.LinearWeightGradient(a, dYs, dW, rows, in, out), in)));
  }

  /** One launch: its arguments and the rows of the output it covers (the grid's height in 16-row tiles). */
  private record Launch(KernelArgs args, int outputRows) {}

  /** A call's launches from the device addresses of its two operands and its output. */
  private interface Operands {
    List<Launch> of(long a, long b, long out);
  }

  /**
   * A call of maxsim_linear.cu: both operands up through one pinned buffer, the output poisoned, then
   * computed by launches over grids of 16 x 16 tiles ({@code columns} x their rows of the output) and copied back.
   */
  private float[] linear(String kernel, float[] a, float[] b, int columns, long results, Operands operands) {
    long aBytes = DeviceTokens.align(Math.max(4, 4L * a.length));
    long bBytes = DeviceTokens.align(Math.max(4, 4L * b.length));
    long outBytes = 4L * results;
    MemorySegment pinned = device.pinned(aBytes + bBytes + outBytes);
    MemorySegment.copy(a, 0, pinned, JAVA_FLOAT, 0, a.length);
    MemorySegment.copy(b, 0, pinned, JAVA_FLOAT, aBytes, b.length);
    long deviceA = device.scratch(ScratchSlot.LINEAR_A, aBytes);
    long deviceB = device.scratch(ScratchSlot.LINEAR_B, bBytes);
    long deviceOut = device.scratch(ScratchSlot.LINEAR_OUT, outBytes);
    Driver.copyToDevice(deviceA, pinned, aBytes, device.stream);
    Driver.copyToDevice(deviceB, pinned.asSlice(aBytes), bBytes, device.stream);
    Driver.fill32(deviceOut, CudaBackend.POISON_SCORE, results, device.stream);
    for (Launch launch : operands.of(deviceA, deviceB, deviceOut)) {
      launcher.launch(new KernelLaunch(KernelModule.LINEAR, kernel, (columns + LINEAR_TILE - 1) / LINEAR_TILE,
          (launch.outputRows() + LINEAR_TILE - 1) / LINEAR_TILE, LINEAR_TILE * LINEAR_TILE, launch.args()),
          device.stream);
    }
    MemorySegment download = pinned.asSlice(aBytes + bBytes, outBytes);
    Driver.copyToHost(download, deviceOut, outBytes, device.stream);
    Driver.synchronize(device.stream);
    float[] result = new float[Math.toIntExact(results)];
    MemorySegment.copy(download, JAVA_FLOAT, 0, result, 0, result.length);
    return result;
  }
}
