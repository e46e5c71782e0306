package dev.maxsim4j;

import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.FdeEncoding;
import dev.maxsim4j.internal.FdeParameters;
import dev.maxsim4j.internal.HeapLimit;
import dev.maxsim4j.internal.Tokens;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * MUVERA fixed dimensional encodings (Dhulipala et al., NeurIPS 2024): one vector per token set whose inner
 * product approximates MaxSim, so a single-vector index (Lucene's HNSW) can find candidates that exact MaxSim
 * then reranks.
 *
 * <p>Per repetition, {@code simHashBits} random Gaussian hyperplanes cut the token space into
 * {@code 2^simHashBits} partitions (a token's partition is its sign pattern). Each token is projected by a random
 * ±1 matrix to {@code projectionDim} dimensions (no projection when it equals the token dimension). A query's
 * block for a partition is the <em>sum</em> of its projected tokens there, a document's the <em>average</em>;
 * a partition no document token falls into takes the token whose sign pattern is nearest in Hamming distance
 * (ties: the lowest slot), unless {@link Builder#fillEmptyPartitions} is off. Blocks are concatenated over
 * repetitions; an optional final projection (a count sketch) reduces the result to {@code finalDim}. The inner
 * product of a query's and a document's encodings then sums, per partition, the query tokens' similarity to
 * the document tokens that share their partition: MaxSim's max approximated by a local average.
 *
 * <p>Only valid tokens count. Everything random derives from {@link Builder#seed}: the same parameters give
 * the same encodings on every run and machine. Encoding is on the CPU, rows in parallel on the caller's fork-join
 * pool (called from a task of one), else the common pool; {@link MaxSim#encodeDocuments} and {@link
 * MaxSim#encodeQueries} run it on a MaxSim's backend instead (its threads, or the GPU for index builds), to the same
 * bits. Instances are immutable and thread-safe. Quantized
 * batches are encoded from their exact dequantized values, {@code scale x q} in float64. A NaN or infinite value in
 * a valid token makes the encoding's values non-finite, as it makes MaxSim NaN.
 */
public final class FixedDimensionalEncoder {
  private final int dim;
  private final int simHashBits;
  private final int repetitions;
  private final int projectionDim;
  private final int finalDim;
  private final boolean fillEmpty;
  private final long seed;
  /** The shape and every random draw, as the backends encode with them. */
  private final FdeParameters parameters;

  private FixedDimensionalEncoder(Builder b) {
    this.dim = b.dim;
    this.simHashBits = b.simHashBits;
    this.repetitions = b.repetitions;
    this.projectionDim = b.projectionDim;
    this.finalDim = b.finalDim;
    this.fillEmpty = b.fillEmpty;
    this.seed = b.seed;
    // the shape's rules are FdeParameters' own; the draws below fill it in
    FdeParameters shape = new FdeParameters(dim, simHashBits, repetitions, projectionDim, finalDim, fillEmpty, null,
        null, null);
    boolean projects = shape.projects();
    int columnsPerRepetition = shape.columnsPerRepetition();
    int columns = shape.columns();
    // every repetition's Gaussian hyperplanes and ±1/sqrt(projectionDim) projection rows as one matrix
    // [dim][columns]: a token's products with all of them are one pass over its values, vectorised over columns
    double[] weights = new double[Math.multiplyExact(dim, columns)];
    double scale = 1 / Math.sqrt(projectionDim);
    // one generator per seed, split into a stream per use (split streams are independent); the root is split off
    // too, so that its increment is mixed from the seed as well: with SplittableRandom's fixed one, seeds that differ
    // by a multiple of it would draw each other's streams
    SplittableRandom root = new SplittableRandom(seed).split();
    SplittableRandom finalDraws = root.split();
    for (int r = 0; r < repetitions; r++) {
      SplittableRandom rnd = root.split();
      int first = r * columnsPerRepetition;
      for (int i = 0; i < simHashBits; i++) {
        for (int k = 0; k < dim; k++) {
          weights[k * columns + first + i] = (float) rnd.nextGaussian();
        }
      }
      if (projects) {
        for (int j = 0; j < projectionDim; j++) {
          for (int k = 0; k < dim; k++) {
            weights[k * columns + first + simHashBits + j] = (rnd.nextBoolean() ? 1 : -1) * scale;
          }
        }
      }
    }
    int[] finalBucket = null;
    byte[] finalSign = null;
    if (finalDim > 0) {
      int raw = shape.rawDimension();
      SplittableRandom rnd = finalDraws;
      finalBucket = new int[raw];
      finalSign = new byte[raw];
      for (int i = 0; i < raw; i++) {
        finalBucket[i] = rnd.nextInt(finalDim);
        finalSign[i] = (byte) (rnd.nextBoolean() ? 1 : -1);
      }
    }
    this.parameters = new FdeParameters(dim, simHashBits, repetitions, projectionDim, finalDim, fillEmpty, weights,
        finalBucket, finalSign);
  }

  /** A builder for tokens of dimension {@code dim}. */
  public static Builder builder(int dim) {
    if (dim < 1) {
      throw new IllegalArgumentException("dim = " + dim + "; expected the token dimension, >= 1");
    }
    return new Builder(dim);
  }

  /** Length of each encoding: {@code repetitions x 2^simHashBits x projectionDim}, or {@code finalDim}. */
  public int dimension() {
    return parameters.dimension();
  }

  /** Token dimension the encoder takes. */
  public int tokenDimension() {
    return dim;
  }

  /** Encodings of every row of {@code queries} as queries (sums per partition): {@code [N][dimension()]}. */
  public float[][] encodeQueries(TokenBatch queries) {
    return encode(queries, "queries", true);
  }

  /**
   * Encodings of every row of {@code documents} as documents (averages, empty partitions filled). A document with
   * no valid token encodes to zeros: its encoding's inner product with any query is 0, where MaxSim scores it -1e9,
   * so leave such documents out of a candidate index.
   */
  public float[][] encodeDocuments(TokenBatch documents) {
    return encode(documents, "documents", false);
  }

  private float[][] encode(TokenBatch batch, String name, boolean query) {
    // the batch stays reachable while its encodings are made: every heap check counts it, as MaxSim's calls do
    return HeapLimit.beside(() -> MaxSim.heldBy(batch, null), () -> {
      Tokens t = checked(batch, name);
      try {
        return Backend.canonicalNaN(FdeEncoding.encode(parameters, t, query, FdeEncoding.COMMON_POOL));
      } catch (IllegalStateException e) {
        throw MaxSim.closedMemory(e, name, t); // memory closed after the check, while it was read: named as there
      }
    });
  }

  /** The tokens of {@code batch} ({@code name}: queries or documents), checked as every encoding call checks them. */
  Tokens checked(TokenBatch batch, String name) {
    Arguments.nonNull(batch, name);
    Tokens t = batch.tokens();
    MaxSim.requireOpenMemory(name, t);
    if (t.dim != dim) {
      throw new IllegalArgumentException(name + " have dimension " + t.dim + "; this encoder takes " + dim);
    }
    Arguments.rowsResultSize(t.rows, dimension(), Float.BYTES, 1, false, name + "' encodings of rows x dimension",
        "encode in slices of rows");
    Arguments.arraySize(t.maxValidCount, dim, name + "' longest row of tokens x d", "encode shorter rows");
    Arguments.arraySize(t.maxValidCount, parameters.columns(), name
        + "' longest row of tokens x projections", "encode shorter rows");
    return t;
  }

  /**
   * A hash of this encoder's parameters, its random draws and its encodings of a few fixed fp32 probe tokens, as 16
   * hex digits: equal for encoders that encode alike, on any machine, and different where a release of maxsim4j
   * draws otherwise for the same parameters and seed, or encodes those probes otherwise (a probe: a change that only
   * other inputs meet, quantized or masked tokens say, can leave it as it was). Stored beside persisted encodings (as
   * the Lucene integration stores it on its field), it tells encodings this encoder can no longer search with from
   * ones it can: compare it, not {@link #toString}, before reusing them.
   */
  public String fingerprint() {
    long hash = mix(toString().hashCode());
    for (double w : parameters.weights()) {
      hash = mix(hash + Double.doubleToLongBits(w));
    }
    if (parameters.finalBucket() != null) {
      for (int i = 0; i < parameters.finalBucket().length; i++) {
        hash = mix(hash + parameters.finalBucket()[i] * 3L + parameters.finalSign()[i]);
      }
    }
    // three tokens and one: a lone token leaves the other partitions empty, which fillEmpty fills
    SplittableRandom rnd = new SplittableRandom(0x5EEDL);
    float[] tokens = new float[3 * dim];
    for (int i = 0; i < tokens.length; i++) {
      tokens[i] = (float) rnd.nextGaussian();
    }
    for (TokenBatch probe : new TokenBatch[] {TokenBatch.ofFloats(tokens, 1, 3, dim),
        TokenBatch.ofFloats(Arrays.copyOf(tokens, dim), 1, 1, dim)}) {
      for (float[] encoding : new float[][] {encodeQueries(probe)[0], encodeDocuments(probe)[0]}) {
        for (float v : encoding) {
          hash = mix(hash + Float.floatToIntBits(v));
        }
      }
    }
    return String.format("%016x", hash);
  }

  /** A 64-bit finaliser (MurmurHash3's): every input bit moves about half of the output's. */
  private static long mix(long h) {
    h = (h ^ (h >>> 33)) * 0xff51afd7ed558ccdL;
    h = (h ^ (h >>> 33)) * 0xc4ceb9fe1a85ec53L;
    return h ^ (h >>> 33);
  }

  /** What a backend encodes with. */
  FdeParameters parameters() {
    return parameters;
  }

  /** Equal parameters and seed: the same random draws, so the same encodings. */
  @Override
  public boolean equals(Object o) {
    return o instanceof FixedDimensionalEncoder e && dim == e.dim && simHashBits == e.simHashBits
        && repetitions == e.repetitions && projectionDim == e.projectionDim && finalDim == e.finalDim
        && fillEmpty == e.fillEmpty && seed == e.seed;
  }

  @Override
  public int hashCode() {
    return Objects.hash(dim, simHashBits, repetitions, projectionDim, finalDim, fillEmpty, seed);
  }

  @Override
  public String toString() {
    return "FixedDimensionalEncoder[d=" + dim + ", simHashBits=" + simHashBits + ", repetitions=" + repetitions
        + ", projectionDim=" + projectionDim + (finalDim > 0 ? ", finalDim=" + finalDim : "") + ", fillEmpty="
        + fillEmpty + ", seed=" + seed + ", dimension=" + dimension() + "]";
  }

  /**
   * Parameters of an encoder. The defaults (3 SimHash bits, 8 repetitions, projection to 16 dimensions, no final
   * projection: 1,024 dimensions for d >= 16) fit Lucene's default limit on vector dimensions, and are the best
   * recall of the 1,024-dimension sets compared on real text in {@code docs/retrieval.md}.
   */
  public static final class Builder {
    /** Encodings longer than this are refused: one encoding per document must stay a modest vector. */
    public static final int MAX_DIMENSION = 1 << 16;
    /** The random hyperplanes and projections together hold at most this many entries (float64: 1 GiB). */
    public static final long MAX_MATRIX_ENTRIES = 1L << 27;
    private final int dim;
    private int simHashBits = 3;
    private int repetitions = 8;
    private int projectionDim;
    private int finalDim;
    private boolean fillEmpty = true;
    private long seed = 42;

    private Builder(int dim) {
      this.dim = dim;
      this.projectionDim = Math.min(16, dim);
    }

    /** SimHash hyperplanes per repetition, 0 to 10: {@code 2^bits} partitions. */
    public Builder simHashBits(int bits) {
      if (bits < 0 || bits > 10) {
        throw new IllegalArgumentException("simHashBits = " + bits + "; expected 0 to 10 (2^bits partitions)");
      }
      this.simHashBits = bits;
      return this;
    }

    /** Independent repetitions, >= 1: more repetitions approximate MaxSim better, in a longer encoding. */
    public Builder repetitions(int repetitions) {
      if (repetitions < 1) {
        throw new IllegalArgumentException("repetitions = " + repetitions + "; expected >= 1");
      }
      this.repetitions = repetitions;
      return this;
    }

    /** Dimensions each token is projected to, 1 to d (d: no projection). */
    public Builder projectionDim(int projectionDim) {
      if (projectionDim < 1 || projectionDim > dim) {
        throw new IllegalArgumentException("projectionDim = " + projectionDim + "; expected 1 to the token"
            + " dimension " + dim + " (" + dim + ": no projection)");
      }
      this.projectionDim = projectionDim;
      return this;
    }

    /** Length of a final count-sketch projection of the whole encoding, or 0 (the default) for none. */
    public Builder finalDim(int finalDim) {
      if (finalDim < 0) {
        throw new IllegalArgumentException("finalDim = " + finalDim + "; expected >= 1, or 0 for no final projection");
      }
      this.finalDim = finalDim;
      return this;
    }

    /** Whether a document's empty partitions take its nearest token (default true, as in the paper). */
    public Builder fillEmptyPartitions(boolean fill) {
      this.fillEmpty = fill;
      return this;
    }

    /**
     * Seed of every random draw; encodings are comparable only between encoders of equal parameters and seed, and
     * encoders of different seeds draw independently (any two, however close).
     */
    public Builder seed(long seed) {
      this.seed = seed;
      return this;
    }

    /**
     * The encoder.
     *
     * @throws IllegalArgumentException where the encoding or its random matrix passes the limits above, or where
     *     the matrix ({@code 8 x repetitions x (simHashBits + projectionDim) x d} bytes, projectionDim counted 0
     *     where it equals d) is more than the heap has room for beside what it holds, leaving up to an eighth of it
     *     to the JVM
     */
    public FixedDimensionalEncoder build() {
      long perProjection = (long) repetitions * (1 << simHashBits);
      // compared by division: the full product can pass 2^63 and wrap a long into range
      if (perProjection > MAX_DIMENSION / projectionDim) {
        throw new IllegalArgumentException("repetitions x 2^simHashBits x projectionDim = " + repetitions + " x "
            + (1 << simHashBits) + " x " + projectionDim + " = " + BigInteger.valueOf(perProjection)
            .multiply(BigInteger.valueOf(projectionDim)) + "; expected at most " + MAX_DIMENSION);
      }
      long raw = perProjection * projectionDim;
      long matrices = (long) repetitions * (simHashBits + (projectionDim == dim ? 0 : projectionDim)) * dim;
      if (matrices > MAX_MATRIX_ENTRIES) {
        throw new IllegalArgumentException("repetitions x (simHashBits + projectionDim) x d = " + repetitions + " x ("
            + simHashBits + " + " + (projectionDim == dim ? 0 : projectionDim) + ") x " + dim + " = " + matrices
            + " random matrix entries; expected at most " + MAX_MATRIX_ENTRIES
            + " (fewer repetitions or a smaller projectionDim)");
      }
      // the matrix is held in float64 for the encoder's life: a heap smaller than it is named, not run out of
      HeapLimit.requireBytes(Double.BYTES * matrices, "the encoder's random matrix of " + matrices
          + " float64 entries", "give the JVM more heap (-Xmx) or use fewer repetitions or a smaller projectionDim");
      if (finalDim > raw) {
        throw new IllegalArgumentException("finalDim = " + finalDim + "; expected at most the encoding's " + raw
            + " dimensions (a final projection reduces)");
      }
      return new FixedDimensionalEncoder(this);
    }
  }
}
