package dev.maxsim4j.internal;

/**
 * The projection layer on the CPU: {@code Y = X W} and {@code dW = X^T dY}, row-major fp32, every output summed
 * in ascending order of its reduction index. The backends' default; the CUDA backend runs
 * maxsim_linear.cu instead.
 */
public final class Projection {
  private Projection() {}

  /** {@code X [rows, in]} times {@code W [in, out]}. */
  public static float[] forward(float[] x, int rows, int in, float[] w, int out) {
    float[] y = new float[Math.multiplyExact(rows, out)];
    for (int r = 0; r < rows; r++) {
      for (int f = 0; f < in; f++) {
        float xv = x[r * in + f];
        for (int c = 0; c < out; c++) {
          y[r * out + c] = Math.fma(xv, w[f * out + c], y[r * out + c]);
        }
      }
    }
    return y;
  }

  /** {@code X^T [in, rows]} times {@code dY [rows, out]}: the gradient of {@code W}. */
  public static float[] weightGradient(float[] x, int rows, int in, float[] dy, int out) {
    float[] dw = new float[Math.multiplyExact(in, out)];
    for (int r = 0; r < rows; r++) {
      for (int f = 0; f < in; f++) {
        float xv = x[r * in + f];
        for (int c = 0; c < out; c++) {
          dw[f * out + c] = Math.fma(xv, dy[r * out + c], dw[f * out + c]);
        }
      }
    }
    return dw;
  }
}
