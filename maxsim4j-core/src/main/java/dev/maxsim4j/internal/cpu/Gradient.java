package dev.maxsim4j.internal.cpu;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.Tokens;

/** The one arithmetic step of the backward: {@code dst[off..off+d) += g * token}. */
final class Gradient {
  private Gradient() {}

  static void axpy(float g, Tokens src, int token, float[] dst, int off) {
    int dim = src.dim;
    int e = token * dim;
    if (src.f32 != null) {
      float[] s = src.f32;
      for (int k = 0; k < dim; k++) {
        dst[off + k] += g * s[e + k];
      }
    } else if (src.s16 != null && src.dtype == DType.BFLOAT16) {
      short[] s = src.s16;
      for (int k = 0; k < dim; k++) {
        dst[off + k] += g * Float.intBitsToFloat((s[e + k] & 0xffff) << 16);
      }
    } else {
      for (int k = 0; k < dim; k++) {
        dst[off + k] += g * src.element(token, k);
      }
    }
  }
}
