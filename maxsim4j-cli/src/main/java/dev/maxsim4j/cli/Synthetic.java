package dev.maxsim4j.cli;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import java.util.SplittableRandom;

/** Synthetic L2-normalised token embeddings for benchmarks and the demo. */
final class Synthetic {
  private Synthetic() {}

  /** A padded batch {@code [n, l, d]} of random unit vectors in {@code dtype}. */
  static TokenBatch unitBatch(SplittableRandom rnd, DType dtype, int n, int l, int d) {
    int tokens = Math.multiplyExact(n, l);
    float[] v = new float[Math.multiplyExact(tokens, d)];
    for (int t = 0; t < tokens; t++) {
      unitVector(rnd, v, t * d, d);
    }
    return store(dtype, v, n, l, d);
  }

  static void unitVector(SplittableRandom rnd, float[] v, int off, int d) {
    double sq = 0;
    for (int k = 0; k < d; k++) {
      double x = rnd.nextGaussian();
      v[off + k] = (float) x;
      sq += x * x;
    }
    normalize(v, off, d, sq);
  }

  static void normalize(float[] v, int off, int d, double sq) {
    float inv = (float) (1 / Math.sqrt(Math.max(sq, 1e-30)));
    for (int k = 0; k < d; k++) {
      v[off + k] *= inv;
    }
  }

  static TokenBatch store(DType dtype, float[] v, int n, int l, int d) {
    if (dtype == DType.FLOAT32) {
      return TokenBatch.ofFloats(v, n, l, d);
    }
    short[] s = new short[v.length];
    for (int i = 0; i < v.length; i++) {
      s[i] = dtype.narrow(v[i]);
    }
    return TokenBatch.ofHalfs(dtype, s, n, l, d);
  }

  static DType parseDType(String s) {
    return switch (s.toLowerCase(java.util.Locale.ROOT)) {
      case "fp32", "float32", "f32" -> DType.FLOAT32;
      case "fp16", "float16", "f16", "half" -> DType.FLOAT16;
      case "bf16", "bfloat16" -> DType.BFLOAT16;
      default -> throw new UsageException("dtype '" + s + "' is unknown; expected fp32, fp16 or bf16");
    };
  }
}
