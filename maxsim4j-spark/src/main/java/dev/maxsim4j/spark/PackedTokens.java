package dev.maxsim4j.spark;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import java.io.Serializable;

/**
 * Rows of tokens packed in one type, serializable so that a query set can be broadcast to the executors;
 * {@link #toBatch()} views them as a packed {@link TokenBatch} without copying. Exactly one of {@code floats},
 * {@code halfs} and {@code bytes} is set, per {@code type}; {@code mask} is null when every token is valid.
 */
record PackedTokens(DType type, int dim, int[] offsets, float[] floats, short[] halfs, byte[] bytes,
    float[] scales, boolean[] mask) implements Serializable {

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
