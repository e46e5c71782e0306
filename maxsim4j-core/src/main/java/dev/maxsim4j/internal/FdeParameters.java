package dev.maxsim4j.internal;

/**
 * A fixed dimensional encoder as the backends read it (the public type is {@code FixedDimensionalEncoder}): its
 * shape and its random draws. The arrays are shared with the encoder and never written.
 *
 * @param weights every repetition's hyperplanes, then its projection rows if it projects, as one row-major
 *     matrix {@code [dim][columns()]}
 * @param finalBucket count-sketch bucket of each raw coordinate, or null without a final projection
 * @param finalSign count-sketch sign (+1 or -1) of each raw coordinate, or null without a final projection
 */
public record FdeParameters(int dim, int simHashBits, int repetitions, int projectionDim, int finalDim,
    boolean fillEmpty, double[] weights, int[] finalBucket, byte[] finalSign) {

  /** Whether tokens are projected (projectionDim below d); without, a token is its own projection. */
  public boolean projects() {
    return projectionDim != dim;
  }

  /** Columns of {@link #weights} per repetition: its hyperplanes, then its projection rows if it projects. */
  public int columnsPerRepetition() {
    return simHashBits + (projects() ? projectionDim : 0);
  }

  /** Columns of {@link #weights}. */
  public int columns() {
    return repetitions * columnsPerRepetition();
  }

  public int partitions() {
    return 1 << simHashBits;
  }

  /** Length of an encoding before the final projection. */
  public int rawDimension() {
    return repetitions * partitions() * projectionDim;
  }

  /** Length of an encoding. */
  public int dimension() {
    return finalDim > 0 ? finalDim : rawDimension();
  }
}
