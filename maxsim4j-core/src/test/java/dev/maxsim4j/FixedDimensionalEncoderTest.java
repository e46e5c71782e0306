package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** MUVERA encodings: shape, determinism, masks, the exact one-partition case, and that they track MaxSim. */
class FixedDimensionalEncoderTest {

  @Test
  void dimensionAndDeterminism() {
    FixedDimensionalEncoder fde = FixedDimensionalEncoder.builder(16).simHashBits(3).repetitions(5).projectionDim(4)
        .seed(7).build();
    assertEquals(5 * 8 * 4, fde.dimension());
    TokenBatch docs = new RandomBatches().padded(DType.FLOAT32, 3, 6, 16, 1);
    float[][] a = fde.encodeDocuments(docs);
    float[][] b = FixedDimensionalEncoder.builder(16).simHashBits(3).repetitions(5).projectionDim(4).seed(7).build()
        .encodeDocuments(docs);
    for (int i = 0; i < a.length; i++) {
      assertArrayEquals(a[i], b[i], 0f, "same parameters and seed, same encoding");
    }
    float[][] c = FixedDimensionalEncoder.builder(16).simHashBits(3).repetitions(5).projectionDim(4).seed(8).build()
        .encodeDocuments(docs);
    assertTrue(!Arrays.equals(a[0], c[0]), "another seed, another encoding");
    assertEquals(64, FixedDimensionalEncoder.builder(16).finalDim(64).build().encodeQueries(docs)[0].length);
    assertEquals(1024, FixedDimensionalEncoder.builder(128).build().dimension(), "the default fits Lucene's 1024");
  }

  /**
   * The fingerprint: 16 hex digits, equal for encoders that encode alike, different for each parameter and seed that
   * changes the encodings (fillEmpty included, which the probe's lone token exercises).
   */
  @Test
  void fingerprintsTellEncodingsApart() {
    FixedDimensionalEncoder.Builder base = FixedDimensionalEncoder.builder(16).simHashBits(3).repetitions(4)
        .projectionDim(4);
    String f = base.build().fingerprint();
    assertTrue(f.matches("[0-9a-f]{16}"), f);
    assertEquals(f, FixedDimensionalEncoder.builder(16).simHashBits(3).repetitions(4).projectionDim(4).build()
        .fingerprint(), "equal encoders");
    Set<String> seen = new HashSet<>(List.of(f));
    for (FixedDimensionalEncoder other : new FixedDimensionalEncoder[] {
        FixedDimensionalEncoder.builder(16).simHashBits(3).repetitions(4).projectionDim(4).seed(43).build(),
        FixedDimensionalEncoder.builder(16).simHashBits(3).repetitions(4).projectionDim(4).seed(41).build(),
        FixedDimensionalEncoder.builder(16).simHashBits(3).repetitions(4).projectionDim(4).fillEmptyPartitions(false)
            .build(),
        FixedDimensionalEncoder.builder(16).simHashBits(3).repetitions(4).projectionDim(4).finalDim(32).build(),
        FixedDimensionalEncoder.builder(16).simHashBits(2).repetitions(4).projectionDim(4).build(),
        FixedDimensionalEncoder.builder(16).simHashBits(3).repetitions(5).projectionDim(4).build()}) {
      assertTrue(seen.add(other.fingerprint()), other + " has another encoder's fingerprint");
    }
  }

  @Test
  void onePartitionWithoutProjectionIsSumDotMean() {
    RandomBatches r = new RandomBatches();
    TokenBatch q = r.padded(DType.FLOAT32, 1, 4, 5, 0);
    TokenBatch d = r.padded(DType.FLOAT32, 1, 3, 5, 0);
    FixedDimensionalEncoder fde = FixedDimensionalEncoder.builder(5).simHashBits(0).repetitions(1).projectionDim(5)
        .build();
    double expected = 0;
    for (int s = 0; s < 4; s++) {
      for (int t = 0; t < 3; t++) {
        expected += Oracle.dot(q, 0, s, d, 0, t) / 3;
      }
    }
    assertEquals(expected, dot(fde.encodeQueries(q)[0], fde.encodeDocuments(d)[0]), 1e-5, r.toString());
  }

