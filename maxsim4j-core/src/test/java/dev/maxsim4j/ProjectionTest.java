package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The projection layer ({@link MaxSim#project}, {@link MaxSim#projectionGradient}) against float64 on fresh
 * random inputs over awkward shapes; on the GPU (tag gpu) the device kernels against the same reference.
 * Tolerance: fp32 accumulation of {@code n} products, {@code 1e-6 * n} of the sum of the products' magnitudes.
 */
class ProjectionTest {
  private static final int[][] SHAPES = {{0, 3, 5}, {1, 1, 1}, {5, 3, 17}, {33, 127, 128}, {40, 384, 128},
      {17, 513, 3}};

  @Test
  void cpuMatchesTheDefinition() {
    try (MaxSim cpu = MaxSim.builder().backend("cpu").threads(2).build()) {
      check(cpu, "cpu");
    }
  }

  @Test
  @GpuTest
  void gpuMatchesTheDefinitionAndIsDeterministic() {
    try (MaxSim cuda = MaxSim.builder().backend("cuda").build()) {
      check(cuda, "cuda");
      Random rnd = new Random();
      float[] x = random(rnd, 70 * 384);
      float[] w = random(rnd, 384 * 128);
      assertArrayEquals(cuda.project(x, 70, 384, w, 128), cuda.project(x, 70, 384, w, 128), "the same bits");
    }
  }

  /** More rows than one grid of 65,535 x 16-row blocks takes: launched in groups, every row projected. */
  @Test
  @GpuTest
  void gpuProjectsMoreRowsThanOneGridHolds() {
    int rows = 65_535 * 16 + 1_000;
    int in = 3;
    int out = 5;
    Random rnd = new Random(7);
    float[] x = random(rnd, rows * in);
    float[] w = random(rnd, in * out);
    try (MaxSim cuda = MaxSim.builder().backend("cuda").build()) {
      float[] y = cuda.project(x, rows, in, w, out);
      for (int r : new int[] {0, 65_535 * 16 - 1, 65_535 * 16, rows - 1}) {
        assertRow(x, w, y, r, in, out, "cuda");
      }
    }
  }

  /** Row {@code r} of {@code y = x w} against float64, to fp32 accumulation of {@code in} products. */
  private static void assertRow(float[] x, float[] w, float[] y, int r, int in, int out, String at) {
    for (int c = 0; c < out; c++) {
      double sum = 0;
      double magnitude = 0;
      for (int f = 0; f < in; f++) {
        sum += (double) x[r * in + f] * w[f * out + c];
        magnitude += Math.abs((double) x[r * in + f] * w[f * out + c]);
      }
      assertEquals(sum, y[r * out + c], 1e-6 * in * magnitude + 1e-30, at + " y[" + r + ", " + c + "]");
    }
  }

  private static void check(MaxSim m, String where) {
    long seed = new Random().nextLong();
    Random rnd = new Random(seed);
    for (int[] s : SHAPES) {
      int rows = s[0];
      int in = s[1];
      int out = s[2];
      String at = where + " [" + rows + ", " + in + "] x [" + in + ", " + out + "] (seed " + seed + "L)";
      float[] x = random(rnd, rows * in);
      float[] w = random(rnd, in * out);
      float[] dy = random(rnd, rows * out);
      float[] y = m.project(x, rows, in, w, out);
      assertEquals(rows * out, y.length, at);
      for (int r = 0; r < rows; r++) {
        assertRow(x, w, y, r, in, out, at);
      }
      float[] dw = m.projectionGradient(x, rows, in, dy, out);
      assertEquals(in * out, dw.length, at);
      for (int f = 0; f < in; f++) {
        for (int c = 0; c < out; c++) {
          double sum = 0;
          double magnitude = 0;
          for (int r = 0; r < rows; r++) {
            sum += (double) x[r * in + f] * dy[r * out + c];
            magnitude += Math.abs((double) x[r * in + f] * dy[r * out + c]);
          }
          assertEquals(sum, dw[f * out + c], 1e-6 * Math.max(rows, 1) * magnitude + 1e-30,
              at + " dW[" + f + ", " + c + "]");
        }
      }
    }
  }

  @Test
  void badShapesNameTheArgument() {
    try (MaxSim cpu = MaxSim.builder().backend("cpu").threads(1).build()) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> cpu.project(new float[6], 2, 3, new float[5], 2));
      assertTrue(e.getMessage().startsWith("w has 5 elements for shape [3, 2]"), e.getMessage());
      e = assertThrows(IllegalArgumentException.class, () -> cpu.project(null, 2, 3, new float[6], 2));
      assertTrue(e.getMessage().startsWith("x is null"), e.getMessage());
      e = assertThrows(IllegalArgumentException.class, () -> cpu.projectionGradient(new float[6], 2, 3, new float[3], 2));
      assertTrue(e.getMessage().startsWith("dy has 3 elements for shape [2, 2]"), e.getMessage());
      e = assertThrows(IllegalArgumentException.class, () -> cpu.project(new float[0], 0, 0, new float[0], 2));
      assertTrue(e.getMessage().contains("columns >= 1"), e.getMessage());
    }
  }

  private static float[] random(Random rnd, int n) {
    float[] a = new float[n];
    for (int i = 0; i < n; i++) {
      a[i] = (float) rnd.nextGaussian();
    }
    return a;
  }
}
