package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.internal.Quantization;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** The quantized types' codecs, factories, {@link TokenBatch#quantize} and their errors. */
class QuantizationTest {

  @Test
  void e4m3DecodesTheOcpValues() {
    assertEquals(0f, Quantization.E4M3[0x00], 0f);
    assertEquals(Math.scalb(1f, -9), Quantization.E4M3[0x01], 0f); // smallest subnormal
    assertEquals(7 * Math.scalb(1f, -9), Quantization.E4M3[0x07], 0f); // largest subnormal
    assertEquals(Math.scalb(1f, -6), Quantization.E4M3[0x08], 0f); // smallest normal
    assertEquals(1f, Quantization.E4M3[0x38], 0f);
    assertEquals(448f, Quantization.E4M3[0x7e], 0f);
    assertEquals(-448f, Quantization.E4M3[0xfe], 0f);
    assertTrue(Float.isNaN(Quantization.E4M3[0x7f]));
    assertTrue(Float.isNaN(Quantization.E4M3[0xff]));
  }

  @Test
  void e4m3DecodedFromItsBitsIsTheTablesValueBitForBit() {
    for (int b = 0; b < 256; b++) {
      assertEquals(Float.floatToRawIntBits(Quantization.E4M3[b]),
          Float.floatToRawIntBits(Quantization.e4m3((byte) b)), "code " + b);
    }
  }

  @Test
  void e4m3EncodeRoundTripsEveryFiniteCodeAndRoundsToNearestEven() {
    for (int b = 0; b < 256; b++) {
      if ((b & 0x7f) == 0x7f || b == 0x80) {
        continue; // NaN; -0 encodes back as -0 (0x80) only through its sign: checked below
      }
      assertEquals((byte) b, Quantization.encodeE4m3(Quantization.E4M3[b]), "code " + b);
    }
    assertEquals((byte) 0x80, Quantization.encodeE4m3(-0f));
    // halfway between 1 (0x38, even) and 1.125 (0x39): to 0x38; between 1.125 and 1.25 (0x3a): to 0x3a
    assertEquals((byte) 0x38, Quantization.encodeE4m3(1.0625f));
    assertEquals((byte) 0x3a, Quantization.encodeE4m3(1.1875f));
    assertEquals((byte) 0x7e, Quantization.encodeE4m3(1e6f), "saturates at 448");
    assertEquals((byte) 0xfe, Quantization.encodeE4m3(-460f));
    assertEquals((byte) 0x7f, Quantization.encodeE4m3(Float.NaN));
  }

  @Test
  void e4m3EncodeIsTheNearestCodeTiesToEven() {
    for (int c = 0; c < 0x7e; c++) {
      float mid = (Quantization.E4M3[c] + Quantization.E4M3[c + 1]) / 2; // exact: few mantissa bits
      assertEquals((byte) ((c & 1) == 0 ? c : c + 1), Quantization.encodeE4m3(mid), "midpoint above code " + c);
      assertEquals((byte) (0x80 | ((c & 1) == 0 ? c : c + 1)), Quantization.encodeE4m3(-mid), "negative midpoint");
    }
    java.util.SplittableRandom rnd = new java.util.SplittableRandom(5);
    for (int i = 0; i < 200_000; i++) {
      float x = (float) Math.scalb(rnd.nextDouble(), rnd.nextInt(-14, 10));
      int best = 0;
      for (int c = 1; c <= 0x7e; c++) {
        double dc = Math.abs(Quantization.E4M3[c] - (double) x);
        double db = Math.abs(Quantization.E4M3[best] - (double) x);
        if (dc < db || (dc == db && (c & 1) == 0)) {
          best = c;
        }
      }
      assertEquals((byte) best, Quantization.encodeE4m3(x), "x = " + x);
    }
  }

