package dev.maxsim4j.bench.retrieval;

import dev.maxsim4j.DType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

/**
 * A deterministic synthetic corpus with the structure of text embeddings: unit token vectors scattered around
 * {@link #CENTRES} random cluster centres (a document draws its tokens from {@link #TOPICS} of them), and per
 * query a known document whose tokens, perturbed, it is made of. Document {@code i} depends only on the seed
 * and {@code i}, so a smaller corpus is a prefix of a larger one.
 */
final class ClusteredCorpus {
  static final int CENTRES = 1024;
  static final int TOPICS = 4;
  /** Spread of a document token around its centre, and of a query token around its document token. */
  static final double TOKEN_NOISE = 0.7;
  static final double QUERY_NOISE = 0.7;
  final int dim;
  final int docTokens;
  final int queryTokens;
  private final long seed;
  private final float[][] centres;

  ClusteredCorpus(long seed, int dim, int docTokens, int queryTokens) {
    if (dim < 1 || docTokens < 1 || queryTokens < 1) {
      throw new IllegalArgumentException("dim, docTokens, queryTokens = " + dim + ", " + docTokens + ", "
          + queryTokens + "; expected all >= 1");
    }
    this.seed = seed;
    this.dim = dim;
    this.docTokens = docTokens;
    this.queryTokens = queryTokens;
    SplittableRandom rnd = new SplittableRandom(seed);
    centres = new float[CENTRES][];
    for (int c = 0; c < CENTRES; c++) {
      centres[c] = unit(gaussian(rnd, dim, 1));
    }
  }

  /** Documents {@code 0..n-1} as packed fp32 rows of {@link #docTokens} tokens in {@code arena}. */
  Encoded documents(int n, Arena arena) {
    MemorySegment data = arena.allocate((long) n * docTokens * dim * 4, 64);
    int[] offsets = new int[n + 1];
    for (int i = 0; i < n; i++) {
      offsets[i + 1] = offsets[i] + docTokens;
      float[][] doc = document(i);
      long at = (long) offsets[i] * dim;
      for (float[] t : doc) {
        MemorySegment.copy(t, 0, data, ValueLayout.JAVA_FLOAT_UNALIGNED, at * 4, dim);
        at += dim;
      }
    }
    return new Encoded(data, offsets, dim, DType.FLOAT32);
  }

  /** Document {@code i}'s tokens {@code [docTokens][dim]}, unit length. */
  float[][] document(int i) {
    SplittableRandom rnd = new SplittableRandom(seed ^ (0x9E3779B97F4A7C15L * (i + 1L)));
    int[] topics = new int[TOPICS];
    for (int t = 0; t < TOPICS; t++) {
      topics[t] = rnd.nextInt(CENTRES);
    }
    float[][] tokens = new float[docTokens][];
    for (int t = 0; t < docTokens; t++) {
      float[] centre = centres[topics[rnd.nextInt(TOPICS)]];
      float[] noise = gaussian(rnd, dim, TOKEN_NOISE / Math.sqrt(dim));
      for (int k = 0; k < dim; k++) {
        noise[k] += centre[k];
      }
      tokens[t] = unit(noise);
    }
    return tokens;
  }

  /** Query {@code j} for document {@code target}: {@link #queryTokens} of its tokens, perturbed. */
  float[][] query(int j, int target) {
    float[][] doc = document(target);
    SplittableRandom rnd = new SplittableRandom(~seed ^ (0xC2B2AE3D27D4EB4FL * (j + 1L)));
    float[][] tokens = new float[queryTokens][];
    for (int t = 0; t < queryTokens; t++) {
      float[] noise = gaussian(rnd, dim, QUERY_NOISE / Math.sqrt(dim));
      float[] base = doc[rnd.nextInt(docTokens)];
      for (int k = 0; k < dim; k++) {
        noise[k] += base[k];
      }
      tokens[t] = unit(noise);
    }
    return tokens;
  }

  private static float[] gaussian(SplittableRandom rnd, int dim, double sigma) {
    float[] v = new float[dim];
    for (int k = 0; k < dim; k++) {
      v[k] = (float) (rnd.nextGaussian() * sigma);
    }
    return v;
  }

  private static float[] unit(float[] v) {
    double norm = 0;
    for (float x : v) {
      norm += (double) x * x;
    }
    float scale = (float) (1 / Math.sqrt(Math.max(norm, Double.MIN_NORMAL)));
    for (int k = 0; k < v.length; k++) {
      v[k] *= scale;
    }
    return v;
  }
}
