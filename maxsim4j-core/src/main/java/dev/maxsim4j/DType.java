package dev.maxsim4j;

/**
 * Element type of token embeddings. Scores and accumulation are always fp32 (the reference backend
 * accumulates in float64); half-precision inputs are widened to fp32 in registers, never rounded further.
 */
public enum DType {
  /** IEEE 754 binary32. */
  FLOAT32(4),
  /** IEEE 754 binary16 ("half"), stored as {@code short} bit patterns. */
  FLOAT16(2),
  /** bfloat16 (the upper 16 bits of a binary32), stored as {@code short} bit patterns. */
  BFLOAT16(2);

  private final int byteSize;

  DType(int byteSize) {
    this.byteSize = byteSize;
  }

  /** Bytes per element. */
  public int byteSize() {
    return byteSize;
  }

  /** Widens one stored element (a {@code short} bit pattern for the half types) to fp32. */
  public float widen(short bits) {
    return switch (this) {
      case FLOAT16 -> Float.float16ToFloat(bits);
      case BFLOAT16 -> Float.intBitsToFloat((bits & 0xffff) << 16);
      case FLOAT32 -> throw new IllegalStateException("FLOAT32 is not stored as short bits");
    };
  }

  /** Widens every element of {@code bits} (bit patterns of this half type) to fp32: a new array. */
  public float[] widen(short[] bits) {
    Arguments.nonNull(bits, "bits");
    requireHalf();
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
   */
  public short[] narrow(float[] values) {
    Arguments.nonNull(values, "values");
    requireHalf();
    short[] out = new short[values.length];
    for (int i = 0; i < values.length; i++) {
      out[i] = narrow(values[i]);
    }
    return out;
  }

  private void requireHalf() {
    if (this == FLOAT32) {
      throw new IllegalStateException("FLOAT32 is not stored as short bits; use FLOAT16 or BFLOAT16");
    }
  }

  /** Rounds an fp32 value to this half type, to nearest even; NaN stays NaN. */
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
      case FLOAT32 -> throw new IllegalStateException("FLOAT32 is not stored as short bits");
    };
  }
}
