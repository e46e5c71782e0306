package dev.maxsim4j.bench;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import java.util.SplittableRandom;

/**
 * Benchmark inputs: L2-normalised random tokens, one shape string {@code NqxNdxLqxLdxd} (JMH splits command-line
 * values on commas).
 */
final class BenchData {
  final int nq;
  final int nd;
  final int lq;
  final int ld;
  final int dim;
  final float[] queries;
  final float[] documents;

  BenchData(String shape, long seed) {
    String[] p = shape.split("[,x]");
    nq = Integer.parseInt(p[0].trim());
    nd = Integer.parseInt(p[1].trim());
    lq = Integer.parseInt(p[2].trim());
    ld = Integer.parseInt(p[3].trim());
    dim = Integer.parseInt(p[4].trim());
    SplittableRandom rnd = new SplittableRandom(seed);
    queries = unit(rnd, nq * lq, dim);
    documents = unit(rnd, nd * ld, dim);
  }

  double flops() {
    return 2.0 * nq * nd * lq * ld * dim;
  }

  TokenBatch queryBatch() {
    return TokenBatch.ofFloats(queries, nq, lq, dim);
  }

  TokenBatch documentBatch(DType type) {
    if (type == DType.FLOAT32) {
      return TokenBatch.ofFloats(documents, nd, ld, dim);
    }
    short[] bits = new short[documents.length];
    for (int i = 0; i < bits.length; i++) {
      bits[i] = type.narrow(documents[i]);
    }
    return TokenBatch.ofHalfs(type, bits, nd, ld, dim);
  }

  /** Nested arrays as Lucene's multi-vector API takes them: [row][token][dim]. */
  static float[][][] nested(float[] flat, int rows, int tokens, int dim) {
    float[][][] out = new float[rows][tokens][dim];
    for (int r = 0; r < rows; r++) {
      for (int t = 0; t < tokens; t++) {
        System.arraycopy(flat, (r * tokens + t) * dim, out[r][t], 0, dim);
      }
    }
    return out;
  }

  private static float[] unit(SplittableRandom rnd, int tokens, int dim) {
    float[] v = new float[tokens * dim];
    for (int t = 0; t < tokens; t++) {
      double sq = 0;
      for (int k = 0; k < dim; k++) {
        double x = rnd.nextGaussian();
        v[t * dim + k] = (float) x;
        sq += x * x;
      }
      float inv = (float) (1 / Math.sqrt(sq));
      for (int k = 0; k < dim; k++) {
        v[t * dim + k] *= inv;
      }
    }
    return v;
  }
}