  @Test
  void onlyValidTokensCount() {
    RandomBatches r = new RandomBatches();
    TokenBatch padded = r.padded(DType.FLOAT32, 2, 7, 12, 1);
    float[][][] rows = new float[2][][];
    for (int i = 0; i < 2; i++) {
      rows[i] = new float[padded.validTokens(i)][12];
      int n = 0;
      for (int t = 0; t < 7; t++) {
        if (padded.isValid(i, t)) {
          for (int k = 0; k < 12; k++) {
            rows[i][n][k] = padded.get(i, t, k);
          }
          n++;
        }
      }
    }
    TokenBatch compact = TokenBatch.of(rows);
    FixedDimensionalEncoder fde = FixedDimensionalEncoder.builder(12).simHashBits(2).repetitions(3).build();
    for (int i = 0; i < 2; i++) {
      assertArrayEquals(fde.encodeDocuments(compact)[i], fde.encodeDocuments(padded)[i], 1e-6f, r.toString());
      assertArrayEquals(fde.encodeQueries(compact)[i], fde.encodeQueries(padded)[i], 1e-6f, r.toString());
    }
    TokenBatch empty = TokenBatch.ofFloats(new float[12], 1, 1, 12).withLengths(new int[] {0});
    assertArrayEquals(new float[fde.dimension()], fde.encodeDocuments(empty)[0], 0f, "an empty row encodes as zeros");
  }

  /** Spearman correlation of FDE scores with MaxSim on clustered tokens, averaged over queries and seeds. */
  @Test
  void encodingsTrackMaxSimAndMoreRepetitionsTrackItBetter() {
    SplittableRandom rnd = new SplittableRandom(20261201L);
    int d = 32;
    float[][] centers = new float[48][d];
    for (float[] c : centers) {
      for (int k = 0; k < d; k++) {
        c[k] = (float) rnd.nextGaussian();
      }
      normalize(c);
    }
    int nd = 150;
    float[][][] docs = new float[nd][][];
    for (int j = 0; j < nd; j++) {
      docs[j] = new float[16][];
      for (int t = 0; t < 16; t++) {
        docs[j][t] = noisy(centers[rnd.nextInt(centers.length)], 0.2, rnd);
      }
    }
    float[][][] queries = new float[12][][];
    for (int i = 0; i < queries.length; i++) {
      float[][] source = docs[rnd.nextInt(nd)];
      queries[i] = new float[6][];
      for (int t = 0; t < 6; t++) {
        queries[i][t] = noisy(source[rnd.nextInt(source.length)], 0.2, rnd);
      }
    }
    TokenBatch q = TokenBatch.of(queries);
    TokenBatch dd = TokenBatch.of(docs);
    float[][] exact;
    try (MaxSim m = MaxSim.builder().backend("reference").threads(2).build()) {
      exact = m.scores(q, dd);
    }
    double one = meanSpearman(q, dd, exact, 1);
    double many = meanSpearman(q, dd, exact, 20);
    assertTrue(many > 0.8, "20 repetitions: Spearman " + many);
    assertTrue(many > one + 0.2, "more repetitions track MaxSim better: 1 -> " + one + ", 20 -> " + many);
  }

  private static double meanSpearman(TokenBatch q, TokenBatch d, float[][] exact, int repetitions) {
    double sum = 0;
    int seeds = 4;
    for (int seed = 0; seed < seeds; seed++) {
      FixedDimensionalEncoder fde = FixedDimensionalEncoder.builder(q.dim()).simHashBits(3).repetitions(repetitions)
          .projectionDim(q.dim()).seed(seed).build();
      float[][] fq = fde.encodeQueries(q);
      float[][] fd = fde.encodeDocuments(d);
      for (int i = 0; i < q.size(); i++) {
        double[] approx = new double[d.size()];
        for (int j = 0; j < d.size(); j++) {
          approx[j] = dot(fq[i], fd[j]);
        }
        sum += spearman(approx, exact[i]);
      }
    }
    return sum / (seeds * q.size());
  }

