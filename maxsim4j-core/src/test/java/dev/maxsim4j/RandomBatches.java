package dev.maxsim4j;

import java.util.SplittableRandom;

/**
 * Fresh random token batches for tests (never zeros): normal entries, optional random masks, ragged
 * packed rows, and the half types. Each test draws a new seed and prints it on failure.
 */
final class RandomBatches {
  final long seed;
  final SplittableRandom rnd;

  RandomBatches() {
    this(System.nanoTime() ^ Thread.currentThread().threadId() * 0x9E3779B97F4A7C15L);
  }

  RandomBatches(long seed) {
    this.seed = seed;
    this.rnd = new SplittableRandom(seed);
  }

  float[] floats(int n) {
    float[] a = new float[n];
    for (int i = 0; i < n; i++) {
      a[i] = (float) (rnd.nextGaussian() * 0.5);
    }
    return a;
  }

  short[] halfs(DType type, int n) {
    float[] f = floats(n);
    short[] s = new short[n];
    for (int i = 0; i < n; i++) {
      s[i] = type.narrow(f[i]);
    }
    return s;
  }

  /**
   * Random stored bytes of {@code tokens} quantized tokens: any int8, any finite e4m3 byte (never the NaN
   * codes), any bits (the padding bits of BINARY included, which scoring must ignore).
   */
  byte[] quantizedBytes(DType type, int tokens, int d) {
    byte[] b = new byte[Math.toIntExact(tokens * type.bytesPerToken(d))];
    for (int i = 0; i < b.length; i++) {
      int v = rnd.nextInt(256);
      if (type == DType.FLOAT8_E4M3 && (v & 0x7f) == 0x7f) {
        v ^= 0x01;
      }
      b[i] = (byte) v;
    }
    return b;
  }

  /** Per-token scales of the size that brings each type to values of order 0.5; null one time in four. */
  float[] scales(DType type, int tokens) {
    if (rnd.nextInt(4) == 0) {
      return null;
    }
    double unit = switch (type) {
      case INT8 -> 0.5 / 64;
      case FLOAT8_E4M3 -> 0.5 / 16;
      default -> 0.5;
    };
    float[] s = new float[tokens];
    for (int i = 0; i < tokens; i++) {
      s[i] = (float) (unit * (0.25 + rnd.nextDouble()));
    }
    return s;
  }

  /** A padded batch; {@code masking} 0 = none, 1 = random mask, 2 = random lengths. */
  TokenBatch padded(DType type, int n, int l, int d, int masking) {
    TokenBatch b = type == DType.FLOAT32
        ? TokenBatch.ofFloats(floats(n * l * d), n, l, d)
        : type.isQuantized()
            ? TokenBatch.ofBytes(type, quantizedBytes(type, n * l, d), scales(type, n * l), n, l, d)
            : TokenBatch.ofHalfs(type, halfs(type, n * l * d), n, l, d);
    if (masking == 1) {
      boolean[] m = new boolean[n * l];
      for (int i = 0; i < m.length; i++) {
        m[i] = rnd.nextInt(4) != 0;
      }
      b = b.withMask(m);
    } else if (masking == 2) {
      int[] len = new int[n];
      for (int i = 0; i < n; i++) {
        len[i] = rnd.nextInt(l + 1);
      }
      b = b.withLengths(len);
    }
    return b;
  }

  /** A packed batch whose rows have between {@code minLen} and {@code maxLen} tokens. */
  TokenBatch packed(DType type, int n, int minLen, int maxLen, int d, boolean mask) {
    int[] offsets = new int[n + 1];
    for (int i = 0; i < n; i++) {
      offsets[i + 1] = offsets[i] + minLen + rnd.nextInt(maxLen - minLen + 1);
    }
    int t = offsets[n];
    TokenBatch b = type == DType.FLOAT32
        ? TokenBatch.packedFloats(floats(t * d), offsets, d)
        : type.isQuantized()
            ? TokenBatch.packedBytes(type, quantizedBytes(type, t, d), scales(type, t), offsets, d)
            : TokenBatch.packedHalfs(type, halfs(type, t * d), offsets, d);
    if (mask) {
      boolean[] m = new boolean[t];
      for (int i = 0; i < t; i++) {
        m[i] = rnd.nextInt(5) != 0;
      }
      b = b.withMask(m);
    }
    return b;
  }

  @Override
  public String toString() {
    return "seed=" + seed + "L";
  }
}
