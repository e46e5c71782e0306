package dev.maxsim4j;

/**
 * Element type of token embeddings. Scores are fp32 and dot products accumulate in fp32 (the reference backend's in
 * float64, and the CPU backends score a pair again in float64 where fp32 would pass its range); half-precision
 * inputs are widened exactly to fp32, never rounded further.
 *
 * <p>The quantized types ({@link #INT8}, {@link #FLOAT8_E4M3}, {@link #BINARY}) store each token as bytes plus
 * one fp32 scale: the token's value is {@code scale x q} for its stored values {@code q} (scale 1 when none is
 * given). A quantized batch scores as MaxSim on its dequantized vectors, each product exact and the sums in fp32
 * (within fp32 rounding of, not bit for bit, an fp32 copy's scores). Training inputs stay {@link #FLOAT32},
 * {@link #FLOAT16} or {@link #BFLOAT16}.
 */
public enum DType {
  /** IEEE 754 binary32. */
  FLOAT32(32),
  /** IEEE 754 binary16 ("half"), stored as {@code short} bit patterns. */
  FLOAT16(16),
  /** bfloat16 (the upper 16 bits of a binary32), stored as {@code short} bit patterns. */
  BFLOAT16(16),
  /** Signed 8-bit integers {@code -128..127} (symmetric: value = scale x q), one byte per dimension. */
  INT8(8),
  /**
   * OCP 8-bit floating point E4M3 ("e4m3fn", safetensors {@code F8_E4M3}): 1 sign, 4 exponent (bias 7) and 3
   * mantissa bits, no infinities, largest finite value 448, {@code 0x7f}/{@code 0xff} are NaN.
   */
  FLOAT8_E4M3(8),
  /**
   * One bit per dimension, eight dimensions per byte, most significant bit first (NumPy {@code packbits}
   * order): bit 1 is +1, bit 0 is -1. A token of {@code d} dimensions takes {@code ceil(d / 8)} bytes; the
   * padding bits of its last byte are ignored.
   */
  BINARY(1);

  private final int bits;

  DType(int bits) {
    this.bits = bits;
  }

  /**
   * Bytes per element.
   *
   * @throws IllegalStateException for {@link #BINARY}, whose elements are bits: use {@link #bytesPerToken}
   */
  public int byteSize() {
    if (this == BINARY) {
      throw new IllegalStateException("BINARY stores 8 dimensions per byte; use bytesPerToken(dim)");
    }
    return bits / 8;
  }

  /** Bytes one token of {@code dim} dimensions takes in this type ({@code ceil(dim / 8)} for BINARY). */
  public long bytesPerToken(int dim) {
    if (dim < 0) {
      throw new IllegalArgumentException("dim = " + dim + "; expected dim >= 0");
    }
    return ((long) dim * bits + 7) / 8;
  }

  /** Whether this type stores bytes plus a per-token scale: {@link #INT8}, {@link #FLOAT8_E4M3}, {@link #BINARY}. */
  public boolean isQuantized() {
    return bits <= 8;
  }

  /**
   * Widens one stored element (a {@code short} bit pattern for the half types) to fp32.
   *
   * @throws IllegalArgumentException on a type other than {@link #FLOAT16} and {@link #BFLOAT16}
   */
  public float widen(short bits) {
    return switch (this) {
      case FLOAT16 -> Float.float16ToFloat(bits);
      case BFLOAT16 -> Float.intBitsToFloat((bits & 0xffff) << 16);
      default -> throw notHalf("widen");
    };
  }

  /**
   * Widens every element of {@code bits} (bit patterns of this half type) to fp32: a new array.
   *
   * @throws IllegalArgumentException on a type other than {@link #FLOAT16} and {@link #BFLOAT16}
   */
  public float[] widen(short[] bits) {
    Arguments.nonNull(bits, "bits");
    requireHalf("widen");
    float[] out = new float[bits.length];
    for (int i = 0; i < bits.length; i++) {
      out[i] = widen(bits[i]);
    }
    return out;
  }

  /**
   * Rounds every element of {@code values} to this half type as {@link #narrow(float)} does (to nearest
   * even, NaN stays NaN, overflow becomes infinity): a new array of bit patterns, e.g. for
   * {@link TokenBatch#ofHalfs}.
   *
   * @throws IllegalArgumentException on a type other than {@link #FLOAT16} and {@link #BFLOAT16}
   */
  public short[] narrow(float[] values) {
    Arguments.nonNull(values, "values");
    requireHalf("narrow");
    short[] out = new short[values.length];
    for (int i = 0; i < values.length; i++) {
      out[i] = narrow(values[i]);
    }
    return out;
  }

  private void requireHalf(String method) {
    if (this != FLOAT16 && this != BFLOAT16) {
      throw notHalf(method);
    }
  }

  /** Only the half types are stored as short bits; the type a call is made on counts as its first argument. */
  private IllegalArgumentException notHalf(String method) {
    return new IllegalArgumentException(this + "." + method + ": " + this + " is not stored as short bits; expected"
        + " FLOAT16 or BFLOAT16");
  }

  /**
   * Rounds an fp32 value to this half type, to nearest even; NaN stays NaN.
   *
   * @throws IllegalArgumentException on a type other than {@link #FLOAT16} and {@link #BFLOAT16}
   */
  public short narrow(float value) {
    return switch (this) {
      case FLOAT16 -> Float.floatToFloat16(value);
      case BFLOAT16 -> {
        int bits = Float.floatToRawIntBits(value);
        if (Float.isNaN(value)) {
          yield (short) ((bits >>> 16) | 0x0040); // keep it a quiet NaN after truncation
        }
        int roundingBias = 0x7fff + ((bits >>> 16) & 1);
        yield (short) ((bits + roundingBias) >>> 16);
      }
      default -> throw notHalf("narrow");
    };
  }
}
