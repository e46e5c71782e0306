package dev.maxsim4j.cli.text;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import java.util.Arrays;

/** Packed token rows (fp32 or bf16) kept as arrays, so that a run of rows can be scored on its own. */
record PackedRows(float[] floats, short[] bf16, int[] offsets, int dim) {

  static PackedRows of(TokenBatch packed) {
    return new PackedRows(packed.toFloatArray(), null, packed.offsets(), packed.dim());
  }

  int size() {
    return offsets.length - 1;
  }

  /** Rows {@code from} (inclusive) to {@code to} (exclusive) as a batch of their own. */
  TokenBatch slice(int from, int to) {
    int[] o = new int[to - from + 1];
    for (int i = 0; i < o.length; i++) {
      o[i] = offsets[from + i] - offsets[from];
    }
    if (from == 0 && to == size()) {
      return floats != null ? TokenBatch.packedFloats(floats, o, dim)
          : TokenBatch.packedHalfs(DType.BFLOAT16, bf16, o, dim);
    }
    int a = offsets[from] * dim;
    int b = offsets[to] * dim;
    return floats != null ? TokenBatch.packedFloats(Arrays.copyOfRange(floats, a, b), o, dim)
        : TokenBatch.packedHalfs(DType.BFLOAT16, Arrays.copyOfRange(bf16, a, b), o, dim);
  }
}