  private static double spearman(double[] a, float[] b) {
    double[] ra = ranks(a);
    double[] bd = new double[b.length];
    for (int i = 0; i < b.length; i++) {
      bd[i] = b[i];
    }
    double[] rb = ranks(bd);
    double n = a.length;
    double sq = 0;
    for (int i = 0; i < a.length; i++) {
      sq += (ra[i] - rb[i]) * (ra[i] - rb[i]);
    }
    return 1 - 6 * sq / (n * (n * n - 1));
  }

  private static double[] ranks(double[] v) {
    Integer[] order = new Integer[v.length];
    for (int i = 0; i < v.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, (x, y) -> Double.compare(v[x], v[y]));
    double[] r = new double[v.length];
    for (int i = 0; i < v.length; i++) {
      r[order[i]] = i;
    }
    return r;
  }

  @Test
  void parametersAreChecked() {
    assertMessage(() -> FixedDimensionalEncoder.builder(0), "dim = 0");
    assertMessage(() -> FixedDimensionalEncoder.builder(8).simHashBits(11), "simHashBits = 11");
    assertMessage(() -> FixedDimensionalEncoder.builder(8).repetitions(0), "repetitions = 0");
    assertMessage(() -> FixedDimensionalEncoder.builder(8).projectionDim(9), "projectionDim = 9");
    assertMessage(() -> FixedDimensionalEncoder.builder(8).finalDim(-1), "finalDim = -1");
    assertMessage(() -> FixedDimensionalEncoder.builder(8).finalDim(5000).build(), "finalDim = 5000");
    assertMessage(() -> FixedDimensionalEncoder.builder(128).simHashBits(10).repetitions(64).projectionDim(128)
        .build(), "expected at most 65536");
    // 65536 projections of a million dimensions would be 64 GiB of random signs: refused before allocating
    assertMessage(() -> FixedDimensionalEncoder.builder(1 << 20).simHashBits(0).projectionDim(1)
        .repetitions(1 << 16).build(), "random matrix entries; expected at most " + FixedDimensionalEncoder.Builder.MAX_MATRIX_ENTRIES);
    FixedDimensionalEncoder fde = FixedDimensionalEncoder.builder(8).build();
    assertMessage(() -> fde.encodeQueries(TokenBatch.ofFloats(new float[9], 1, 1, 9)), "this encoder takes 8");
    assertMessage(() -> fde.encodeDocuments(null), "documents is null");
  }

  /**
   * Tokens near fp32's largest value: a document's average, a query's sum and the final sketch are the float64
   * values rounded once, so a block overflows to infinity only when its exact value does, and never turns NaN.
   */
  @Test
  void hugeTokensEncodeAsTheirExactSumsRoundedOnce() {
    float big = 3e38f;
    TokenBatch docs = TokenBatch.ofFloats(new float[] {big, big, big, big, -big, -big}, 1, 3, 2);
    FixedDimensionalEncoder one = FixedDimensionalEncoder.builder(2).simHashBits(0).repetitions(1).build();
    // one partition: the document block is the mean, (3e38 + 3e38 - 3e38) / 3 per dimension
    assertArrayEquals(new float[] {1e38f, 1e38f}, one.encodeDocuments(docs)[0], 1e32f);
    assertArrayEquals(new float[] {big, big}, one.encodeQueries(docs)[0], 1e32f);
    SplittableRandom r = new SplittableRandom(9);
    for (int d : new int[] {1, 3, 33}) {
      float[] x = new float[5 * 7 * d];
      for (int k = 0; k < x.length; k++) {
        x[k] = (float) (Float.MAX_VALUE * (2 * r.nextDouble() - 1));
      }
      TokenBatch b = TokenBatch.ofFloats(x, 5, 7, d);
      for (FixedDimensionalEncoder e : new FixedDimensionalEncoder[] {
          FixedDimensionalEncoder.builder(d).simHashBits(2).repetitions(3).build(),
          FixedDimensionalEncoder.builder(d).simHashBits(2).repetitions(3).projectionDim(1).finalDim(5).build()}) {
        for (float[][] enc : new float[][][] {e.encodeDocuments(b), e.encodeQueries(b)}) {
          for (float[] row : enc) {
            for (float v : row) {
              assertFalse(Float.isNaN(v), e + ": NaN in the encoding of finite tokens " + Arrays.toString(row));
            }
          }
        }
      }
    }
  }

