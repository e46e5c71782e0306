package dev.maxsim4j.internal.cuda;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;

import java.lang.foreign.MemorySegment;

/** The projection layer on the GPU (maxsim_linear.cu): {@code Y = X W} and {@code dW = X^T dY}. Used under the lock. */
final class DeviceLinear {
  private static final String LINEAR = "maxsim_linear";
  private static final int LINEAR_TILE = 16;

  private final CudaDevice device;
  private final KernelParams params;

  DeviceLinear(CudaDevice device, KernelParams params) {
    this.device = device;
    this.params = params;
  }

  /** {@code Y = X W}: {@code x} rows x in, {@code w} in x out; at least one result. */
  float[] project(float[] x, int rows, int in, float[] w, int out) {
    return linear("maxsim_linear_forward", x, w, out, rows, (long) rows * out,
        (a, b, y) -> new KernelArgs.LinearForward(a, b, y, rows, in, out));
  }

  /** {@code dW = X^T dY}: {@code x} rows x in, {@code dy} rows x out; at least one result. */
  float[] weightGradient(float[] x, int rows, int in, float[] dy, int out) {
    return linear("maxsim_linear_weight_gradient", x, dy, out, in, (long) in * out,
        (a, dYs, dW) -> new KernelArgs.LinearWeightGradient(a, dYs, dW, rows, in, out));
  }

  /** A launch's arguments from the device addresses of its two operands and its output. */
  private interface Operands {
    KernelArgs of(long a, long b, long out);
  }

  /**
   * One launch of maxsim_linear.cu: both operands up through one pinned buffer, the output poisoned, then
   * computed over a grid of 16 x 16 tiles ({@code columns} x {@code rows} of the output) and copied back.
   */
  private float[] linear(String kernel, float[] a, float[] b, int columns, int outputRows, long results,
      Operands operands) {
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
    params.set(operands.of(deviceA, deviceB, deviceOut));
    Driver.launch(device.function(LINEAR, kernel), kernel, (columns + LINEAR_TILE - 1) / LINEAR_TILE,
        (outputRows + LINEAR_TILE - 1) / LINEAR_TILE, LINEAR_TILE * LINEAR_TILE, 0, device.stream, params.pointers());
    MemorySegment download = pinned.asSlice(aBytes + bBytes, outBytes);
    Driver.copyToHost(download, deviceOut, outBytes, device.stream);
    Driver.synchronize(device.stream);
    float[] result = new float[Math.toIntExact(results)];
    MemorySegment.copy(download, JAVA_FLOAT, 0, result, 0, result.length);
    return result;
  }
}
