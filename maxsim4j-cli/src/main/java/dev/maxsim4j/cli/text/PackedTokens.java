package dev.maxsim4j.cli.text;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.RunMemory;
import java.lang.foreign.MemorySegment;

/** A packed batch's tokens and offsets as arrays to write, built row by row without a padded copy. */
final class PackedTokens {

  private PackedTokens() {}

  /** Tokens {@code [T, d]} as bf16 or float32, off the heap so that T*d may pass 2^31. */
  static NdArray embeddings(String source, TokenBatch b, boolean bf16) {
    int d = b.dim();
    long tokens = b.offsets()[b.size()];
    int width = bf16 ? 2 : 4;
    MemorySegment data = RunMemory.arena().allocate(tokens * d * width, width);
    long at = 0;
    for (int i = 0; i < b.size(); i++) {
      int length = b.length(i);
      for (int t = 0; t < length; t++) {
        for (int k = 0; k < d; k++) {
          float v = b.get(i, t, k);
          if (bf16) {
            data.setAtIndex(NdArray.LE_SHORT, at++, DType.BFLOAT16.narrow(v));
          } else {
            data.setAtIndex(NdArray.LE_FLOAT, at++, v);
          }
        }
      }
    }
    return NdArray.ofSegment(source, bf16 ? NdArray.ElementType.BF16 : NdArray.ElementType.F32,
        new long[] {tokens, d}, data);
  }

  /** Offsets {@code [N+1]} as int64, as cu_seqlens are usually stored. */
  static NdArray offsets(String source, int[] offsets) {
    long[] wide = new long[offsets.length];
    for (int i = 0; i < offsets.length; i++) {
      wide[i] = offsets[i];
    }
    return NdArray.ofSegment(source, NdArray.ElementType.I64, new long[] {wide.length}, MemorySegment.ofArray(wide));
  }
}
