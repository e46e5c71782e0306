package dev.maxsim4j.internal;

import java.util.Arrays;
import java.util.function.IntConsumer;

/**
 * Fixed dimensional encodings on the CPU, rows in parallel: the definition every backend's encodings equal bit
 * for bit. Per row: the valid tokens (quantized ones exactly, {@code scale x q} in float64) times
 * {@link FdeParameters#weights} in float64 (each product rounded, then added over k ascending), sign patterns,
 * per-partition sums (queries) or averages (documents) of the projected tokens over tokens ascending, empty
 * document partitions filled from the nearest token, and the optional final sketch summed over coordinates
 * ascending; rounded to float once at the end.
 */
public final class FdeEncoding {
  private FdeEncoding() {}

  /** Runs {@code row} for every row of {@code [0, rows)}, on whichever threads its owner computes with. */
  public interface Rows {
    void forEach(int rows, IntConsumer row);

    /** The most rows {@link #forEach} runs at once: the threads it runs them on. */
    int parallelism();
  }

  /** Rows on the common pool: for an encoder used without a {@code MaxSim}, which has no threads of its own. */
  public static final Rows COMMON_POOL = new Rows() {
    @Override
    public void forEach(int rows, IntConsumer row) {
      PoolTasks.forEach(rows, row);
    }

    @Override
    public int parallelism() {
      return PoolTasks.parallelism();
    }
  };

  /** Encodings of every row of {@code t} ({@code queries}: sums per partition, else documents' averages). */
  public static float[][] encode(FdeParameters p, Tokens t, boolean queries, Rows rows) {
    long perToken = (long) p.dim() + p.projectionDim() + p.columnsPerRepetition();
    long perRow = rowBytes(p, t.maxValidCount);
    // beside the encodings, which fill up while rows are encoded
    long encodings = t.rows * (4L * p.dimension() + HeapLimit.ARRAY_OVERHEAD);
    HeapLimit.alsoHolding(encodings, () -> HeapLimit.requireBytes(perRow, (queries ? "queries" : "documents")
        + "' longest row of " + t.maxValidCount + " tokens, encoded in float64 (d + projection dim + columns per"
        + " repetition = " + perToken + " doubles a token)", "encode shorter rows"));
    float[][] out = new float[t.rows][];
    // rows run in parallel, each with its working arrays: as many at once as the heap holds of the longest row's
    int parallel = Math.min(t.rows, rows.parallelism());
    int atOnce = parallel;
    while (atOnce > 1 && !HeapLimit.fits(perRow > Long.MAX_VALUE / atOnce ? Long.MAX_VALUE : perRow * atOnce,
        encodings)) {
      atOnce--;
    }
    if (atOnce == parallel) {
      rows.forEach(t.rows, row -> out[row] = encodeRow(p, t, row, queries));
    } else {
      int lanes = atOnce; // each lane encodes every lanes-th row, one after another
      rows.forEach(lanes, lane -> {
        for (int row = lane; row < t.rows; row += lanes) {
          out[row] = encodeRow(p, t, row, queries);
        }
      });
    }
    return out;
  }

  /**
   * The working arrays of a row of {@code tokens} valid tokens: in float64 its tokens, their inner projections and one
   * repetition's products at once, and the raw encoding.
   */
  public static long rowBytes(FdeParameters p, int tokens) {
    return 8 * ((long) p.dim() + p.projectionDim() + p.columnsPerRepetition()) * tokens + 8L * p.rawDimension();
  }