  @Test
  void bytesPerTokenAndByteSize() {
    assertEquals(128, DType.INT8.bytesPerToken(128));
    assertEquals(16, DType.BINARY.bytesPerToken(128));
    assertEquals(1, DType.BINARY.bytesPerToken(3));
    assertEquals(2, DType.BINARY.bytesPerToken(9));
    assertEquals(512, DType.FLOAT32.bytesPerToken(128));
    assertEquals(1, DType.FLOAT8_E4M3.byteSize());
    assertThrows(IllegalStateException.class, DType.BINARY::byteSize);
    assertThrows(IllegalStateException.class, () -> TokenBatch.ofFloats(new float[1], 1, 1, 1).toByteArray());
    assertTrue(DType.BINARY.isQuantized() && DType.INT8.isQuantized() && !DType.BFLOAT16.isQuantized());
  }

  @Test
  void storedValuesDequantizeWithTheirScale() {
    TokenBatch i8 = TokenBatch.ofBytes(DType.INT8, new byte[] {-128, 127, 3}, new float[] {0.5f}, 1, 1, 3);
    assertArrayEquals(new float[] {-64f, 63.5f, 1.5f}, i8.toFloatArray(), 0f);
    TokenBatch fp8 = TokenBatch.ofBytes(DType.FLOAT8_E4M3, new byte[] {0x38, (byte) 0xb8}, null, 1, 1, 2);
    assertArrayEquals(new float[] {1f, -1f}, fp8.toFloatArray(), 0f);
    // 0b1010_0000 0b1xxx_xxxx for d = 9: +1 -1 +1 -1 -1 -1 -1 -1 +1; the padding bits are ignored
    TokenBatch bits = TokenBatch.ofBytes(DType.BINARY, new byte[] {(byte) 0xa0, (byte) 0xff}, new float[] {2f},
        1, 1, 9);
    assertArrayEquals(new float[] {2, -2, 2, -2, -2, -2, -2, -2, 2}, bits.toFloatArray(), 0f);
    assertEquals(-2f, bits.get(0, 0, 7), 0f);
    assertArrayEquals(new float[] {2f}, bits.scales(), 0f);
    assertArrayEquals(new float[] {1f}, fp8.scales(), 0f);
  }

