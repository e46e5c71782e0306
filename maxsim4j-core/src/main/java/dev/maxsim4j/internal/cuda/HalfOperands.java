package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.Tokens;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A bf16 query batch as fp16 operands, exactly: each valid token's values times a power of two 2^k of its own,
 * and the token's weight 2^-k, which the bulk-copy kernel (rule 20) applies to the token's max. A bf16 value has 8
 * significant bits, so 2^k v is exact in fp16 (normal or subnormal) when its exponent lies in [-17, 15]; one k
 * serves a token when the exponents of its nonzero finite values span at most {@link #MAX_SPAN} and none is
 * subnormal. k is the power of two closest to 1 that does it (0 for values from 2^-17 to 2^15). Why: an 8-bit
 * document word expands into fp16 operands in 5 instructions, into bf16 ones in 7. Products of exact operands
 * summed in fp32 scale by 2^k exactly, so the score is the bf16 one.
 */
final class HalfOperands {
  /** The widest span of exponents one power of two fits into fp16's: from -17 to 15. */
  static final int MAX_SPAN = 15 + 17;
  /** The longest rows given a copy: rule 20's queries. */
  static final int MAX_LENGTH = 32;
  /** The most values given a copy, about a millisecond on one core: larger batches keep bf16 operands. */
  static final long MAX_VALUES = 1L << 20;

  private static final ValueLayout.OfShort S16 = ValueLayout.JAVA_SHORT_UNALIGNED;
  private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;
  private static final int BIAS = 127;

  private HalfOperands() {}

  /**
   * Whether {@code t} gets a copy if its tokens fit: bf16 rows of at most 32 tokens, at most 2^20 values, held on
   * the host (a corpus generated on the device has none there).
   */
  static boolean eligible(Tokens t) {
    long values = (long) t.storedTokens * t.dim;
    return t.dtype == DType.BFLOAT16 && t.maxRowLength <= MAX_LENGTH && values <= MAX_VALUES
        && (t.s16 != null || (t.segment != null && t.segment.byteSize() >= 2 * values));
  }

  /** Bytes of an eligible batch's copy ({@link #write}): the fp16 values, then one fp32 weight a token. */
  static long bytes(Tokens t) {
    return eligible(t) ? weightsOffset(t) + DeviceTokens.align(4L * t.storedTokens) : 0;
  }

  /** Where the weights start in the copy. */
  static long weightsOffset(Tokens t) {
    return DeviceTokens.align(2L * t.storedTokens * t.dim);
  }

  /**
   * Writes an eligible {@code t}'s copy into {@code out} ({@link #bytes} bytes): every valid token's values
   * times its 2^k in fp16 and its weight 2^-k; other stored tokens zero, weight 1. Returns false, the copy
   * unusable, where a valid token does not fit.
   */
  static boolean write(Tokens t, MemorySegment out) {
    out.fill((byte) 0);
    long weights = weightsOffset(t);
    for (int token = 0; token < t.storedTokens; token++) {
      out.set(F32, weights + 4L * token, 1f);
    }
    boolean[] fits = {true};
    for (int row = 0; row < t.rows && fits[0]; row++) {
      t.forEachValidRun(row, null, (first, count, n) -> {
        for (int token = first; token < first + count && fits[0]; token++) {
          fits[0] = writeToken(t, token, out, weights);
        }
      });
    }
    return fits[0];
  }

  private static boolean writeToken(Tokens t, int token, MemorySegment out, long weights) {
    long from = (long) token * t.dim;
    int low = Integer.MAX_VALUE; // the lowest and highest biased exponent of a nonzero finite value
    int high = Integer.MIN_VALUE;
    for (int i = 0; i < t.dim; i++) {
      int bits = value(t, from + i);
      int exponent = (bits >>> 7) & 0xff;
      if ((bits & 0x7fff) != 0 && exponent != 0xff) {
        low = Math.min(low, exponent);
        high = Math.max(high, exponent);
      }
    }
    if (high >= low && (low == 0 || high - low > MAX_SPAN)) {
      return false; // a subnormal value, or a span no power of two fits
    }
    int k = high < low ? 0 : Math.max(-17 - (low - BIAS), Math.min(0, 15 - (high - BIAS)));
    for (int i = 0; i < t.dim; i++) {
      float v = Float.intBitsToFloat(value(t, from + i) << 16);
      out.set(S16, 2 * (from + i), Float.floatToFloat16(Math.scalb(v, k)));
    }
    out.set(F32, weights + 4L * token, Math.scalb(1f, -k));
    return true;
  }

  private static int value(Tokens t, long i) {
    return (t.s16 != null ? t.s16[Math.toIntExact(i)] : t.segment.getAtIndex(S16, i)) & 0xffff;
  }
}
