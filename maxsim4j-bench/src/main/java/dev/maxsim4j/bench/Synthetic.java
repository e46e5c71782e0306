package dev.maxsim4j.bench;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import java.util.SplittableRandom;
import java.util.stream.IntStream;

/** Synthetic L2-normalised token embeddings for the benchmarks. */
public final class Synthetic {
  private Synthetic() {}

  /** A padded batch {@code [n, l, d]} of random unit vectors in {@code dtype}. */
  public static TokenBatch unitBatch(SplittableRandom rnd, DType dtype, int n, int l, int d) {
    return store(dtype, unitValues(rnd, n, l, d), n, l, d);
  }

  /** The values of {@link #unitBatch}'s batch, {@code [n, l, d]} row-major fp32, from the same random stream. */
  public static float[] unitValues(SplittableRandom rnd, int n, int l, int d) {
    int tokens = Math.multiplyExact(n, l);
    float[] v = new float[Math.multiplyExact(tokens, d)];
    for (int t = 0; t < tokens; t++) {
      unitVector(rnd, v, t * d, d);
    }
    return v;
  }

  private static void unitVector(SplittableRandom rnd, float[] v, int off, int d) {
    double sq = 0;
    for (int k = 0; k < d; k++) {
      double x = rnd.nextGaussian();
      v[off + k] = (float) x;
      sq += x * x;
    }
    normalize(v, off, d, sq);
  }

  private static void normalize(float[] v, int off, int d, double sq) {
    float inv = (float) (1 / Math.sqrt(Math.max(sq, 1e-30)));
    for (int k = 0; k < d; k++) {
      v[off + k] *= inv;
    }
  }

  /**
   * {@code tokens} unit vectors of {@code dim}, fast enough for GPU-sized corpora (10^9 values): uniform
   * entries, normalised, generated in parallel chunks with their own seeds (the same values on any pool).
   */
  public static float[] fastUnitValues(long seed, int tokens, int dim) {
    float[] v = new float[Math.multiplyExact(tokens, dim)];
    int chunk = 4096;
    IntStream.range(0, (tokens + chunk - 1) / chunk).parallel().forEach(c -> {
      SplittableRandom rnd = new SplittableRandom(seed * 1_000_003L + c);
      for (int t = c * chunk; t < Math.min(tokens, (c + 1) * chunk); t++) {
        double sq = 0;
        for (int k = 0; k < dim; k++) {
          float x = (float) (rnd.nextDouble() * 2 - 1);
          v[t * dim + k] = x;
          sq += x * x;
        }
        normalize(v, t * dim, dim, sq);
      }
    });
    return v;
  }

  /** fp32 values rounded to a half type, in parallel. */
  public static short[] narrow(DType dtype, float[] v) {
    short[] s = new short[v.length];
    IntStream.range(0, v.length).parallel().forEach(i -> s[i] = dtype.narrow(v[i]));
    return s;
  }

  public static TokenBatch store(DType dtype, float[] v, int n, int l, int d) {
    return dtype == DType.FLOAT32
        ? TokenBatch.ofFloats(v, n, l, d)
        : TokenBatch.ofHalfs(dtype, narrow(dtype, v), n, l, d);
  }

}
