package dev.maxsim4j.internal.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.Tokens;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The vector kernel on quantized tokens (its vectorised expansion of int8, e4m3 and one-bit documents, its
 * popcount path when both sides are one bit, its tables for float queries against one-bit documents) against
 * the float64 reference kernel: every score within the fp32 bound (relative 1e-5 of the sum over query tokens of the largest sum of |q||d|), every argmax the
 * reference's or a token whose dot product is within that bound of it. Scales include zero and negative values;
 * storage is heap bytes or a native segment; d covers widths below, at and around the lane count and 32-bit
 * words.
 */
class QuantizedKernelTest {
  private static final int[] DIMS = {1, 3, 8, 16, 31, 32, 33, 64, 100, 127, 128, 513};

  static Stream<Arguments> cases() {
    List<Arguments> cases = new ArrayList<>();
    long seed = 1;
    for (DType docs : new DType[] {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
      for (int d : DIMS) {
        cases.add(Arguments.of(DType.FLOAT32, docs, d, false, seed++));
        cases.add(Arguments.of(docs, docs, d, true, seed++));
        if (docs == DType.BINARY) {
          cases.add(Arguments.of(DType.FLOAT32, docs, d, true, seed++)); // the tables, with masks on both sides
        }
      }
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "{0} queries x {1} documents, d={2}, masked={3}")
  @MethodSource("cases")
  void scoresAndArgmaxMatchTheReference(DType queryType, DType docType, int d, boolean masked, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    for (boolean segment : new boolean[] {false, true}) {
      Tokens q = random(r, queryType, 3, 37, d, masked, segment);
      Tokens docs = random(r, docType, 5, 41, d, masked, segment);
      assertMatchesReference(q, docs, queryType + " x " + docType + " d=" + d + (segment ? " segment" : " heap"));
    }
  }

  @Test
  void singleTokensAndSharedScalesTieOnTheLowestSlot() {
    SplittableRandom r = new SplittableRandom(7);
    // one-bit tokens with all scales 1 tie often: the argmax must be the lowest tied slot
    Tokens q = random(r, DType.BINARY, 2, 1, 4, false, false).withValidity(new int[] {1, 1}, null);
    Tokens docs = bits(r, 3, 40, 4);
    assertMatchesReference(q, docs, "ties");
    Tokens longQuery = bits(r, 1, 70, 64);
    assertMatchesReference(longQuery, bits(r, 2, 1, 64), "one document token");
  }

  /**
   * One bit on both sides without scales gives exact integer dot products, so every argmax must be the reference's
   * lowest tied slot exactly: widths of one, two, four (the blocks that keep the query in registers) and eight
   * words, queries of two vector blocks and a one-vector tail, documents with few distinct tokens.
   */
  @Test
  void oneBitArgmaxIsTheLowestTiedSlotAtEveryWordCount() {
    SplittableRandom r = new SplittableRandom(11);
    for (int d : new int[] {4, 64, 100, 128, 256}) {
      Tokens q = bits(r, 2, 40, d);
      Tokens docs = bits(r, 3, 50, d);
      PairKernel.Worker fast = new VectorKernel().bind(q, docs).newWorker();
      int[] want = new int[q.maxRowLength];
      int[] got = new int[q.maxRowLength];
      for (int j = 0; j < docs.rows; j++) {
        fast.load(j);
        for (int i = 0; i < q.rows; i++) {
          double ref = ReferenceKernel.maxSim(q, i, docs, j, want, 0);
          assertEquals(ref, fast.score(i, got, 0), 0.0, "d=" + d + " query " + i + " document " + j);
          assertEquals(java.util.Arrays.toString(want), java.util.Arrays.toString(got),
              "d=" + d + " query " + i + " document " + j + ": argmax of every query slot");
        }
      }
    }
  }

  /**
   * Float queries against one-bit documents read {@link BitTableKernel}'s tables where they apply (here also at
   * magnitudes near 1e30, inside its bound); a NaN or an infinity in a valid query token, a sum of magnitudes
   * past MAX_VALUE / 4 or tables past the cache budget take the expanding path, and either way every score and
   * argmax is the reference's.
   */
  @Test
  void floatQueriesAgainstOneBitDocumentsTakeTheTablesWhereTheyApply() {
    SplittableRandom r = new SplittableRandom(17);
    Tokens docs = random(r, DType.BINARY, 4, 30, 128, true, false);
    Tokens q = random(r, DType.FLOAT32, 3, 32, 128, true, false);
    assertTrue(BitTableKernel.applies(q, docs));
    assertMatchesReference(q, docs, "tables");
    for (int k = 0; k < q.f32.length; k++) {
      q.f32[k] *= 1e30f;
    }
    assertTrue(BitTableKernel.applies(q, docs));
    assertMatchesReference(q, docs, "tables, values near 1e30");
    for (float odd : new float[] {Float.NaN, Float.POSITIVE_INFINITY, 3e37f}) {
      Tokens oddQ = random(new SplittableRandom(19), DType.FLOAT32, 3, 32, 128, true, false);
      int valid = oddQ.rowStart[2] + firstValid(oddQ, 2);
      java.util.Arrays.fill(oddQ.f32, valid * 128, valid * 128 + 128, 0f);
      oddQ.f32[valid * 128 + 7] = odd;
      oddQ.f32[valid * 128 + 8] = Float.isNaN(odd) ? 1f : odd;
      oddQ.f32[valid * 128 + 9] = Float.isNaN(odd) ? 1f : odd;
      assertFalse(BitTableKernel.applies(oddQ, docs), "query value " + odd);
      if (Float.isFinite(odd)) {
        assertMatchesReference(oddQ, docs, "query value " + odd);
        continue;
      }
      PairKernel.Worker w = new VectorKernel().bind(oddQ, docs).newWorker();
      for (int j = 0; j < docs.rows; j++) {
        if (docs.validCount[j] > 0) {
          w.load(j);
          assertEquals((float) ReferenceKernel.maxSim(oddQ, 2, docs, j, null, 0), w.score(2, null, 0),
              "query value " + odd + " document " + j);
        }
      }
    }
    Tokens wide = random(r, DType.FLOAT32, 1, 80, 1024, false, false);
    assertFalse(BitTableKernel.applies(wide, random(r, DType.BINARY, 2, 10, 1024, false, false)),
        "tables over the cache budget");
    // the budget is counted at 16 lanes on every machine: four queries of 8 tokens at d = 128 fill it, a fifth
    // passes it (at 8 lanes five would still fit, and the same call would round otherwise on an AVX2 machine)
    Tokens bits = random(r, DType.BINARY, 2, 10, 128, false, false);
    assertTrue(BitTableKernel.applies(random(r, DType.FLOAT32, 4, 8, 128, false, false), bits), "four queries");
    assertFalse(BitTableKernel.applies(random(r, DType.FLOAT32, 5, 8, 128, false, false), bits), "five queries");
  }

  private static int firstValid(Tokens t, int row) {
    for (int s = 0; s < t.rowLength[row]; s++) {
      if (t.isValid(row, s)) {
        return s;
      }
    }
    throw new IllegalStateException("row " + row + " has no valid token");
  }

  /**
   * One short query takes the tables at awkward d (1, 3, 9, 33, 127, 200) and at magnitudes just under the bound
   * (sum |q| = 0.9 x MAX_VALUE / 4 per token), and scores as the reference does.
   */
  @Test
  void shortQueriesTakeTheTablesAtAwkwardWidthsAndLargeMagnitudes() {
    SplittableRandom r = new SplittableRandom(23);
    for (int d : new int[] {1, 3, 9, 33, 127, 200}) {
      Tokens docs = random(r, DType.BINARY, 4, 20, d, true, true);
      Tokens q = random(r, DType.FLOAT32, 1, 3, d, false, false); // 3 x 0.9 / 4 of MAX_VALUE: the score fits
      assertTrue(BitTableKernel.applies(q, docs), "d=" + d);
      assertMatchesReference(q, docs, "tables d=" + d);
      for (int t = 0; t < 3; t++) {
        double absolute = 0;
        for (int k = 0; k < d; k++) {
          absolute += Math.abs(q.f32[t * d + k]);
        }
        double factor = 0.9 * Float.MAX_VALUE / 4 / absolute;
        for (int k = 0; k < d; k++) {
          q.f32[t * d + k] = (float) (q.f32[t * d + k] * factor);
        }
      }
      assertTrue(BitTableKernel.applies(q, docs), "d=" + d + " near the bound");
      assertMatchesReference(q, docs, "tables d=" + d + " near the bound");
    }
  }

  @Test
  void fp8NanBytesInWholeVectorsMakeTheScoreNan() {
    int d = 64;
    byte[] bytes = new byte[2 * d];
    for (int k = 0; k < bytes.length; k++) {
      bytes[k] = (byte) 0x38; // 1.0
    }
    bytes[d + 40] = (byte) 0xff;
    Tokens docs = new Tokens(DType.FLOAT8_E4M3, d, 1, new int[] {0, 1}, new int[] {1, 1}, 2, null, null, null,
        bytes, null, null);
    float[] ones = new float[d];
    java.util.Arrays.fill(ones, 1f);
    Tokens q = new Tokens(DType.FLOAT32, d, 1, new int[] {0}, new int[] {1}, 1, null, ones, null, null);
    PairKernel.Worker w = new VectorKernel().bind(q, docs).newWorker();
    w.load(0);
    assertEquals(d, w.score(0, null, 0), 0f);
    w.load(1);
    assertTrue(Float.isNaN(w.score(0, null, 0)));
  }

  /**
   * One bit on both sides with a tiny or zero query scale against huge document scales (and the reverse): every
   * element product and every score is inside fp32, so no pair may overflow to infinity or turn NaN on the way.
   */
  @Test
  void oneBitPairsOfHugeAndTinyScalesStayFinite() {
    SplittableRandom r = new SplittableRandom(11);
    float[] small = {0f, -0f, Float.MIN_VALUE, 1e-38f, -1e-38f, 1e-5f};
    float[] huge = {3e38f, -3e38f, Float.MAX_VALUE, -Float.MAX_VALUE, 0f, 1f};
    for (int d : new int[] {1, 2, 7, 32, 33, 100, 513}) {
      for (boolean swap : new boolean[] {false, true}) {
        Tokens q = withScales(bits(r, 3, 19, d), r, swap ? huge : small);
        Tokens docs = withScales(bits(r, 4, 23, d), r, swap ? small : huge);
        assertMatchesReference(q, docs, "d=" + d + (swap ? " huge query scales" : " huge document scales"));
      }
    }
  }

  /**
   * Query and document scales whose products pass fp32's range (the kernels' exact per-pair path, where a zero
   * dot product stays 0): each query's first token has scale MAX_VALUE and only zero values (int8, fp8), so its
   * exact best is 0 against documents of scale 3e38 (one bit has no zero token: the test above covers its
   * path); every score is the reference's and every argmax a token whose dot product is the reference's best.
   */
  @Test
  void scaleProductsPastFp32KeepZeroDotProductsAtZero() {
    SplittableRandom r = new SplittableRandom(13);
    float[] queryScales = {0f, -0f, 1e-38f, 1e-30f, -1e-30f};
    float[] docScales = {3e38f, -3e38f, Float.MAX_VALUE, 1e-30f, 0f};
    for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3}) {
      for (int d : new int[] {1, 8, 33, 64}) {
        Tokens docs = withScales(random(r, type, 4, 9, d, true, false), r, docScales);
        Tokens q = withScales(random(r, type, 3, 7, d, false, false), r, queryScales);
        for (int i = 0; i < q.rows; i++) {
          int first = q.rowStart[i];
          q.scales[first] = Float.MAX_VALUE;
          java.util.Arrays.fill(q.s8, first * d, (first + 1) * d, (byte) 0);
        }
        PairKernel.Worker fast = new VectorKernel().bind(q, docs).newWorker();
        int[] want = new int[q.maxRowLength];
        int[] got = new int[q.maxRowLength];
        for (int j = 0; j < docs.rows; j++) {
          if (docs.validCount[j] == 0) {
            continue;
          }
          fast.load(j);
          for (int i = 0; i < q.rows; i++) {
            String pair = type + " d=" + d + " query " + i + " document " + j;
            double ref = ReferenceKernel.maxSim(q, i, docs, j, want, 0);
            float score = fast.score(i, got, 0);
            assertEquals(ref, score, 1e-5 * magnitude(q, i, docs, j) + 1e-30, pair);
            for (int s = 0; s < q.rowLength[i]; s++) {
              double best = dot(q, q.rowStart[i] + s, docs, docs.rowStart[j] + want[s]);
              double chosen = dot(q, q.rowStart[i] + s, docs, docs.rowStart[j] + got[s]);
              assertTrue(docs.isValid(j, got[s]) && Math.abs(best - chosen) <= 1e-5 * Math.abs(best) + 1e-30,
                  pair + " slot " + s + ": argmax " + got[s] + " (dot " + chosen + "), reference " + want[s]);
            }
          }
        }
      }
    }
  }

