package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;

/**
 * Encoders and token batches of awkward shapes for comparing FDE encodings across backends: d = 1, 3, 33, 128, 513;
 * 0 to 6 SimHash bits, 1 to 20 repetitions, projection on and off, empty-partition fill on and off, final
 * projection on and off; rows of no valid token, of one, ragged and masked; every storage type, padded and packed.
 */
final class FdeCases {
  /** One encoder and one batch; {@code name} says which, with the batch's seed. */
  record Case(String name, FixedDimensionalEncoder encoder, TokenBatch batch) {
    @Override
    public String toString() {
      return name;
    }
  }

  /** {simHashBits, repetitions, projects (1/0), fill (1/0), final projection (1/0)} */
  private static final int[][] SPECS = {
      {1, 1, 1, 1, 0}, {2, 3, 0, 1, 1}, {3, 8, 1, 0, 0}, {4, 20, 1, 1, 1}, {5, 20, 1, 1, 0}, {6, 1, 0, 1, 0},
      {0, 4, 1, 1, 0}, {6, 13, 1, 0, 1}, {3, 2, 0, 0, 1}};
  private static final int[] DIMS = {1, 3, 33, 128, 513};
  private static final DType[] TYPES = {DType.BFLOAT16, DType.FLOAT16, DType.INT8, DType.FLOAT8_E4M3, DType.BINARY};

  private FdeCases() {}

  static List<Case> cases() {
    List<Case> out = new ArrayList<>();
    for (int d : DIMS) {
      for (int s = 0; s < SPECS.length; s++) {
        RandomBatches r = new RandomBatches();
        FixedDimensionalEncoder e = encoder(d, SPECS[s], s);
        out.add(new Case("d=" + d + " " + e + " fp32 awkward rows, " + r, e, awkward(r, DType.FLOAT32, d)));
      }
      FixedDimensionalEncoder e = encoder(d, SPECS[4], 99);
      for (DType type : TYPES) {
        RandomBatches r = new RandomBatches();
        out.add(new Case("d=" + d + " " + e + " " + type + " awkward rows, " + r, e, awkward(r, type, d)));
      }
      RandomBatches r = new RandomBatches();
      out.add(new Case("d=" + d + " " + e + " packed masked rows, " + r, e,
          r.packed(DType.FLOAT32, 6, 0, 40, d, true)));
    }
    return out;
  }

  /** The encoder of {@code spec} for tokens of {@code d}, shrunk in repetitions where the encoding would be too long. */
  static FixedDimensionalEncoder encoder(int d, int[] spec, long seed) {
    int bits = spec[0];
    int projection = spec[2] == 1 && d > 1 ? Math.min(8, d - 1) : d;
    int repetitions = spec[1];
    while ((long) repetitions * (1 << bits) * projection > FixedDimensionalEncoder.Builder.MAX_DIMENSION) {
      repetitions--;
    }
    int raw = repetitions * (1 << bits) * projection;
    return FixedDimensionalEncoder.builder(d).simHashBits(bits).repetitions(repetitions).projectionDim(projection)
        .fillEmptyPartitions(spec[3] == 1).finalDim(spec[4] == 1 ? Math.min(raw, 97) : 0).seed(seed).build();
  }

  /** Rows of 0, 1, 2, 7, 12 and 12 tokens and more, a random mask over them: empty, single and ragged rows. */
  static TokenBatch awkward(RandomBatches r, DType type, int d) {
    int[] lengths = {0, 1, 12, 2, 12, 7, 1, 12, 5};
    TokenBatch b = r.padded(type, lengths.length, 12, d, 1);
    return b.withLengths(lengths);
  }

  /** Every row bit for bit: {@code assertArrayEquals} on floats compares their bits (NaN aside). */
  static void assertSameEncodings(float[][] expected, float[][] actual, String message) {
    assertEquals(expected.length, actual.length, message);
    for (int i = 0; i < expected.length; i++) {
      assertArrayEquals(expected[i], actual[i], message + ", row " + i);
    }
  }
}
