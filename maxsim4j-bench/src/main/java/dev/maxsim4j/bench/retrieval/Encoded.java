package dev.maxsim4j.bench.retrieval;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Token vectors of texts as packed bf16 rows off the heap: {@code offsets[i]..offsets[i+1]} are row i's. */
record Encoded(MemorySegment tokens, int[] offsets, int dim, DType dtype) {
  Encoded(MemorySegment tokens, int[] offsets, int dim) {
    this(tokens, offsets, dim, DType.BFLOAT16);
  }

  static final ValueLayout.OfShort BF16 = ValueLayout.JAVA_SHORT_UNALIGNED;

  int size() {
    return offsets.length - 1;
  }

  long tokenCount() {
    return offsets[size()];
  }

  private long bytesPerToken() {
    return (dtype == DType.FLOAT32 ? 4L : 2L) * dim;
  }

  /** All rows as one packed bf16 batch (a view, no copy). */
  TokenBatch batch() {
    return rows(0, size());
  }

  /** Rows {@code from..to-1} as a packed bf16 batch (a view). */
  TokenBatch rows(int from, int to) {
    int[] o = new int[to - from + 1];
    for (int i = 0; i <= to - from; i++) {
      o[i] = offsets[from + i] - offsets[from];
    }
    long bytes = bytesPerToken();
    return TokenBatch.packedFromMemorySegment(tokens.asSlice(offsets[from] * bytes, (long) o[to - from] * bytes),
        dtype, o, dim);
  }

  /** The same rows widened to fp32 in {@code arena}: the CPU kernel's fastest input. */
  Encoded toFloat32(java.lang.foreign.Arena arena) {
    long n = tokenCount() * dim;
    MemorySegment out = arena.allocate(n * 4, 64);
    for (long i = 0; i < n; i++) {
      out.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, toFloat(tokens.getAtIndex(BF16, i)));
    }
    return new Encoded(out, offsets, dim, DType.FLOAT32);
  }

  /** Row {@code i}'s tokens as floats {@code [L][dim]}. */
  float[][] row(int i) {
    int n = offsets[i + 1] - offsets[i];
    float[][] out = new float[n][dim];
    long at = (long) offsets[i] * dim;
    for (int t = 0; t < n; t++) {
      for (int k = 0; k < dim; k++, at++) {
        out[t][k] = dtype == DType.FLOAT32 ? tokens.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, at)
            : toFloat(tokens.getAtIndex(BF16, at));
      }
    }
    return out;
  }

  /** The mean of row {@code i}'s tokens, unit length (one vector per text, for the single-vector baseline). */
  float[] meanUnit(int i) {
    float[] mean = new float[dim];
    for (float[] t : row(i)) {
      for (int k = 0; k < dim; k++) {
        mean[k] += t[k];
      }
    }
    double norm = 0;
    for (float v : mean) {
      norm += (double) v * v;
    }
    float scale = norm > 0 ? (float) (1 / Math.sqrt(norm)) : 0;
    for (int k = 0; k < dim; k++) {
      mean[k] *= scale;
    }
    return mean;
  }

  /** The given rows, in order, copied into one packed batch in {@code arena}. */
  Encoded gather(int[] rows, java.lang.foreign.Arena arena) {
    int[] o = new int[rows.length + 1];
    for (int i = 0; i < rows.length; i++) {
      o[i + 1] = o[i] + offsets[rows[i] + 1] - offsets[rows[i]];
    }
    long bytes = bytesPerToken();
    MemorySegment out = arena.allocate(Math.max(1, o[rows.length]) * bytes, 64);
    for (int i = 0; i < rows.length; i++) {
      MemorySegment.copy(tokens, offsets[rows[i]] * bytes, out, o[i] * bytes, (o[i + 1] - o[i]) * bytes);
    }
    return new Encoded(out, o, dim, dtype);
  }

  static float toFloat(short bf16) {
    return Float.intBitsToFloat(bf16 << 16);
  }

  /** bf16 of {@code f}, rounded to nearest even. */
  static short toBf16(float f) {
    int b = Float.floatToRawIntBits(f);
    b += 0x7FFF + ((b >>> 16) & 1);
    return (short) (b >>> 16);
  }
}
