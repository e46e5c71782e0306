package dev.maxsim4j.spark;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import java.io.Serializable;

/**
 * Rows of tokens packed in one type, serializable so that a query set can be broadcast to the executors;
 * {@link #toBatch()} views them as a packed {@link TokenBatch} without copying. Exactly one of {@code floats},
 * {@code halfs} and {@code bytes} is set, per {@code type}; {@code mask} is null when every token is valid.
 */
final class PackedTokens implements Serializable {
  // a class, not a record: Kryo (spark.serializer) cannot write a record, whose fields refuse Unsafe's offsets
  private static final long serialVersionUID = 1L;
  private final DType type;
  private final int dim;
  private final int[] offsets;
  private final float[] floats;
  private final short[] halfs;
  private final byte[] bytes;
  private final float[] scales;
  private final boolean[] mask;

  PackedTokens(DType type, int dim, int[] offsets, float[] floats, short[] halfs, byte[] bytes, float[] scales,
      boolean[] mask) {
    this.type = type;
    this.dim = dim;
    this.offsets = offsets;
    this.floats = floats;
    this.halfs = halfs;
    this.bytes = bytes;
    this.scales = scales;
    this.mask = mask;
  }

  DType type() {
    return type;
  }

  int dim() {
    return dim;
  }

  int[] offsets() {
    return offsets;
  }

  float[] floats() {
    return floats;
  }

  short[] halfs() {
    return halfs;
  }

  byte[] bytes() {
    return bytes;
  }

  float[] scales() {
    return scales;
  }

  boolean[] mask() {
    return mask;
  }

  int rows() {
    return offsets.length - 1;
  }

  TokenBatch toBatch() {
    TokenBatch batch = switch (type) {
      case FLOAT32 -> TokenBatch.packedFloats(floats, offsets, dim);
      case FLOAT16, BFLOAT16 -> TokenBatch.packedHalfs(type, halfs, offsets, dim);
      default -> TokenBatch.packedBytes(type, bytes, scales, offsets, dim);
    };
    return mask == null ? batch : batch.withMask(mask);
  }
}
