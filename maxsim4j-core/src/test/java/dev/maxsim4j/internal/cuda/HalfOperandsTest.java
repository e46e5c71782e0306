package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.internal.Internals;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cuda.plan.GpuCapabilities;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The fp16 copy of bf16 queries: each valid token's values times its power of two are exact in fp16 and its weight
 * undoes the power; tokens whose exponents span more than 32, or hold a subnormal value, leave the batch without a
 * copy; masked tokens do not count; where the copy lies in a device upload.
 */
class HalfOperandsTest {
  private static final int DIM = 8;

  /** Two rows of 2 tokens of d = 8, every value {@code fill} but those given as (index, value) pairs. */
  private static Tokens batch(float fill, float... at) {
    float[] v = new float[2 * 2 * DIM];
    Arrays.fill(v, fill);
    for (int i = 0; i < at.length; i += 2) {
      v[(int) at[i]] = at[i + 1];
    }
    return Internals.tokens(TokenBatch.ofHalfs(DType.BFLOAT16, bits(v), 2, 2, DIM));
  }

  private static short[] bits(float[] v) {
    short[] b = new short[v.length];
    for (int i = 0; i < v.length; i++) {
      b[i] = DType.BFLOAT16.narrow(v[i]);
    }
    return b;
  }

  /** The copy of {@code t}, or null where it does not fit. */
  private static MemorySegment copy(Tokens t) {
    assertTrue(HalfOperands.eligible(t));
    MemorySegment out = MemorySegment.ofArray(new byte[Math.toIntExact(HalfOperands.bytes(t))]);
    out.fill((byte) 0x5a); // whatever the staging memory held
    return HalfOperands.write(t, out) ? out : null;
  }

  private static float weight(Tokens t, MemorySegment copy, int token) {
    return copy.get(ValueLayout.JAVA_FLOAT_UNALIGNED, HalfOperands.weightsOffset(t) + 4L * token);
  }

