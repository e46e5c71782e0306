package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Random;
import org.apache.lucene.util.BytesRef;
import org.junit.jupiter.api.Test;

/** The stored layout of QuantizedLateInteractionField: what it writes, that it reads it back, what it refuses. */
class QuantizedLateInteractionFieldTest {
  private static final long SEED = new Random().nextLong();
  private static final DType[] TYPES = {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY};
  private static final ValueLayout.OfInt INT_LE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfFloat FLOAT_LE =
      ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  @Test
  void floatVectorsRoundTripAsTokenBatchQuantizesThem() {
    Random rnd = new Random(SEED);
    for (DType type : TYPES) {
      for (int d : new int[] {1, 3, 8, 33, 127, 513}) {
        for (int tokens : new int[] {1, 2, 37}) {
          float[][] v = gaussian(rnd, tokens, d);
          if (tokens > 1) {
            Arrays.fill(v[1], 0f); // a token of zeros stays zero
          }
          String what = type + " d=" + d + " T=" + tokens + " (seed " + SEED + "L)";
          BytesRef value = QuantizedLateInteractionField.encode(v, type);
          assertEquals(QuantizedLateInteractionField.HEADER + tokens * (type.bytesPerToken(d) + 4), value.length, what);
          MemorySegment bytes = MemorySegment.ofArray(value.bytes).asSlice(value.offset, value.length);
          assertEquals(1, value.bytes[value.offset], what + ": version");
          assertEquals(type == DType.INT8 ? 1 : type == DType.FLOAT8_E4M3 ? 2 : 3, value.bytes[value.offset + 1], what);
          assertEquals(d, bytes.get(INT_LE, 2), what + ": d");
          assertEquals(tokens, bytes.get(INT_LE, 6), what + ": T");
          TokenBatch expected = TokenBatch.of(new float[][][] {v}).quantize(type);
          TokenBatch decoded = QuantizedLateInteractionField.decode(value);
          assertEquals(type, decoded.dtype(), what);
          assertEquals(d, decoded.dim(), what);
          assertEquals(1, decoded.size(), what);
          assertEquals(tokens, decoded.validTokens(0), what);
          assertArrayEquals(expected.scales(), decoded.scales(), what + ": scales");
          long scalesAt = QuantizedLateInteractionField.HEADER + tokens * type.bytesPerToken(d);
          for (int t = 0; t < tokens; t++) {
            assertEquals(expected.scales()[t], bytes.get(FLOAT_LE, scalesAt + 4L * t), what + ": stored scale " + t);
            for (int k = 0; k < d; k++) {
              assertEquals(expected.get(0, t, k), decoded.get(0, t, k), 0f, what + ": token " + t + " dim " + k);
            }
          }
        }
      }
    }
  }

  /** Any bytes and finite scales (0 and negative included) are stored as given and read back as given. */
  @Test
  void rawBytesRoundTripExactly() {
    Random rnd = new Random(SEED + 1);
    for (DType type : TYPES) {
      for (int d : new int[] {1, 3, 33, 127, 513}) {
        int tokens = 1 + rnd.nextInt(20);
        int tokenBytes = (int) type.bytesPerToken(d);
        byte[] data = new byte[tokens * tokenBytes];
        rnd.nextBytes(data);
        for (int i = 0; i < data.length; i++) {
          if (type == DType.FLOAT8_E4M3 && (data[i] & 0x7f) == 0x7f) {
            data[i] = 0x7e; // not NaN, so the values compare
          }
          if (type == DType.BINARY && d % 8 != 0 && i % tokenBytes == tokenBytes - 1) {
            data[i] &= (byte) (0xff << (8 - d % 8)); // padding bits come back as 0
          }
        }
        float[] scales = new float[tokens];
        for (int t = 0; t < tokens; t++) {
          scales[t] = t % 5 == 3 ? 0f : (float) rnd.nextGaussian();
        }
        String what = type + " d=" + d + " (seed " + SEED + "L)";
        BytesRef value = QuantizedLateInteractionField.encode(type, data, scales, tokens, d);
        TokenBatch decoded = QuantizedLateInteractionField.decode(value);
        assertArrayEquals(scales, decoded.scales(), what);
        TokenBatch direct = TokenBatch.ofBytes(type, data, scales, 1, tokens, d);
        assertArrayEquals(direct.toFloatArray(), decoded.toFloatArray(), what);
        // a quantized batch encodes back to the same bytes (zero-scale tokens: any bits, all stored as 0)
        BytesRef again = QuantizedLateInteractionField.encode(decoded);
        float[] values = decoded.toFloatArray();
        float[] valuesAgain = QuantizedLateInteractionField.decode(again).toFloatArray();
        for (int i = 0; i < values.length; i++) {
          assertEquals(values[i], valuesAgain[i], 0f, what + ": value " + i); // a zero scale gives 0 or -0
        }
        for (int t = 0; t < tokens; t++) {
          if (scales[t] != 0f) {
            int at = QuantizedLateInteractionField.HEADER + t * tokenBytes;
            assertArrayEquals(Arrays.copyOfRange(value.bytes, at, at + tokenBytes),
                Arrays.copyOfRange(again.bytes, at, at + tokenBytes), what + ": token " + t);
          }
        }
      }
    }
  }

