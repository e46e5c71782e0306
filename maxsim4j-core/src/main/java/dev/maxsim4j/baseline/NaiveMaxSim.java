package dev.maxsim4j.baseline;

import dev.maxsim4j.TokenBatch;
import java.util.stream.IntStream;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The naive path, kept as a benchmark baseline: what {@code einsum('ild,jtd->ijlt').amax(-1).sum(-1)} does.
 * It widens both inputs to fp32 copies, materialises the full {@code [Nq, Nd, Lq, Ld]} similarity grid
 * (each cell a Vector API dot product), then reads the grid back for the max and the sum. Same scores as
 * the fused kernels up to rounding; memory and bandwidth grow with the grid. Padded batches only; masks are
 * applied in the reduction pass. Needs {@code --add-modules jdk.incubator.vector}.
 */
public final class NaiveMaxSim {
  private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;

  private NaiveMaxSim() {}

  /** Bytes the grid of this problem needs. */
  public static long gridBytes(TokenBatch q, TokenBatch d) {
    return 4L * q.size() * d.size() * q.maxLength() * d.maxLength();
  }

  /** All-pairs scores {@code [Nq][Nd]} through the materialised grid, parallel over documents. */
  public static float[][] scores(TokenBatch q, TokenBatch d, int threads) {
    if (q.isPacked() || d.isPacked()) {
      throw new IllegalArgumentException("the naive baseline takes padded batches only");
    }
    int nq = q.size();
    int nd = d.size();
    int lq = q.maxLength();
    int ld = d.maxLength();
    int dim = q.dim();
    long cells = (long) nq * nd * lq * ld;
    if (cells > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("the naive grid [" + nq + ", " + nd + ", " + lq + ", " + ld + "] needs "
          + (cells * 4 >> 20) + " MiB, more than one Java array holds");
    }
    float[] qf = q.toFloatArray();
    float[] df = d.toFloatArray();
    float[] grid = new float[(int) cells];
    int chunk = Math.max(1, nd / (threads * 4));
    // pass 1: the similarity grid, grid[i][j][s][t] = <q_is, d_jt>
    runParallel(threads, nd, chunk, j -> {
      for (int i = 0; i < nq; i++) {
        int base = (i * nd + j) * lq * ld;
        for (int s = 0; s < lq; s++) {
          for (int t = 0; t < ld; t++) {
            grid[base + s * ld + t] = dot(qf, (i * lq + s) * dim, df, (j * ld + t) * dim, dim);
          }
        }
      }
    });
    // pass 2: max over document tokens, sum over query tokens, read back from the grid
    float[][] out = new float[nq][nd];
    runParallel(threads, nd, chunk, j -> {
      for (int i = 0; i < nq; i++) {
        int base = (i * nd + j) * lq * ld;
        double sum = 0;
        boolean any = false;
        for (int s = 0; s < lq; s++) {
          if (!q.isValid(i, s)) {
            continue;
          }
          float best = Float.NEGATIVE_INFINITY;
          for (int t = 0; t < ld; t++) {
            if (d.isValid(j, t)) {
              any = true;
              best = Math.max(best, grid[base + s * ld + t]);
            }
          }
          sum += best;
        }
        out[i][j] = d.validTokens(j) == 0 ? -1e9f : (float) (any ? sum : 0);
      }
    });
    return out;
  }

  private static float dot(float[] a, int ao, float[] b, int bo, int dim) {
    int k = 0;
    FloatVector acc = FloatVector.zero(S);
    for (; k + S.length() <= dim; k += S.length()) {
      acc = FloatVector.fromArray(S, a, ao + k).fma(FloatVector.fromArray(S, b, bo + k), acc);
    }
    float sum = acc.reduceLanes(VectorOperators.ADD);
    for (; k < dim; k++) {
      sum += a[ao + k] * b[bo + k];
    }
    return sum;
  }

  private interface IntBody {
    void run(int j);
  }

  private static void runParallel(int threads, int n, int chunk, IntBody body) {
    int chunks = (n + chunk - 1) / chunk;
    IntStream stream = IntStream.range(0, chunks);
    java.util.concurrent.ForkJoinPool pool = new java.util.concurrent.ForkJoinPool(threads);
    try {
      pool.submit(() -> stream.parallel().forEach(c -> {
        for (int j = c * chunk; j < Math.min(n, (c + 1) * chunk); j++) {
          body.run(j);
        }
      })).join();
    } finally {
      pool.shutdown();
    }
  }
}
