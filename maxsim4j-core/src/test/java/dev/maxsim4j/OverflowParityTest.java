package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Values near 1e19, whose dot products pass fp32's range part way through a sum: every CPU kernel gives the
 * float64 reference's score and argmax where fp32 ended at an infinity or NaN (an overflowed partial sum stuck at
 * an infinity, or summed to NaN against one of the other sign) and the exact score is finite.
 */
class OverflowParityTest {
  private static final String[] FAST = {"scalar", "vector"};
  private static final DType[] TYPES = {DType.FLOAT32, DType.BFLOAT16, DType.INT8, DType.FLOAT8_E4M3, DType.BINARY};

  private static float[][] scores(String backend, TokenBatch q, TokenBatch d) {
    try (MaxSim m = MaxSim.builder().backend(backend).threads(2).build()) {
      return m.scores(q, d);
    }
  }

  @Test
  void partialSumsPastFp32GiveTheReferenceScore() {
    float b = 1e19f;
    // six products of 1e38: four positive, then two negative; fp32 stops at infinity, the exact sum is 2e38
    TokenBatch q1 = TokenBatch.ofFloats(new float[] {b, b, b, b, b, b}, 1, 1, 6);
    TokenBatch d1 = TokenBatch.ofFloats(new float[] {b, b, b, b, -b, -b}, 1, 1, 6);
    // query tokens of both signs against one token of 4e38: the exact sum is 0, fp32 maxima +-inf sum to NaN
    TokenBatch q2 = TokenBatch.ofFloats(new float[] {b, b, b, b, -b, -b, -b, -b}, 1, 2, 4);
    TokenBatch d2 = TokenBatch.ofFloats(new float[] {b, b, b, b}, 1, 1, 4);
    // token 0's exact dot product is 2e38 but its fp32 sum sticks at +inf; token 1's is 1e19
    TokenBatch q3 = q1;
    TokenBatch d3 = TokenBatch.ofFloats(new float[] {b, b, b, b, -b, -b, 1, 0, 0, 0, 0, 0}, 1, 2, 6);
    // within the roundings of a 6-term fp32 sum (a kernel that scales tokens into range stays finite on its own)
    float tol = 1e-6f * 2e38f;
    for (String backend : FAST) {
      assertEquals(2e38f, scores(backend, q1, d1)[0][0], tol, backend);
      assertEquals(0f, scores(backend, q2, d2)[0][0], backend);
      assertEquals(2e38f, scores(backend, q3, d3)[0][0], tol, backend);
      try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
        assertEquals(0, m.scoresForTraining(q3, d3).argmax(0, 0), backend + " argmax");
        assertEquals(2e38f, m.topK(q3, d3, 1).scores()[0][0], tol, backend + " topK");
      }
    }
  }

  @Test
  void everyTypePairMatchesTheReferenceNearFp32sLimit() {
    SplittableRandom r = new SplittableRandom(19);
    for (int round = 0; round < 6; round++) {
      int dim = new int[] {1, 3, 6, 33, 6, 9}[round];
      int nq = 3;
      int lq = 1 + r.nextInt(4);
      int nd = 5;
      int ld = 1 + r.nextInt(5);
      TokenBatch q = TokenBatch.ofFloats(values(r, nq * lq * dim), nq, lq, dim);
      TokenBatch d = TokenBatch.ofFloats(values(r, nd * ld * dim), nd, ld, dim);
      for (DType qt : TYPES) {
        for (DType dt : TYPES) {
          TokenBatch qq = as(q, qt);
          TokenBatch dd = as(d, dt);
          float[][] expected = scores("reference", qq, dd);
          for (String backend : FAST) {
            ParityTest.assertClose(expected, scores(backend, qq, dd), qq, dd, backend + " " + qt + " x " + dt
                + " d=" + dim);
          }
        }
      }
    }
  }

  @Test
  void halfDocumentsScoreAsTheirFp32WideningBesideHugeQueries() {
    // queries of sum |q| near 1e34, far past what fp16's type bound allows, but whose products stay in range
    SplittableRandom r = new SplittableRandom(3);
    int dim = 5;
    float[] q = new float[4 * 3 * dim];
    for (int i = 0; i < q.length; i++) {
      q[i] = (float) (r.nextGaussian() * (i % dim == 0 ? 1e34 : 1));
    }
    float[] d = new float[6 * 4 * dim];
    for (int i = 0; i < d.length; i++) {
      d[i] = (float) r.nextGaussian();
    }
    TokenBatch queries = TokenBatch.ofFloats(q, 4, 3, dim);
    for (DType half : new DType[] {DType.FLOAT16, DType.BFLOAT16}) {
      short[] bits = half.narrow(d);
      TokenBatch halfs = TokenBatch.ofHalfs(half, bits, 6, 4, dim);
      TokenBatch widened = TokenBatch.ofFloats(halfs.toFloatArray(), 6, 4, dim);
      for (String backend : FAST) {
        float[][] a = scores(backend, queries, halfs);
        float[][] b = scores(backend, queries, widened);
        for (int i = 0; i < a.length; i++) {
          assertArrayEquals(b[i], a[i], backend + " " + half + " query " + i);
        }
      }
    }
  }

  /** Magnitudes in [2e19, 4e19] with random signs: every product passes fp32's largest. */
  private static float[] values(SplittableRandom r, int n) {
    float[] v = new float[n];
    for (int i = 0; i < n; i++) {
      v[i] = (float) ((r.nextBoolean() ? 1 : -1) * (2e19 + 2e19 * r.nextDouble()));
    }
    return v;
  }

  private static TokenBatch as(TokenBatch b, DType type) {
    if (type == DType.FLOAT32) {
      return b;
    }
    if (type == DType.BFLOAT16) {
      float[] f = b.toFloatArray();
      short[] bits = new short[f.length];
      for (int i = 0; i < f.length; i++) {
        bits[i] = (short) (Float.floatToRawIntBits(f[i]) >>> 16);
      }
      return TokenBatch.ofHalfs(DType.BFLOAT16, bits, b.size(), b.maxLength(), b.dim());
    }
    return b.quantize(type);
  }
}