  /** A padded row stores only its valid tokens, in order. */
  @Test
  void maskedTokensAreNotStored() {
    Random rnd = new Random(SEED + 2);
    float[][] v = gaussian(rnd, 5, 11);
    TokenBatch row = TokenBatch.of(new float[][][] {v}).quantize(DType.FLOAT8_E4M3)
        .withMask(new boolean[][] {{true, false, true, true, false}});
    TokenBatch stored = QuantizedLateInteractionField.decode(QuantizedLateInteractionField.encode(row));
    assertEquals(3, stored.validTokens(0));
    int[] kept = {0, 2, 3};
    for (int t = 0; t < kept.length; t++) {
      assertEquals(row.scales()[kept[t]], stored.scales()[t]);
      for (int k = 0; k < 11; k++) {
        assertEquals(row.get(0, kept[t], k), stored.get(0, t, k), 0f, "token " + kept[t] + " dim " + k);
      }
    }
  }

  @Test
  void noScalesMeansOneAndNoTokensIsAllowed() {
    BytesRef value = QuantizedLateInteractionField.encode(DType.INT8, new byte[] {1, -2, 3, 4, 5, -128}, null, 2, 3);
    TokenBatch decoded = QuantizedLateInteractionField.decode(value);
    assertArrayEquals(new float[] {1, 1}, decoded.scales());
    assertArrayEquals(new float[] {1, -2, 3, 4, 5, -128}, decoded.toFloatArray());
    BytesRef empty = QuantizedLateInteractionField.encode(DType.BINARY, new byte[0], null, 0, 9);
    assertEquals(QuantizedLateInteractionField.HEADER, empty.length);
    assertEquals(0, QuantizedLateInteractionField.decode(empty).validTokens(0));
  }

  @Test
  void badValuesNameWhatIsWrong() {
    assertMessage(() -> QuantizedLateInteractionField.encode(DType.FLOAT32, new byte[4], null, 1, 1), "FLOAT32");
    assertMessage(() -> QuantizedLateInteractionField.encode(DType.INT8, new byte[5], null, 2, 3), "data has 5 bytes");
    assertMessage(() -> QuantizedLateInteractionField.encode(DType.INT8, new byte[6], new float[1], 2, 3),
        "scales has 1");
    assertMessage(() -> QuantizedLateInteractionField.encode(DType.INT8, new byte[6], new float[] {1, Float.NaN}, 2, 3),
        "scales[1] is NaN");
    // an e4m3 NaN code would score NaN against every query, first in every ranking
    assertMessage(() -> QuantizedLateInteractionField.encode(DType.FLOAT8_E4M3, new byte[] {0, 0, 0, 0, (byte) 0xff, 0},
        null, 2, 3), "data[4] = 0xff, an e4m3 NaN code (token 1, dimension 1)");
    byte[] slots = new byte[6];
    slots[5] = 0x7f; // slot 2, dimension 1, behind a masked slot 0: named by the batch's slot, not a compacted one
    TokenBatch withNaN = TokenBatch.ofBytes(DType.FLOAT8_E4M3, slots, null, 1, 3, 2)
        .withMask(new boolean[] {false, true, true});
    assertMessage(() -> QuantizedLateInteractionField.encode(withNaN), "tokens slot 2, dimension 1 holds an e4m3 NaN"
        + " code");
    assertMessage(() -> QuantizedLateInteractionField.encode(DType.INT8, new byte[0], null, 0, 0), "d = 0");
    assertMessage(() -> QuantizedLateInteractionField.encode(new float[0][], DType.INT8), "vectors is empty");
    assertMessage(() -> QuantizedLateInteractionField.encode(TokenBatch.of(new float[][][] {{{1f}}})), "FLOAT32");
    BytesRef good = QuantizedLateInteractionField.encode(DType.INT8, new byte[6], null, 2, 3);
    assertMessage(() -> QuantizedLateInteractionField.decode(new BytesRef(good.bytes, 0, 9)), "9 bytes");
    assertMessage(() -> QuantizedLateInteractionField.decode(new BytesRef(good.bytes, 0, good.length - 1)),
        "2 INT8 tokens of d = 3");
    byte[] version = good.bytes.clone();
    version[0] = 2;
    assertMessage(() -> QuantizedLateInteractionField.decode(new BytesRef(version)), "layout version 2");
    byte[] code = good.bytes.clone();
    code[1] = 9;
    assertMessage(() -> QuantizedLateInteractionField.decode(new BytesRef(code)), "type code 9");
    // a stored scale that is not finite (written by another writer, or a corrupt value) names its token and,
    // when gathered for rescoring, the field and document
    BytesRef scaled = QuantizedLateInteractionField.encode(DType.BINARY, new byte[2], new float[] {1, 2}, 2, 3);
    for (float bad : new float[] {Float.NaN, Float.POSITIVE_INFINITY}) {
      byte[] stored = scaled.bytes.clone();
      java.nio.ByteBuffer.wrap(stored).order(java.nio.ByteOrder.LITTLE_ENDIAN).putFloat(stored.length - 4, bad);
      assertMessage(() -> QuantizedLateInteractionField.decode(new BytesRef(stored)),
          "value: token 1 has scale " + bad);
      assertMessage(() -> new QuantizedTokenBytes().reset("tokens", 3).add(new BytesRef(stored), 7),
          "field tokens of doc 7: token 1 has scale " + bad);
    }
  }

  private static void assertMessage(org.junit.jupiter.api.function.Executable call, String part) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    assertTrue(e.getMessage().contains(part), e.getMessage() + " (expected to mention: " + part + ")");
  }

  static float[][] gaussian(Random rnd, int tokens, int d) {
    float[][] v = new float[tokens][d];
    for (float[] t : v) {
      for (int k = 0; k < d; k++) {
        t[k] = (float) rnd.nextGaussian();
      }
    }
    return v;
  }
}
