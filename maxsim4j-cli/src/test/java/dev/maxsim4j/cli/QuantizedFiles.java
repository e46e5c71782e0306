package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.io.NdArray;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;

/** Random quantized tokens and scales as the files hold them, and a float64 MaxSim on their values. */
final class QuantizedFiles {
  private QuantizedFiles() {}

  static NdArray.ElementType elementType(DType dtype) {
    return TokenType.elementType(dtype);
  }

  /** Stored bytes of {@code tokens} tokens of dimension {@code d}: any int8, any fp8 but NaN, any bits. */
  static byte[] codes(SplittableRandom rnd, DType dtype, long tokens, int d) {
    byte[] b = new byte[Math.toIntExact(tokens * dtype.bytesPerToken(d))];
    for (int i = 0; i < b.length; i++) {
      byte v = (byte) rnd.nextInt(256);
      while (dtype == DType.FLOAT8_E4M3 && (v & 0x7f) == 0x7f) {
        v = (byte) rnd.nextInt(256);
      }
      b[i] = v;
    }
    return b;
  }

  /** Scales of every sign and size, zero included. */
  static float[] scales(SplittableRandom rnd, int n) {
    float[] s = new float[n];
    for (int i = 0; i < n; i++) {
      s[i] = switch (rnd.nextInt(8)) {
        case 0 -> 0f;
        case 1 -> (float) -rnd.nextDouble(0.01, 1);
        default -> (float) rnd.nextDouble(1e-3, 0.5);
      };
    }
    return s;
  }

  static float[] gaussians(SplittableRandom rnd, int n) {
    float[] a = new float[n];
    for (int i = 0; i < n; i++) {
      a[i] = (float) rnd.nextGaussian();
    }
    return a;
  }

  static NdArray bytes(String name, NdArray.ElementType type, long[] shape, byte[] data) {
    return NdArray.ofSegment(name, type, shape, MemorySegment.ofArray(data));
  }

  static NdArray floats(String name, long[] shape, float[] data) {
    return NdArray.ofFloats(name, shape, data);
  }

  /** MaxSim of every query row with every document row in float64 on the values the batches hold. */
  static double[][] reference(TokenBatch q, TokenBatch d) {
    double[][] s = new double[q.size()][d.size()];
    for (int i = 0; i < q.size(); i++) {
      for (int j = 0; j < d.size(); j++) {
        s[i][j] = reference(q, i, d, j);
      }
    }
    return s;
  }

  /** One pair; a document without valid tokens scores -1e9, as the library's contract says. */
  static double reference(TokenBatch q, int i, TokenBatch d, int j) {
    if (d.validTokens(j) == 0) {
      return -1e9;
    }
    double sum = 0;
    for (int a = 0; a < q.length(i); a++) {
      if (!q.isValid(i, a)) {
        continue;
      }
      double best = Double.NEGATIVE_INFINITY;
      for (int b = 0; b < d.length(j); b++) {
        if (!d.isValid(j, b)) {
          continue;
        }
        double dot = 0;
        for (int k = 0; k < q.dim(); k++) {
          dot += (double) q.get(i, a, k) * d.get(j, b, k);
        }
        best = Math.max(best, dot);
      }
      sum += best;
    }
    return sum;
  }

  /** Scores within fp32 accuracy of the reference: relative 1e-5 of the magnitudes summed. */
  static void assertClose(double expected, float got, TokenBatch q, int i, TokenBatch d, int j, String what) {
    double magnitude = 0;
    for (int a = 0; a < q.length(i); a++) {
      double best = 0;
      for (int b = 0; b < d.length(j); b++) {
        double m = 0;
        for (int k = 0; k < q.dim(); k++) {
          m += Math.abs((double) q.get(i, a, k) * d.get(j, b, k));
        }
        best = Math.max(best, m);
      }
      magnitude += best;
    }
    assertEquals(expected, got, 1e-5 * magnitude + 1e-6 * Math.abs(expected) + 1e-30, what);
  }
}