  @Test
  void quantizeKeepsLayoutAndBoundsTheError() {
    RandomBatches r = new RandomBatches();
    TokenBatch f = r.packed(DType.FLOAT32, 5, 0, 9, 37, true);
    float[] x = f.toFloatArray();
    for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
      TokenBatch q = f.quantize(type);
      assertEquals(type, q.dtype(), r.toString());
      TokenBatch again = TokenBatch.packedBytes(type, q.toByteArray(), q.scales(), q.offsets(), 37);
      assertArrayEquals(q.toFloatArray(), again.toFloatArray(), 0f, r + " toByteArray and scales rebuild the batch");
      assertArrayEquals(f.offsets(), q.offsets(), r.toString());
      float[] y = q.toFloatArray();
      float[] scales = q.scales();
      for (int t = 0; t < scales.length; t++) {
        double absMax = 0;
        double absSum = 0;
        for (int k = 0; k < 37; k++) {
          absMax = Math.max(absMax, Math.abs(x[t * 37 + k]));
          absSum += Math.abs(x[t * 37 + k]);
        }
        for (int k = 0; k < 37; k++) {
          int e = t * 37 + k;
          switch (type) {
            case INT8 -> assertEquals(x[e], y[e], absMax / 127 * 0.5001, r + " int8 within half a step");
            case FLOAT8_E4M3 -> assertEquals(x[e], y[e], Math.abs(x[e]) / 16 + absMax / 448 * Math.scalb(1.0, -9),
                r + " fp8 within half an ulp");
            default -> {
              assertEquals(absSum / 37, scales[t], 1e-6 * absSum, r + " binary scale is the mean magnitude");
              assertEquals(x[e] >= 0 ? scales[t] : -scales[t], y[e], 0f, r + " binary keeps the sign");
            }
          }
        }
      }
      for (int i = 0; i < f.size(); i++) {
        for (int t = 0; t < f.length(i); t++) {
          assertEquals(f.isValid(i, t), q.isValid(i, t), r + " mask kept");
        }
      }
    }
  }

  /**
   * A batch that scores can be quantized: junk (NaN, infinities) in masked or padding slots, which no score reads,
   * is stored as zeros; finite values there are kept; a valid token's NaN is still refused by name.
   */
  @Test
  void quantizeStoresJunkInSlotsNoScoreReadsAsZeros() {
    float nan = Float.NaN;
    float inf = Float.POSITIVE_INFINITY;
    // row 0: a valid token, a masked NaN; row 1: a valid token, padding of infinity past its length
    TokenBatch padded = TokenBatch.ofFloats(new float[] {1, -2, nan, 3, 4, 5, inf, -inf}, 2, 2, 2)
        .withLengths(new int[] {2, 1}).withMask(new boolean[] {true, false, true, true});
    TokenBatch packed = TokenBatch.packedFloats(new float[] {1, -2, 7, 8, 4, 5, nan, 1}, new int[] {0, 2, 4}, 2)
        .withMask(new boolean[] {true, false, true, false});
    TokenBatch q = TokenBatch.ofFloats(new float[] {1, 1}, 1, 1, 2);
    try (MaxSim maxSim = MaxSim.builder().backend("reference").build()) {
      for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
        TokenBatch p = padded.quantize(type);
        float[] stored = p.toFloatArray();
        for (int k = 0; k < 2; k++) {
          assertEquals(0f, Math.abs(stored[2 + k]), 0f, type + ": the masked NaN slot, dim " + k);
          assertEquals(0f, Math.abs(stored[6 + k]), 0f, type + ": the padding slot of infinities, dim " + k);
        }
        float[][] scores = maxSim.scores(q, p);
        TokenBatch clean = TokenBatch.ofFloats(new float[] {1, -2, 0, 0, 4, 5, 0, 0}, 2, 2, 2)
            .withLengths(new int[] {2, 1}).withMask(new boolean[] {true, false, true, true});
        float[][] expected = maxSim.scores(q, clean.quantize(type));
        assertEquals(expected[0][0], scores[0][0], 0f, type + ": row 0");
        assertEquals(expected[0][1], scores[0][1], 0f, type + ": row 1");
        TokenBatch k = packed.quantize(type);
        float[] kept = k.toFloatArray();
        if (type != DType.BINARY) {
          assertEquals(8f, kept[3], 0.05f, type + ": a masked finite slot keeps its values");
        }
        assertEquals(0f, Math.abs(kept[6]), 0f, type + ": the masked NaN slot of the packed batch");
      }
      // requantizing: a masked e4m3 token of a huge scale, whose int8 scale passes fp32's largest value
      TokenBatch huge = TokenBatch.ofBytes(DType.FLOAT8_E4M3, new byte[] {0x38, 0x38, 0x7e, 0x7e},
          new float[] {1f, Float.MAX_VALUE}, 1, 2, 2);
      float[] requantized = huge.withMask(new boolean[] {true, false}).quantize(DType.INT8).toFloatArray();
      assertEquals(0f, requantized[2], 0f, "the masked token of a scale past fp32's");
      assertThrows(IllegalArgumentException.class, () -> huge.quantize(DType.INT8), "valid, it is refused");
      IllegalArgumentException valid = assertThrows(IllegalArgumentException.class,
          () -> TokenBatch.packedFloats(new float[] {1, -2, 7, 8, 4, 5, nan, 1}, new int[] {0, 2, 4}, 2)
              .withMask(new boolean[] {true, false, true, true}).quantize(DType.INT8));
      assertTrue(valid.getMessage().contains("stored token 3 holds NaN"), valid.getMessage());
    }
  }

  /**
   * Each stored value is the code nearest to the exact quotient value / scale, rounded once: a quotient first
   * rounded to a float may land on the midpoint between two codes (6.50000019 became 6.5, then 6). Found by a
   * hostile test.
   */
  @Test
  void quantizeRoundsTheExactQuotientOnce() {
    assertEquals(7, TokenBatch.ofFloats(new float[] {241.48384f, 12.359409f}, 1, 1, 2).quantize(DType.INT8)
        .toByteArray()[1], "12.359409 / (241.48384 / 127) = 6.50000019");
    byte e4m3 = TokenBatch.ofFloats(new float[] {851.8485f, 23.768095f}, 1, 1, 2).quantize(DType.FLOAT8_E4M3)
        .toByteArray()[1];
    assertEquals(13f, Quantization.E4M3[e4m3], "23.768095 / (851.8485 / 448) = 12.50000044");
    java.util.SplittableRandom rnd = new java.util.SplittableRandom(11);
    int dim = 16;
    float[] x = new float[4096 * dim];
    for (int i = 0; i < x.length; i++) {
      x[i] = (float) Math.scalb(rnd.nextDouble(-1, 1), rnd.nextInt(-20, 20));
    }
    TokenBatch f = TokenBatch.ofFloats(x, 4096, 1, dim);
    for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3}) {
      TokenBatch q = f.quantize(type);
      byte[] codes = q.toByteArray();
      float[] scales = q.scales();
      for (int e = 0; e < x.length; e++) {
        double exact = (double) x[e] / scales[e / dim];
        double got = type == DType.INT8 ? codes[e] : Quantization.E4M3[codes[e] & 0xff];
        double step = type == DType.INT8 ? 1 : Math.max(Math.ulp((float) got) * 0x1p20, 0x1p-9);
        double other = got + Math.signum(exact - got) * step;
        assertTrue(Math.abs(exact - got) <= Math.abs(exact - other), type + " value " + x[e] + " at scale "
            + scales[e / dim] + ": code " + got + " is not the nearest to " + exact);
      }
    }
  }

  /**
   * Tokens whose largest magnitude sits at fp32's edges (MAX_VALUE, 3e38, 1e-38, subnormals down to
   * MIN_VALUE): every dequantized value stays finite and within the type's error bound (a scale rounded past
   * MAX_VALUE / 127 dequantized 127 to infinity; one that underflowed clipped or zeroed the token).
   */
  @Test
  void quantizeKeepsTokensAtFp32sEdgesFiniteAndWithinTheirBound() {
    float min = Float.MIN_VALUE;
    float[] tops = {Float.MAX_VALUE, Math.nextDown(Float.MAX_VALUE), 3e38f, 1e-38f, Float.MIN_NORMAL, 1e-40f,
        1000 * min, 190 * min, 127 * min, 5 * min, min};
    java.util.SplittableRandom r = new java.util.SplittableRandom(3);
    int d = 9;
    float[] x = new float[tops.length * d];
    for (int t = 0; t < tops.length; t++) {
      x[t * d] = r.nextBoolean() ? tops[t] : -tops[t];
      for (int k = 1; k < d; k++) {
        x[t * d + k] = (float) (tops[t] * (2 * r.nextDouble() - 1));
      }
    }
    TokenBatch f = TokenBatch.ofFloats(x, 1, tops.length, d);
    for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3}) {
      float[] y = f.quantize(type).toFloatArray();
      for (int t = 0; t < tops.length; t++) {
        for (int k = 0; k < d; k++) {
          int e = t * d + k;
          String where = type + " token of absmax " + tops[t] + " dim " + k + ": " + x[e] + " -> " + y[e];
          assertTrue(Float.isFinite(y[e]), where);
          double bound = type == DType.INT8
              ? tops[t] / 127.0 * 0.5001 + min
              : Math.abs(x[e]) / 16 + tops[t] / 448.0 * Math.scalb(1.0, -9) + min;
          assertEquals(x[e], y[e], bound, where);
        }
      }
    }
  }

  @Test
  void quantizeKeepsZerosExactAndRefusesNonFiniteValues() {
    TokenBatch zeros = TokenBatch.ofFloats(new float[4], 1, 1, 4);
    for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
      assertArrayEquals(new float[4], zeros.quantize(type).toFloatArray(), 0f, type.toString());
    }
    TokenBatch nan = TokenBatch.ofFloats(new float[] {0, 1, Float.NaN, 2}, 2, 1, 2);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> nan.quantize(DType.INT8));
    assertTrue(e.getMessage().contains("stored token 1") && e.getMessage().contains("NaN"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> zeros.quantize(DType.BFLOAT16));
    assertTrue(e.getMessage().contains("BFLOAT16"), e.getMessage());
  }

  @Test
  void badQuantizedInputIsNamed() {
    assertMessage(() -> TokenBatch.ofBytes(DType.INT8, new byte[5], null, 1, 2, 3), "data holds 5 bytes; expected 6");
    TokenBatch.ofBytes(DType.BINARY, new byte[4], null, 2, 1, 9); // 2 bytes per token of 9 bits
    assertMessage(() -> TokenBatch.ofBytes(DType.BINARY, new byte[3], null, 2, 1, 9), "data holds 3 bytes");
    assertMessage(() -> TokenBatch.ofBytes(DType.FLOAT32, new byte[4], null, 1, 1, 1), "dtype FLOAT32 given for byte[]");
    assertMessage(() -> TokenBatch.ofBytes(DType.INT8, new byte[2], new float[] {1}, 1, 2, 1),
        "scales has length 1; expected 2");
    assertMessage(() -> TokenBatch.ofBytes(DType.INT8, new byte[2], new float[] {1, Float.NaN}, 1, 2, 1),
        "scales[1] = NaN");
    assertMessage(() -> TokenBatch.packedBytes(DType.INT8, new byte[6], new float[] {1, Float.POSITIVE_INFINITY},
        new int[] {0, 2}, 3), "scales[1] = Infinity");
    assertMessage(() -> TokenBatch.packedBytes(DType.INT8, new byte[7], null, new int[] {0, 2}, 3),
        "not a whole number of INT8 tokens");
    assertMessage(() -> TokenBatch.ofHalfs(DType.INT8, new short[1], 1, 1, 1), "use ofBytes");
    assertMessage(() -> TokenBatch.fromMemorySegment(MemorySegment.ofArray(new float[2]), DType.FLOAT32,
        new float[] {1}, 1, 1, 2), "scales given for dtype FLOAT32");
  }

  @Test
  void memorySegmentsHoldQuantizedBytes() {
    try (Arena arena = Arena.ofShared()) {
      MemorySegment m = arena.allocate(6);
      m.copyFrom(MemorySegment.ofArray(new byte[] {1, 2, 3, -1, -2, -3}));
      TokenBatch padded = TokenBatch.fromMemorySegment(m, DType.INT8, new float[] {1, 2}, 2, 1, 3);
      assertArrayEquals(new float[] {1, 2, 3, -2, -4, -6}, padded.toFloatArray(), 0f);
      assertArrayEquals(new byte[] {1, 2, 3, -1, -2, -3}, padded.toByteArray());
      TokenBatch packed = TokenBatch.packedFromMemorySegment(m, DType.INT8, null, new int[] {0, 0, 2}, 3);
      assertEquals(0, packed.length(0));
      assertArrayEquals(new float[] {1, 2, 3, -1, -2, -3}, packed.toFloatArray(), 0f);
      try (MaxSim m2 = MaxSim.builder().backend("vector").threads(1).build()) {
        float[][] s = m2.scores(TokenBatch.ofFloats(new float[] {1, 0, 0}, 1, 1, 3), padded);
        assertArrayEquals(new float[] {1, -2}, s[0], 0f);
      }
    }
  }

  @Test
  void trainingRefusesQuantizedInputs() {
    TokenBatch q = TokenBatch.ofFloats(new float[] {1, 0}, 1, 1, 2);
    TokenBatch d = TokenBatch.ofBytes(DType.INT8, new byte[] {1, 2}, null, 1, 1, 2);
    try (MaxSim m = MaxSim.builder().backend("vector").threads(1).build()) {
      assertMessage(() -> m.scoresForTraining(q, d), "documents are INT8; training takes FLOAT32");
      assertMessage(() -> m.lossAllPairs(d, q, Loss.contrastive(1f)), "queries are INT8");
    }
  }

  private static void assertMessage(org.junit.jupiter.api.function.Executable call, String part) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    assertTrue(e.getMessage().contains(part), "message \"" + e.getMessage() + "\" lacks \"" + part + "\"");
  }
}