  private static void assertMessage(org.junit.jupiter.api.function.Executable call, String part) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    assertTrue(e.getMessage().contains(part), "message \"" + e.getMessage() + "\" lacks \"" + part + "\"");
  }

  private static float[] noisy(float[] base, double sigma, SplittableRandom rnd) {
    float[] v = base.clone();
    for (int k = 0; k < v.length; k++) {
      v[k] += (float) (sigma * rnd.nextGaussian() / Math.sqrt(v.length));
    }
    normalize(v);
    return v;
  }

  /**
   * A row of a million tokens at 64 repetitions: the products are staged a repetition at a time (all at once
   * took about 5.6 GB), and the row encodes as its halves' tokens would in one batch.
   */
  @Test
  void aLongRowEncodesInModestMemory() {
    FixedDimensionalEncoder e = FixedDimensionalEncoder.builder(2).simHashBits(10).repetitions(64).projectionDim(1)
        .build();
    SplittableRandom r = new SplittableRandom(11);
    float[] x = new float[2 * 1_000_000];
    for (int k = 0; k < x.length; k++) {
      x[k] = (float) r.nextGaussian();
    }
    float[] doc = e.encodeDocuments(TokenBatch.ofFloats(x, 1, 1_000_000, 2))[0];
    float[] query = e.encodeQueries(TokenBatch.ofFloats(x, 1, 1_000_000, 2))[0];
    assertEquals(e.dimension(), doc.length);
    float[] small = Arrays.copyOf(x, 2 * 1000);
    assertArrayEquals(e.encodeQueries(TokenBatch.ofFloats(small, 1, 1000, 2))[0],
        e.encodeQueries(TokenBatch.ofFloats(small, 1, 1000, 2))[0]);
    assertFalse(Float.isNaN(doc[0]) || Float.isNaN(query[0]));
  }

  private static void normalize(float[] v) {
    double sq = 0;
    for (float x : v) {
      sq += x * x;
    }
    float inv = (float) (1 / Math.sqrt(sq));
    for (int k = 0; k < v.length; k++) {
      v[k] *= inv;
    }
  }

  private static double dot(float[] a, float[] b) {
    double s = 0;
    for (int i = 0; i < a.length; i++) {
      s += (double) a[i] * b[i];
    }
    return s;
  }

  /** Parameters within the limits whose matrix outgrows a small heap are refused by name, not run out of memory. */
  @Test
  void aMatrixLargerThanTheHeapIsRefusedByName() throws Exception {
    String out = ChildJvm.run(java.util.List.of("-Xmx256m"), LargeMatrix.class, 60);
    assertTrue(out.contains("the encoder's random matrix of 67108864 float64 entries = 536870912 bytes, more than this"
        + " JVM's whole heap"), out);
  }

  /** Builds an encoder whose matrix (512 MiB) is twice the child's heap. */
  static final class LargeMatrix {
    public static void main(String[] args) {
      try {
        FixedDimensionalEncoder.builder(65536).simHashBits(0).repetitions(64).projectionDim(16).build();
        System.out.println("built");
      } catch (IllegalArgumentException e) {
        System.out.println(e.getMessage());
      }
    }
  }
}