  private static Tokens withScales(Tokens t, SplittableRandom r, float[] pick) {
    float[] scales = new float[t.storedTokens];
    for (int i = 0; i < scales.length; i++) {
      scales[i] = pick[r.nextInt(pick.length)];
    }
    return new Tokens(t.dtype, t.dim, t.paddedLength, t.rowStart, t.rowLength, t.storedTokens, t.mask, null, null,
        t.s8, null, scales);
  }

  /** Every byte value under scales of every kind, scaled and as stored, equals the scalar codec's bit for bit. */
  @Test
  void theExpansionEqualsTheCodecBitForBit() {
    int d = 256;
    float[] scales = {0.37f, -2.5f, 0f, 1e30f, 3e38f, 1e-30f, Float.MIN_VALUE, Float.NaN, Float.POSITIVE_INFINITY};
    byte[] all = new byte[scales.length * d];
    for (int k = 0; k < all.length; k++) {
      all[k] = (byte) k;
    }
    for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
      int tokens = (int) (all.length / type.bytesPerToken(d));
      Tokens t = new Tokens(type, d, tokens, new int[] {0}, new int[] {tokens}, tokens, null, null, null, all, null,
          java.util.Arrays.copyOf(scales, tokens));
      float[] out = new float[tokens * d];
      Dequantizer.of(t).copy(0, tokens, out, 0);
      float[] stored = new float[tokens * d];
      Dequantizer.stored(t).copy(0, tokens, stored, 0);
      for (int i = 0; i < tokens; i++) {
        for (int k = 0; k < d; k++) {
          float want = t.element(i, k);
          float got = out[i * d + k];
          assertTrue(Float.floatToIntBits(want) == Float.floatToIntBits(got),
              type + " token " + i + " dim " + k + ": want " + want + ", got " + got);
          assertTrue(Float.floatToIntBits(t.stored(i, k)) == Float.floatToIntBits(stored[i * d + k]),
              type + " token " + i + " dim " + k + " as stored: want " + t.stored(i, k) + ", got " + stored[i * d + k]);
        }
      }
    }
  }

  /**
   * e4m3 runs without a NaN code take the expansion that skips the NaN test; a run with one code, in its last token
   * only, takes the other: both equal the codec bit for bit (a NaN as any NaN: its sign and payload mean nothing),
   * copied from a token past the first, over whole vectors and tails, from a heap array and from native memory.
   */
  @Test
  void e4m3RunsWithAndWithoutNanCodesEqualTheCodec() {
    SplittableRandom r = new SplittableRandom(20);
    for (int d : new int[] {1, 33, 128, 513}) {
      for (boolean nanInLastToken : new boolean[] {false, true}) {
        int tokens = 40;
        byte[] b = new byte[tokens * d];
        for (int k = 0; k < b.length; k++) {
          int v;
          do {
            v = r.nextInt(256);
          } while ((v & 0x7f) == 0x7f);
          b[k] = (byte) v;
        }
        if (nanInLastToken) {
          b[b.length - 1 - r.nextInt(d)] = (byte) (r.nextBoolean() ? 0x7f : 0xff);
        }
        float[] scales = new float[tokens];
        for (int i = 0; i < tokens; i++) {
          scales[i] = (float) (r.nextDouble(-4, 4));
        }
        MemorySegment mapped = Arena.ofAuto().allocate(b.length);
        MemorySegment.copy(b, 0, mapped, ValueLayout.JAVA_BYTE, 0, b.length);
        Tokens heap = new Tokens(DType.FLOAT8_E4M3, d, tokens, new int[] {0}, new int[] {tokens}, tokens, null, null,
            null, b, null, scales);
        Tokens offHeap = new Tokens(DType.FLOAT8_E4M3, d, tokens, new int[] {0}, new int[] {tokens}, tokens, null,
            null, null, null, mapped, scales);
        for (Tokens t : new Tokens[] {heap, offHeap}) {
          int from = 3, count = tokens - from;
          float[] out = new float[count * d];
          Dequantizer.of(t).copy(from, count, out, 0);
          float[] stored = new float[count * d];
          Dequantizer.stored(t).copy(from, count, stored, 0);
          for (int i = 0; i < count; i++) {
            for (int k = 0; k < d; k++) {
              String where = (t == heap ? "heap" : "off heap") + ", d " + d + ", NaN code " + nanInLastToken
                  + ", token " + (from + i) + " dim " + k;
              assertEquals(Float.floatToIntBits(t.element(from + i, k)), Float.floatToIntBits(out[i * d + k]),
                  where);
              assertEquals(Float.floatToIntBits(t.stored(from + i, k)),
                  Float.floatToIntBits(stored[i * d + k]), where + " as stored");
            }
          }
        }
      }
    }
  }

  private static Tokens bits(SplittableRandom r, int n, int l, int d) {
    int bytes = (d + 7) / 8;
    byte[] b = new byte[n * l * bytes];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) r.nextInt(4); // few distinct tokens: many ties
    }
    return new Tokens(DType.BINARY, d, l, starts(n, l), lengths(n, l), n * l, null, null, null, b, null, null);
  }

  private static void assertMatchesReference(Tokens q, Tokens docs, String where) {
    PairKernel.Worker fast = new VectorKernel().bind(q, docs).newWorker();
    int[] want = new int[q.maxRowLength];
    int[] got = new int[q.maxRowLength];
    for (int j = 0; j < docs.rows; j++) {
      if (docs.validCount[j] == 0) {
        continue; // the driver never loads a document without valid tokens
      }
      fast.load(j);
      for (int i = 0; i < q.rows; i++) {
        java.util.Arrays.fill(got, -1);
        double ref = ReferenceKernel.maxSim(q, i, docs, j, want, 0);
        float score = fast.score(i, got, 0);
        double tol = 1e-5 * magnitude(q, i, docs, j) + 1e-30;
        String pair = where + " query " + i + " document " + j;
        assertEquals(ref, score, tol, pair);
        for (int s = 0; s < q.rowLength[i]; s++) {
          if (q.isValid(i, s) && want[s] != got[s]) {
            double a = dot(q, q.rowStart[i] + s, docs, docs.rowStart[j] + want[s]);
            double b = dot(q, q.rowStart[i] + s, docs, docs.rowStart[j] + got[s]);
            assertTrue(got[s] >= 0 && docs.isValid(j, got[s]) && Math.abs(a - b) <= tol,
                pair + " slot " + s + ": argmax " + got[s] + " (dot " + b + "), reference " + want[s] + " (dot " + a + ")");
          }
        }
      }
    }
  }

  private static double dot(Tokens q, int qt, Tokens d, int dt) {
    double s = 0;
    for (int k = 0; k < q.dim; k++) {
      s += q.value(qt, k) * d.value(dt, k);
    }
    return s;
  }

  /** Sum over valid query tokens of the largest sum of |q||d| over valid document tokens. */
  private static double magnitude(Tokens q, int i, Tokens d, int j) {
    double total = 0;
    for (int s = 0; s < q.rowLength[i]; s++) {
      if (!q.isValid(i, s)) {
        continue;
      }
      double best = 0;
      for (int t = 0; t < d.rowLength[j]; t++) {
        if (d.isValid(j, t)) {
          double m = 0;
          for (int k = 0; k < q.dim; k++) {
            m += Math.abs(q.value(q.rowStart[i] + s, k) * d.value(d.rowStart[j] + t, k));
          }
          best = Math.max(best, m);
        }
      }
      total += best;
    }
    return total;
  }

  private static int[] starts(int n, int l) {
    int[] s = new int[n];
    for (int i = 0; i < n; i++) {
      s[i] = i * l;
    }
    return s;
  }

  private static int[] lengths(int n, int l) {
    int[] s = new int[n];
    java.util.Arrays.fill(s, l);
    return s;
  }

  /**
   * {@code n} rows of {@code l} tokens; masked: a random mask with one all-masked row and one row of a single
   * valid token, random row lengths otherwise full. Quantized: any byte (no fp8 NaN code), scales null or
   * random with zeros and negatives.
   */
  private static Tokens random(SplittableRandom r, DType type, int n, int l, int d, boolean masked, boolean segment) {
    int stored = n * l;
    boolean[] mask = null;
    int[] lengths = lengths(n, l);
    if (masked) {
      mask = new boolean[stored];
      for (int t = 0; t < stored; t++) {
        mask[t] = r.nextInt(10) < 7;
      }
      java.util.Arrays.fill(mask, 0, l, false);
      java.util.Arrays.fill(mask, l, 2 * l, false);
      mask[l + r.nextInt(l)] = true;
      lengths[n - 1] = 1 + r.nextInt(l);
    }
    if (type == DType.FLOAT32) {
      float[] f = new float[stored * d];
      for (int k = 0; k < f.length; k++) {
        f[k] = (float) (r.nextGaussian() * 0.5);
      }
      return new Tokens(type, d, l, starts(n, l), lengths, stored, mask, f, null, null);
    }
    byte[] b = new byte[(int) (stored * type.bytesPerToken(d))];
    for (int k = 0; k < b.length; k++) {
      int v = r.nextInt(256);
      b[k] = (byte) (type == DType.FLOAT8_E4M3 && (v & 0x7f) == 0x7f ? v ^ 1 : v);
    }
    float[] scales = null;
    if (r.nextInt(3) > 0) {
      scales = new float[stored];
      for (int t = 0; t < stored; t++) {
        int pick = r.nextInt(8);
        scales[t] = pick == 0 ? 0f : (float) ((pick == 1 ? -1 : 1) * (0.25 + r.nextDouble()) / (type == DType.INT8 ? 64 : 4));
      }
    }
    MemorySegment seg = null;
    if (segment) {
      seg = Arena.ofAuto().allocate(b.length + 1L).asSlice(1, b.length); // unaligned on purpose
      MemorySegment.copy(MemorySegment.ofArray(b), 0, seg, 0, b.length);
      b = null;
    }
    return new Tokens(type, d, l, starts(n, l), lengths, stored, mask, null, null, b, seg, scales);
  }
}