  private static float half(MemorySegment copy, long i) {
    return Float.float16ToFloat(copy.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i));
  }

  /** Every valid value of {@code t} equals its fp16 value times its token's weight, which is a power of two. */
  private static void assertExact(Tokens t, MemorySegment copy) {
    for (int row = 0; row < t.rows; row++) {
      t.forEachValidRun(row, null, (first, count, n) -> {
        for (int token = first; token < first + count; token++) {
          float w = weight(t, copy, token);
          assertEquals(0, Float.floatToRawIntBits(w) & 0x7fffff, "token " + token + "'s weight " + w);
          for (int i = 0; i < t.dim; i++) {
            float v = t.element(token, i);
            assertEquals(v, half(copy, (long) token * t.dim + i) * w, "token " + token + " dim " + i);
          }
        }
      });
    }
  }

  @Test
  void everyTokenOfASpanOfAtMost32ExponentsGoesThroughExactly() {
    Random rnd = new Random(7);
    for (int scale : new int[] {0, -17, -30, -60, -100, 15, 20, 100, 126}) {
      float[] v = new float[4 * 3 * 33];
      for (int i = 0; i < v.length; i++) {
        v[i] = Math.scalb((float) rnd.nextGaussian(), scale);
      }
      Tokens t = Internals.tokens(TokenBatch.ofHalfs(DType.BFLOAT16, bits(v), 4, 3, 33));
      MemorySegment copy = copy(t);
      assertNotNull(copy, "values near 2^" + scale);
      assertExact(t, copy);
    }
    Tokens unit = batch(0.1f, 3, 1000f, 4, Math.scalb(1f, -17));
    MemorySegment copy = copy(unit);
    assertExact(unit, copy);
    for (int token = 0; token < 4; token++) {
      assertEquals(1f, weight(unit, copy, token), "values from 2^-17 to 2^15 keep their scale");
    }
  }

  /** Every bf16 value but the subnormals, each a token of its own, goes through exactly. */
  @Test
  void everyBf16ValueGoesThroughExactly() {
    short[] all = new short[65536];
    int n = 0;
    for (int bits = 0; bits < 65536; bits++) {
      boolean subnormal = (bits & 0x7f80) == 0 && (bits & 0x7f) != 0;
      if (!subnormal) {
        all[n++] = (short) bits;
      }
    }
    Tokens t = Internals.tokens(TokenBatch.ofHalfs(DType.BFLOAT16, Arrays.copyOf(all, n), n, 1, 1));
    MemorySegment copy = copy(t);
    assertNotNull(copy);
    for (int token = 0; token < n; token++) {
      float v = t.element(token, 0);
      float got = half(copy, token) * weight(t, copy, token);
      assertEquals(Float.floatToIntBits(v), Float.floatToIntBits(got), "bf16 0x" + Integer.toHexString(all[token]));
    }
  }

  @Test
  void eachTokenHasItsOwnPower() {
    // token 0 near 2^-60, token 1 near 2^90, tokens 2 and 3 near 1: one row spans 150 exponents, each token 0
    float[] v = new float[4 * DIM];
    for (int i = 0; i < v.length; i++) {
      v[i] = Math.scalb(1.5f + i / 64f, i < DIM ? -60 : i < 2 * DIM ? 90 : 0);
    }
    Tokens t = Internals.tokens(TokenBatch.ofHalfs(DType.BFLOAT16, bits(v), 1, 4, DIM));
    MemorySegment copy = copy(t);
    assertNotNull(copy);
    assertExact(t, copy);
    assertEquals(Math.scalb(1f, -43), weight(t, copy, 0));
    assertEquals(Math.scalb(1f, 75), weight(t, copy, 1));
    assertEquals(1f, weight(t, copy, 2));
  }

  @Test
  void widerSpansAndSubnormalsLeaveNoCopy() {
    assertNotNull(copy(batch(1f, 3, Math.scalb(1f, -32)))); // 2^0 .. 2^-32 in token 0
    assertNull(copy(batch(1f, 3, Math.scalb(1f, -33)))); // 2^0 .. 2^-33
    float far = Math.scalb(1f, -40);
    assertNotNull(copy(batch(1f, 8, far, 9, far, 10, far, 11, far, 12, far, 13, far, 14, far, 15, far))); // token 1
    assertNull(copy(batch(1f, 5, Float.MIN_NORMAL / 4)));
  }

  @Test
  void zerosAndNonFiniteValuesGoThroughWithoutCounting() {
    Tokens t = batch(1f, 5, Float.NaN, 6, Float.POSITIVE_INFINITY, 7, -0f, 9, Float.NEGATIVE_INFINITY);
    MemorySegment copy = copy(t);
    assertNotNull(copy);
    assertTrue(Float.isNaN(half(copy, 5)));
    assertEquals(Float.POSITIVE_INFINITY, half(copy, 6));
    assertEquals(0x8000, copy.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, 7) & 0xffff, "-0 stays -0");
    assertEquals(Float.NEGATIVE_INFINITY, half(copy, 9));
    MemorySegment zeros = copy(batch(0f));
    assertNotNull(zeros);
    assertEquals(1f, weight(batch(0f), zeros, 0));
  }

  @Test
  void maskedAndUnusedTokensDoNotCountAndAreZero() {
    Tokens t = batch(1f, 3, Math.scalb(1f, -60), 4, Float.MIN_NORMAL / 4); // token 0 holds both
    TokenBatch b = TokenBatch.ofHalfs(DType.BFLOAT16, t.s16, 2, 2, DIM);
    Tokens masked = Internals.tokens(b.withMask(new boolean[] {false, true, true, true}));
    MemorySegment copy = copy(masked);
    assertNotNull(copy);
    for (int i = 0; i < DIM; i++) {
      assertEquals(0, copy.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i), "masked token's dim " + i);
    }
    assertEquals(1f, weight(masked, copy, 0));
    assertExact(masked, copy);
    assertNotNull(copy(Internals.tokens(b.withLengths(new int[] {0, 2}))));
    assertNull(copy(Internals.tokens(b.withMask(new boolean[] {true, false, true, true}))));
  }

  @Test
  void batchesInNativeMemory() {
    short[] b = bits(new float[] {1f, Math.scalb(1f, -40), 1f, 1f});
    try (Arena arena = Arena.ofShared()) {
      MemorySegment s = arena.allocate(2L * b.length);
      MemorySegment.copy(b, 0, s, ValueLayout.JAVA_SHORT_UNALIGNED, 0, b.length);
      assertNull(copy(Internals.tokens(TokenBatch.fromMemorySegment(s, DType.BFLOAT16, 1, 2, 2))));
      MemorySegment.copy(bits(new float[] {1f, 0.5f, 0.25f, 3f}), 0, s, ValueLayout.JAVA_SHORT_UNALIGNED, 0, 4);
      Tokens t = Internals.tokens(TokenBatch.fromMemorySegment(s, DType.BFLOAT16, 1, 2, 2));
      assertExact(t, copy(t));
    }
  }

  @Test
  void onlyShortBf16RowsHeldOnTheHostAreEligible() {
    assertFalse(HalfOperands.eligible(Internals.tokens(TokenBatch.ofFloats(new float[] {1f, 2f}, 1, 1, 2))));
    assertFalse(HalfOperands.eligible(Internals.tokens(TokenBatch.ofHalfs(DType.FLOAT16, new short[2], 1, 1, 2))));
    assertFalse(HalfOperands.eligible(Internals.tokens(TokenBatch.ofHalfs(DType.BFLOAT16, new short[33], 1, 33, 1))));
    assertTrue(HalfOperands.eligible(Internals.tokens(TokenBatch.ofHalfs(DType.BFLOAT16, new short[32], 1, 32, 1))));
    int rows = (int) (HalfOperands.MAX_VALUES / 32 / 8) + 1; // one row past 2^20 values
    assertFalse(HalfOperands.eligible(Internals.tokens(
        TokenBatch.ofHalfs(DType.BFLOAT16, new short[rows * 32 * 8], rows, 32, 8))));
    // rows whose values live on the device only (a generated corpus)
    Tokens deviceOnly = new Tokens(DType.BFLOAT16, 8, 4, new int[] {0}, new int[] {4}, 4, null, null, null,
        MemorySegment.NULL);
    assertFalse(HalfOperands.eligible(deviceOnly));
    assertEquals(0, HalfOperands.bytes(deviceOnly));
    assertEquals(32, HalfOperands.MAX_SPAN);
  }

  /**
   * A call makes the copy for one query against 512 stored tokens of 8-bit documents per query value or more, in a
   * launch the rules give rule 20 (sm_90).
   */
  @Test
  void aCallMakesTheCopyForOneQueryAgainstManyDocumentTokens() {
    GpuCapabilities h200 = new GpuCapabilities(9, 0, 132, 227 * 1024, true, (module, entry, threads, shared) -> 4);
    GpuCapabilities ampere = new GpuCapabilities(8, 0, 108, 163 * 1024, true, (module, entry, threads, shared) -> 4);
    Tokens one = Internals.tokens(TokenBatch.ofHalfs(DType.BFLOAT16, new short[4 * 64], 1, 4, 64));
    Tokens two = Internals.tokens(TokenBatch.ofHalfs(DType.BFLOAT16, new short[2 * 4 * 64], 2, 4, 64));
    int tokens = HalfOperands.DOCUMENT_TOKENS_PER_VALUE * 4 * 64; // 1 x 2,048 x 64 tokens
    for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3}) {
      Tokens many = Internals.tokens(TokenBatch.ofBytes(type, new byte[tokens * 64], null, tokens / 64, 64, 64));
      Tokens few = Internals.tokens(TokenBatch.ofBytes(type, new byte[(tokens - 64) * 64], null, tokens / 64 - 1,
          64, 64));
      assertTrue(HalfOperands.pays(one, many, h200), type.toString());
      assertFalse(HalfOperands.pays(one, many, ampere), type + ": rule 20 runs on sm_90 only");
      assertFalse(HalfOperands.pays(one, few, h200), type + ": too few tiles to win back the host's pass");
      assertFalse(HalfOperands.pays(two, many, h200), type + ": several queries take query groups");
      assertTrue(HalfOperands.applies(two, few), type.toString());
    }
    Tokens bits = Internals.tokens(TokenBatch.ofBytes(DType.BINARY, new byte[tokens * 8], null, tokens / 64, 64,
        64));
    assertFalse(HalfOperands.applies(one, bits), "1-bit documents keep bf16 operands");
  }

  /** An upload of short bf16 rows carries the copy after its scales' place: fp16 values, then the weights. */
  @Test
  void anUploadCarriesTheCopyAsAnFp16View() {
    Tokens t = batch(0.25f, 3, Math.scalb(1f, 20));
    long region = DeviceTokens.dataRegion(t);
    long bytes = DeviceTokens.bytesFor(t, true);
    assertEquals(region + 3 * DeviceTokens.align(4L * t.rows) + HalfOperands.bytes(t), bytes);
    assertEquals(bytes - HalfOperands.bytes(t), DeviceTokens.bytesFor(t));
    MemorySegment metadata = MemorySegment.ofArray(new byte[Math.toIntExact(bytes - region)]);
    long device = 0x10000;
    assertNull(DeviceTokens.stageMetadata(t, device, metadata).halfOperands(), "no copy unless asked");
    DeviceTokens up = DeviceTokens.stageMetadata(t, device, metadata, true);
    DeviceTokens half = up.halfOperands();
    assertNotNull(half);
    assertNull(half.halfOperands());
    assertEquals(DType.FLOAT16, half.dtype());
    assertEquals(up.rowStart(), half.rowStart());
    assertEquals(up.validCount(), half.validCount());
    long at = half.data() - device - region;
    assertEquals(3 * DeviceTokens.align(4L * t.rows), at);
    assertEquals(half.data() + HalfOperands.weightsOffset(t), half.scales());
    assertEquals(Math.scalb(1f, 20), half(metadata.asSlice(at), 3) * metadata.get(ValueLayout.JAVA_FLOAT_UNALIGNED,
        half.scales() - device - region));
    assertNull(DeviceTokens.stageMetadata(batch(1f, 3, Math.scalb(1f, -40)), device, metadata, true).halfOperands());
    Tokens floats = Internals.tokens(TokenBatch.ofFloats(new float[8], 1, 1, 8));
    assertNull(DeviceTokens.stageMetadata(floats, device,
        MemorySegment.ofArray(new byte[Math.toIntExact(DeviceTokens.bytesFor(floats, true))]), true).halfOperands());
  }
}