  /** Sums and averages in float64, rounded once: fp32 sums of huge tokens overflow where the average does not. */
  private static float[] encodeRow(FdeParameters p, Tokens t, int row, boolean query) {
    int dim = p.dim();
    int projectionDim = p.projectionDim();
    int simHashBits = p.simHashBits();
    boolean projects = p.projects();
    double[] weights = p.weights();
    int n = t.validCount[row];
    double[] tokens = new double[n * dim];
    gatherValid(t, row, tokens);
    int partitions = p.partitions();
    double[] raw = new double[p.rawDimension()];
    int[] pattern = new int[n];
    double[] projected = new double[n * projectionDim];
    int[] count = new int[partitions];
    int columns = p.columns();
    int columnsPerRepetition = p.columnsPerRepetition();
    // one repetition's products at a time: all of them at once would hold n x columns doubles, far more than the
    // row (gigabytes for a row of 10^6 tokens of d = 2 at 64 repetitions)
    double[] products = new double[n * columnsPerRepetition];
    for (int r = 0; r < p.repetitions(); r++) {
      Arrays.fill(products, 0);
      for (int i = 0; i < n; i++) {
        int out = i * columnsPerRepetition;
        for (int k = 0; k < dim; k++) {
          double x = tokens[i * dim + k];
          int w = k * columns + r * columnsPerRepetition;
          for (int c = 0; c < columnsPerRepetition; c++) {
            products[out + c] += x * weights[w + c];
          }
        }
      }
      for (int i = 0; i < n; i++) {
        int at = i * columnsPerRepetition;
        int bits = 0;
        for (int b = 0; b < simHashBits; b++) {
          if (products[at + b] > 0) {
            bits |= 1 << b;
          }
        }
        pattern[i] = bits;
        for (int k = 0; k < projectionDim; k++) {
          projected[i * projectionDim + k] = projects ? products[at + simHashBits + k] : tokens[i * dim + k];
        }
      }
      int block = r * partitions * projectionDim;
      Arrays.fill(count, 0);
      for (int i = 0; i < n; i++) {
        int at = block + pattern[i] * projectionDim;
        for (int k = 0; k < projectionDim; k++) {
          raw[at + k] += projected[i * projectionDim + k];
        }
        count[pattern[i]]++;
      }
      if (query) {
        continue;
      }
      for (int q = 0; q < partitions; q++) {
        int at = block + q * projectionDim;
        if (count[q] > 1) {
          for (int k = 0; k < projectionDim; k++) {
            raw[at + k] /= count[q];
          }
        } else if (count[q] == 0 && p.fillEmpty() && n > 0) {
          int nearest = nearest(pattern, n, q);
          System.arraycopy(projected, nearest * projectionDim, raw, at, projectionDim);
        }
      }
    }
    if (p.finalDim() > 0) {
      return sketch(p, raw);
    }
    float[] out = new float[raw.length];
    for (int i = 0; i < raw.length; i++) {
      out[i] = (float) raw[i];
    }
    return out;
  }

  /**
   * The valid tokens of a row in float64, a quantized one exactly ({@code scale x q}): its fp32 product overflows
   * for a large scale, and rounds away for a tiny one, where the value and its sums do not.
   */
  private static void gatherValid(Tokens t, int row, double[] dst) {
    int dim = t.dim;
    t.forEachValidRun(row, null, (token, count, n) -> {
      for (int i = 0; i < count; i++) {
        for (int k = 0; k < dim; k++) {
          dst[(n + i) * dim + k] = t.value(token + i, k);
        }
      }
    });
  }

  /** The lowest token whose sign pattern is nearest to partition {@code p} in Hamming distance. */
  private static int nearest(int[] pattern, int n, int p) {
    int best = 0;
    int bestDistance = Integer.MAX_VALUE;
    for (int i = 0; i < n; i++) {
      int distance = Integer.bitCount(pattern[i] ^ p);
      if (distance < bestDistance) {
        best = i;
        bestDistance = distance;
      }
    }
    return best;
  }

  private static float[] sketch(FdeParameters p, double[] raw) {
    int[] bucket = p.finalBucket();
    byte[] sign = p.finalSign();
    double[] sum = new double[p.finalDim()];
    for (int i = 0; i < raw.length; i++) {
      sum[bucket[i]] += sign[i] * raw[i];
    }
    float[] out = new float[sum.length];
    for (int i = 0; i < sum.length; i++) {
      out[i] = (float) sum[i];
    }
    return out;
  }
}
