package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class HostileLossExtremesTest {
  @Test
  void klAndContrastiveAtExtremeTemperaturesMatchFloat64() {
    float tiny = Math.nextUp(1 / Float.MAX_VALUE);
    for (float temp : new float[] {tiny, 1e-30f, 1e-3f, 1f, 1e30f, Float.MAX_VALUE}) {
      for (long seed = 0; seed < 20; seed++) {
        SplittableRandom r = new SplittableRandom(seed);
        int rows = 1 + r.nextInt(3);
        int cols = 1 + r.nextInt(5);
        float[][] s = new float[rows][cols];
        float[][] t = new float[rows][cols];
        for (int i = 0; i < rows; i++) {
          for (int j = 0; j < cols; j++) {
            s[i][j] = (float) (r.nextGaussian() * new double[] {1e-30, 1, 1e30, 1e38}[r.nextInt(4)]);
            t[i][j] = r.nextInt(6) == 0 && j > 0 ? Float.NEGATIVE_INFINITY : (float) r.nextGaussian();
          }
          if (r.nextInt(3) == 0) {
            s[i][cols - 1] = -1e9f;
          }
        }
        Loss.Value kl = Loss.klDistillation(t, temp).evaluate(s);
        double total = 0;
        for (int i = 0; i < rows; i++) {
          double[] ls = logSoftmax(s[i], temp);
          double[] lt = logSoftmax(t[i], temp);
          for (int j = 0; j < cols; j++) {
            double pt = Math.exp(lt[j]);
            if (pt > 0) {
              total += pt * (lt[j] - ls[j]);
            }
            double g = (Math.exp(ls[j]) - pt) / temp / rows;
            assertEquals(g, kl.dScores()[i * cols + j], 1e-6 * Math.max(1, Math.abs(g)),
                "T=" + temp + " seed " + seed + " kl grad " + i + "," + j);
          }
        }
        assertEquals(total / rows, kl.loss(), 1e-9 * Math.max(1, Math.abs(total)), "T=" + temp + " kl loss");
        int[] pos = new int[rows];
        for (int i = 0; i < rows; i++) {
          pos[i] = r.nextInt(cols);
        }
        Loss.Value ce = Loss.contrastive(pos, temp).evaluate(s);
        double ctotal = 0;
        for (int i = 0; i < rows; i++) {
          double[] ls = logSoftmax(s[i], temp);
          ctotal -= ls[pos[i]];
          for (int j = 0; j < cols; j++) {
            double g = (Math.exp(ls[j]) - (j == pos[i] ? 1 : 0)) / temp / rows;
            assertEquals(g, ce.dScores()[i * cols + j], 1e-6 * Math.max(1, Math.abs(g)),
                "T=" + temp + " seed " + seed + " ce grad");
          }
        }
        assertEquals(ctotal / rows, ce.loss(), 1e-9 * Math.max(1, Math.abs(ctotal)), "T=" + temp + " ce loss");
      }
    }
  }

  /** With BigDecimal-free float64: z = x / T may overflow to infinity for T tiny; use x * (1 / T) like the library. */
  static double[] logSoftmax(float[] x, float temp) {
    double scale = 1.0 / temp;
    double m = Double.NEGATIVE_INFINITY;
    for (float v : x) {
      m = Math.max(m, v * scale);
    }
    double sum = 0;
    for (float v : x) {
      sum += Math.exp(v * scale - m);
    }
    double[] out = new double[x.length];
    for (int j = 0; j < x.length; j++) {
      out[j] = x[j] * scale - m - Math.log(sum);
    }
    return out;
  }
}
