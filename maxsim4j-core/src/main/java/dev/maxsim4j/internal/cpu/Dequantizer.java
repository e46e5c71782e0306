package dev.maxsim4j.internal.cpu;

import dev.maxsim4j.internal.Tokens;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * Expands quantized tokens into fp32, {@code scale x q}, a vector of lanes at a time: int8 by widening, e4m3 by
 * moving its exponent and mantissa bits into fp32 position (subnormals and the NaN codes exact), one bit per
 * dimension by selecting {@code +scale} or {@code -scale}. Each value equals {@link Tokens#element}'s bit for bit
 * ({@link Tokens#stored}'s for the copier of stored values). A copier serves one thread (it stages mapped bytes in
 * a buffer of its own): each kernel worker makes its own.
 */
final class Dequantizer implements Tokens.RunCopier {
  private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
  private static final int V = S.length();
  private static final VectorSpecies<Integer> INTS = VectorSpecies.of(int.class, S.vectorShape());
  /** V bytes; null below 8 lanes, where no byte shape of that size exists and the scalar codec is used. */
  private static final VectorSpecies<Byte> BYTES =
      V >= 8 ? VectorSpecies.of(byte.class, VectorShape.forBitSize(V * 8)) : null;
  /** Lane k tests bit V-1-k of V bits read most significant first: NumPy packbits order. */
  private static final IntVector LANE_BITS = IntVector.fromArray(INTS, laneBits(), 0);
  /** The widest byte vectors (64 bytes with 512-bit vectors), for the test of a run's bytes for NaN codes. */
  private static final VectorSpecies<Byte> WIDE_BYTES = ByteVector.SPECIES_PREFERRED;
  private static final int E4M3_NAN = 0x7f;
  /** An e4m3 byte shifted left by 20 and masked: its sign at fp32's bit 31, its exponent and mantissa at 26-20. */
  private static final int E4M3_FIELDS = 0x87f00000;
  /** e4m3's exponent bias is 7, fp32's 127: the shifted fields read as fp32 are the e4m3 value times 2^-120. */
  private static final float REBIAS = 0x1p120f;

  private final Tokens tokens;
  private final MemorySegment src;
  private final int dim;
  /** Whether each value is multiplied by its token's scale; without, the stored values {@code q} come out. */
  private final boolean scaled;
  /** Mapped tokens' bytes, copied here before they are expanded (this copier serves one thread). */
  private byte[] staged = new byte[0];
  private long stagedFrom;

  private Dequantizer(Tokens tokens, boolean scaled) {
    this.tokens = tokens;
    this.src = tokens.s8 != null ? MemorySegment.ofArray(tokens.s8) : tokens.segment;
    this.dim = tokens.dim;
    this.scaled = scaled;
  }

  /** The copier for {@code tokens} of a quantized type: {@code scale x q}. */
  static Tokens.RunCopier of(Tokens tokens) {
    return BYTES == null ? tokens::copyTokens : new Dequantizer(tokens, true);
  }

  /** The copier of {@code tokens}' stored values {@code q}, before their scales ({@link Tokens#copyStored}). */
  static Tokens.RunCopier stored(Tokens tokens) {
    return BYTES == null ? tokens::copyStored : new Dequantizer(tokens, false);
  }

  private float scale(int token) {
    return scaled ? tokens.scale(token) : 1f;
  }

  private static int[] laneBits() {
    int[] bits = new int[V];
    for (int k = 0; k < V; k++) {
      bits[k] = 1 << (V - 1 - k);
    }
    return bits;
  }

  @Override
  public void copy(int token, int count, float[] dst, int off) {
    switch (tokens.dtype) {
      case INT8 -> int8(token, count, dst, off);
      case FLOAT8_E4M3 -> e4m3(token, count, dst, off);
      case BINARY -> bits(token, count, dst, off);
      default -> throw new IllegalStateException(tokens.dtype + " is not quantized");
    }
  }

  private static FloatVector int8(ByteVector b) {
    // through int lanes: a direct byte-to-float conversion across shapes compiles to slower code
    return (FloatVector) b.convertShape(VectorOperators.B2I, INTS, 0).convert(VectorOperators.I2F, 0);
  }

  /**
   * e4m3 bytes as fp32: the sign-extended byte shifted once puts every field in place, and the product with 2^120
   * is exact, subnormal codes included (their fp32 fields are subnormal too: slow on CPUs that take a microcode
   * assist for such operands, which only codes below 2^-6 meet). The NaN codes are the one case the fields miss:
   * {@code nanCodes} says whether any byte may be one.
   */
  private static FloatVector e4m3(ByteVector b, boolean nanCodes) {
    IntVector x = (IntVector) b.convertShape(VectorOperators.B2I, INTS, 0);
    IntVector fields = x.lanewise(VectorOperators.LSHL, 20).and(E4M3_FIELDS);
    if (nanCodes) {
      fields = fields.blend(Float.floatToRawIntBits(Float.NaN), x.and(E4M3_NAN).compare(VectorOperators.EQ, E4M3_NAN));
    }
    return fields.reinterpretAsFloats().mul(REBIAS);
  }

  /** Whether any of {@code n} bytes from {@code from} is an e4m3 NaN code: tested once a run, a vector at a time. */
  private static boolean hasNanCode(byte[] bytes, int from, int n) {
    int i = 0;
    for (; i + WIDE_BYTES.length() <= n; i += WIDE_BYTES.length()) {
      ByteVector b = ByteVector.fromArray(WIDE_BYTES, bytes, from + i);
      if (b.and((byte) E4M3_NAN).compare(VectorOperators.EQ, (byte) E4M3_NAN).anyTrue()) {
        return true;
      }
    }
    for (; i < n; i++) {
      if ((bytes[from + i] & E4M3_NAN) == E4M3_NAN) {
        return true;
      }
    }
    return false;
  }

  /** {@code v}, times the token's scale where this copier scales, into {@code dst} at {@code at}. */
  private void put(FloatVector v, float scale, float[] dst, int at) {
    (scaled ? v.mul(scale) : v).intoArray(dst, at);
  }

  /** The dimensions past the last whole vector, through the scalar codec. */
  private void tail(int token, float[] dst, int o, int from) {
    for (int k = from; k < dim; k++) {
      dst[o + k] = scaled ? tokens.element(token, k) : tokens.stored(token, k);
    }
  }

  /**
   * The stored bytes of {@code count} tokens from {@code token}: the heap array itself, or mapped bytes copied to
   * this copier's buffer by one bulk copy (a vector load from a mapping whose file shrank crashes the JVM once
   * compiled, where the copy's fault is an error); {@link #stagedFrom} is the byte offset of its index 0.
   */
  private byte[] stage(int token, int count, long tokenBytes) {
    if (tokens.s8 != null) {
      stagedFrom = 0;
      return tokens.s8;
    }
    int n = Math.toIntExact(count * tokenBytes);
    if (staged.length < n) {
      staged = new byte[n];
    }
    stagedFrom = token * tokenBytes;
    MemorySegment.copy(src, ValueLayout.JAVA_BYTE, stagedFrom, staged, 0, n);
    return staged;
  }

  private void int8(int token, int count, float[] dst, int off) {
    byte[] bytes = stage(token, count, dim);
    int dim = this.dim;
    int whole = dim - dim % V;
    for (int t = 0; t < count; t++) {
      int base = (int) ((long) (token + t) * dim - stagedFrom);
      float scale = scale(token + t);
      int o = off + t * dim;
      for (int k = 0; k < whole; k += V) {
        put(int8(ByteVector.fromArray(BYTES, bytes, base + k)), scale, dst, o + k);
      }
      tail(token + t, dst, o, whole);
    }
  }

  private void e4m3(int token, int count, float[] dst, int off) {
    byte[] bytes = stage(token, count, dim);
    int dim = this.dim;
    int whole = dim - dim % V;
    boolean nanCodes = hasNanCode(bytes, (int) ((long) token * dim - stagedFrom), count * dim);
    for (int t = 0; t < count; t++) {
      int base = (int) ((long) (token + t) * dim - stagedFrom);
      float scale = scale(token + t);
      int o = off + t * dim;
      for (int k = 0; k < whole; k += V) {
        put(e4m3(ByteVector.fromArray(BYTES, bytes, base + k), nanCodes), scale, dst, o + k);
      }
      tail(token + t, dst, o, whole);
    }
  }

  private void bits(int token, int count, float[] dst, int off) {
    long tokenBytes = tokens.tokenBytes;
    byte[] bytes = stage(token, count, tokenBytes);
    int dim = this.dim;
    int whole = dim - dim % V;
    for (int t = 0; t < count; t++) {
      int base = (int) ((token + t) * tokenBytes - stagedFrom);
      float scale = scale(token + t);
      FloatVector plus = FloatVector.broadcast(S, scale);
      FloatVector minus = FloatVector.broadcast(S, -scale);
      int o = off + t * dim;
      for (int k = 0; k < whole; k += V) {
        int at = base + (k >>> 3);
        int w = 0;
        for (int i = 0; i < V / 8; i++) {
          w = (w << 8) | (bytes[at + i] & 0xff);
        }
        VectorMask<Float> one = IntVector.broadcast(INTS, w).and(LANE_BITS).compare(VectorOperators.NE, 0).cast(S);
        minus.blend(plus, one).intoArray(dst, o + k);
      }
      tail(token + t, dst, o, whole);
    }
  }
}
