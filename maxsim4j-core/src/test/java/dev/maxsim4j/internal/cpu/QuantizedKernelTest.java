package dev.maxsim4j.internal.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.Tokens;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The vector kernel on quantized tokens (its vectorised expansion of int8, e4m3 and one-bit documents, and
 * its popcount path when both sides are one bit) against the float64 reference kernel: every score within the
 * fp32 bound (relative 1e-5 of the sum over query tokens of the largest sum of |q||d|), every argmax the
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

  @Test
  void theExpansionEqualsTheCodecBitForBit() {
    int d = 256;
    byte[] all = new byte[3 * d];
    for (int k = 0; k < all.length; k++) {
      all[k] = (byte) k;
    }
    float[] scales = {0.37f, -2.5f, 0f};
    for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
      int tokens = (int) (all.length / type.bytesPerToken(d));
      Tokens t = new Tokens(type, d, tokens, new int[] {0}, new int[] {tokens}, tokens, null, null, null, all, null,
          java.util.Arrays.copyOf(scales, tokens));
      float[] out = new float[tokens * d];
      Dequantizer.of(t).copy(0, tokens, out, 0);
      for (int i = 0; i < tokens; i++) {
        for (int k = 0; k < d; k++) {
          float want = t.element(i, k);
          float got = out[i * d + k];
          assertTrue(Float.floatToIntBits(want) == Float.floatToIntBits(got),
              type + " token " + i + " dim " + k + ": want " + want + ", got " + got);
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
