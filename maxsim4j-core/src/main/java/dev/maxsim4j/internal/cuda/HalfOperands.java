package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan;
import dev.maxsim4j.internal.cuda.plan.ForwardShape;
import dev.maxsim4j.internal.cuda.plan.GpuCapabilities;
import dev.maxsim4j.internal.cuda.plan.PairLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A bf16 query batch as fp16 operands, exactly: each valid token's values times a power of two 2^k of its own,
 * and the token's weight 2^-k, which the bulk-copy kernel (rule 20) applies to the token's max. A bf16 value has 8
 * significant bits, so 2^k v is exact in fp16 (normal or subnormal) when its exponent lies in [-17, 15]; one k
 * serves a token when the exponents of its nonzero finite values span at most {@link #MAX_SPAN} and none is
 * subnormal. k is the power of two closest to 1 that does it (0 for values from 2^-17 to 2^15). Why: an 8-bit
 * document word expands into fp16 operands in 5 instructions, into bf16 ones in 7. Products of exact operands
 * summed in fp32 scale by 2^k exactly, so the score is the bf16 one while each scaled dot product times its
 * document token's scale stays within fp32's normal range (it leaves it only for document scales beyond about
 * 2^96 or below 2^-100 together with query values far from 1).
 */
final class HalfOperands {
  /** The widest span of exponents one power of two fits into fp16's: from -17 to 15. */
  static final int MAX_SPAN = 15 + 17;
  /** The longest rows given a copy: rule 20's queries. */
  static final int MAX_LENGTH = 32;
  /** The most values given a copy: larger batches keep bf16 operands. */
  static final long MAX_VALUES = 1L << 20;
  /**
   * Stored document tokens a call needs per query value for its copy to pay: the copy costs a pass over the query's
   * values on the host, and the kernel gains a share of each 64-token tile's time, so a call pays from about 8 tiles
   * per query value (the measurements: docs/design/kernel-selection.md, rule 20).
   */
  static final int DOCUMENT_TOKENS_PER_VALUE = 512;

  private static final int BIAS = 127;

  private HalfOperands() {}

  /**
   * Whether {@code t} may get a copy: bf16 rows of at most 32 tokens, at most 2^20 values, held on the host (a
   * corpus generated on the device has none there).
   */
  static boolean eligible(Tokens t) {
    long values = (long) t.storedTokens * t.dim;
    return t.dtype == DType.BFLOAT16 && t.maxRowLength <= MAX_LENGTH && values <= MAX_VALUES
        && (t.s16 != null || (t.segment != null && t.segment.byteSize() >= 2 * values));
  }

  /** Whether rule 20 could read a copy of {@code queries} against {@code documents}: 8-bit documents. */
  static boolean applies(Tokens queries, Tokens documents) {
    return eligible(queries) && ForwardPlan.eightBit(documents.dtype);
  }

  /**
   * Whether a call of {@code queries} against {@code documents} on {@code gpu} makes the copy: one query (several
   * take rule 19's query groups, one per pair takes a document each) against {@link #DOCUMENT_TOKENS_PER_VALUE}
   * stored document tokens per query value or more, in a launch the rules give rule 20's kernel.
   */
  static boolean pays(Tokens queries, Tokens documents, GpuCapabilities gpu) {
    long values = (long) queries.storedTokens * queries.dim;
    if (queries.rows != 1 || documents.storedTokens < DOCUMENT_TOKENS_PER_VALUE * values
        || !applies(queries, documents)) {
      return false;
    }
    ForwardShape launch = new ForwardShape(PairLayout.ALL_PAIRS, 1, documents.rows, 0, documents.rows,
        queries.maxRowLength, documents.maxRowLength, queries.dim, DType.FLOAT16, documents.dtype, false, false);
    return ForwardPlan.plan(launch, gpu).family() == ForwardPlan.Family.QUANT_TMA;
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
    int values = t.storedTokens * t.dim;
    short[] bf16 = t.s16;
    if (bf16 == null) {
      bf16 = new short[values];
      MemorySegment.copy(t.segment, ValueLayout.JAVA_SHORT_UNALIGNED, 0, bf16, 0, values);
    }
    short[] half = new short[values];
    float[] weights = new float[t.storedTokens];
    java.util.Arrays.fill(weights, 1f);
    short[] from = bf16;
    boolean[] fits = {true};
    for (int row = 0; row < t.rows && fits[0]; row++) {
      t.forEachValidRun(row, null, (first, count, n) -> {
        for (int token = first; token < first + count && fits[0]; token++) {
          fits[0] = writeToken(from, token * t.dim, t.dim, half, weights, token);
        }
      });
    }
    MemorySegment.copy(half, 0, out, ValueLayout.JAVA_SHORT_UNALIGNED, 0, values);
    MemorySegment.copy(weights, 0, out, ValueLayout.JAVA_FLOAT_UNALIGNED, weightsOffset(t), t.storedTokens);
    return fits[0];
  }

  private static boolean writeToken(short[] bf16, int from, int dim, short[] half, float[] weights, int token) {
    int low = Integer.MAX_VALUE; // the lowest and highest biased exponent of a nonzero finite value
    int high = Integer.MIN_VALUE;
    for (int i = from; i < from + dim; i++) {
      int exponent = (bf16[i] >>> 7) & 0xff;
      if ((bf16[i] & 0x7fff) != 0 && exponent != 0xff) {
        low = Math.min(low, exponent);
        high = Math.max(high, exponent);
      }
    }
    if (high >= low && (low == 0 || high - low > MAX_SPAN)) {
      return false; // a subnormal value, or a span no power of two fits
    }
    int k = high < low ? 0 : Math.max(-17 - (low - BIAS), Math.min(0, 15 - (high - BIAS)));
    float power = Float.intBitsToFloat((BIAS + k) << 23); // k lies in [-112, 109]: a normal fp32 either way
    for (int i = from; i < from + dim; i++) {
      half[i] = Float.floatToFloat16(Float.intBitsToFloat(bf16[i] << 16) * power);
    }
    weights[token] = Float.intBitsToFloat((BIAS - k) << 23);
    return true;
  }
}
