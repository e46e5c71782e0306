package dev.maxsim4j.cli;

import dev.maxsim4j.DType;
import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.cli.io.NdArray;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * What an embeddings array holds, as its element type and the command line say: the token type, the token
 * dimension d (bits for packed bits, else the last axis) and the per-token scales of a quantized type (null
 * when none are given, which means all 1).
 */
record TokenType(DType dtype, int dim, float[] scales) {

  /** Every byte of an fp8 e4m3fn NaN (0x7f or 0xff) has these seven low bits set. */
  private static final long LOW7 = 0x7f7f7f7f7f7f7f7fL;
  private static final long ONES = 0x0101010101010101L;
  private static final long HIGH = 0x8080808080808080L;

  /** The type of a float32, float16 or bfloat16 array; an IllegalArgumentException for any other. */
  static TokenType floating(String what, NdArray emb) {
    if (!emb.isFloating()) {
      throw notEmbeddings(what, emb);
    }
    return new TokenType(emb.dtype(), emb.rank() == 0 ? 0 : emb.dim(emb.rank() - 1), null);
  }

  /**
   * The token type of {@code emb} given {@code bits} (the value of {@code o.bits()}, 0 when absent): float
   * types as they are, I8 as int8, F8_E4M3 as fp8 (see {@link #requireNoNanBytes}), U8 as packed bits of
   * {@code bits} dimensions. A flag that does not fit the data is a {@link UsageException}.
   */
  static DType dtype(Inputs.Options o, NdArray emb, int bits) {
    DType dtype = switch (emb.type()) {
      case F32, F16, BF16 -> emb.dtype();
      case I8 -> DType.INT8;
      case F8_E4M3 -> DType.FLOAT8_E4M3;
      case U8 -> DType.BINARY;
      default -> throw notEmbeddings(o.what(), emb);
    };
    if (dtype == DType.BINARY && bits == 0) {
      throw new UsageException("score: " + o.what() + " " + emb.source() + " holds uint8 " + emb.shapeString()
          + ", which is read as packed bits: give the token dimension with " + o.bits() + " D (the last axis holds"
          + " ceil(D/8) bytes)");
    }
    if (dtype != DType.BINARY && bits != 0) {
      throw new UsageException("score: " + o.bits() + " is for uint8 packed bits, but " + o.what() + " "
          + emb.source() + " holds " + emb.type() + "; expected U8 embeddings [.., ceil(" + bits + "/8)] or no "
          + o.bits());
    }
    if (dtype == DType.BINARY && emb.rank() >= 1) {
      long width = emb.shape()[emb.rank() - 1];
      long needed = (bits + 7L) / 8;
      if (width == 0) { // no byte a token holds no bit: no --docs-bits fits
        throw new IllegalArgumentException(o.what() + " " + emb.source() + " has shape " + emb.shapeString()
            + ": 0 bytes per token; expected ceil(" + bits + "/8) = " + Counts.of(needed, "byte")
            + " of packed bits per token");
      }
      if (width != needed) {
        throw new UsageException("score: " + o.bits() + " " + bits + " packs into " + Counts.of(needed, "byte")
            + " per token, but " + o.what() + " " + emb.source() + " has shape " + emb.shapeString() + " ("
            + Counts.of(width, "byte") + " per token); expected " + o.bits() + " between "
            + Math.max(1, 8 * width - 7) + " and " + 8 * width);
      }
    }
    return dtype;
  }

  /** The element type that holds the bytes of a quantized type in a file. */
  static NdArray.ElementType elementType(DType dtype) {
    return switch (dtype) {
      case INT8 -> NdArray.ElementType.I8;
      case FLOAT8_E4M3 -> NdArray.ElementType.F8_E4M3;
      case BINARY -> NdArray.ElementType.U8;
      default -> throw new IllegalArgumentException(dtype + " is not a quantized type");
    };
  }

  /** The token dimension: {@code bits} for packed bits, else the last axis. */
  static int dim(DType dtype, NdArray emb, int bits) {
    return dtype == DType.BINARY ? bits : emb.dim(emb.rank() - 1);
  }

  /**
   * Whether an array of one entry per token (a mask, scales) of {@code shape} fits {@code emb}: its shape without
   * the last axis; {@code [L, d]} unpacked is one row of L tokens, whose array may also be the {@code [N, L]} of that
   * one row, {@code [1, L]}.
   */
  static boolean fitsTokens(long[] shape, NdArray emb, boolean packed) {
    return Arrays.equals(shape, Arrays.copyOf(emb.shape(), emb.rank() - 1))
        || emb.rank() == 2 && !packed && Arrays.equals(shape, new long[] {1, emb.shape()[0]});
  }

  /** The shapes {@link #fitsTokens} takes, as an error names them. */
  static String tokenShapes(NdArray emb, boolean packed) {
    return Arrays.toString(Arrays.copyOf(emb.shape(), emb.rank() - 1))
        + (emb.rank() == 2 && !packed ? " or [1, " + emb.shape()[0] + "]" : "");
  }

  /**
   * Scales for the tokens of {@code emb}: float32 of its shape without the last axis (padded {@code [N, L]},
   * {@code [B, K, L]}) or {@code [T]} (packed), finite in every token {@code valid} flags (null: every token); a
   * masked token's, never read, is 1 where it is not finite (a scale computed from NaN padding).
   */
  static float[] scales(String what, NdArray scales, NdArray emb, boolean packed, boolean[] valid) {
    long[] expected = Arrays.copyOf(emb.shape(), emb.rank() - 1);
    if (scales.type() != NdArray.ElementType.F32) {
      throw new IllegalArgumentException(what + " scales " + scales.source() + " hold " + scales.type()
          + "; expected float32 scales " + Arrays.toString(expected) + " (one per token of " + emb.source() + ")");
    }
    if (!fitsTokens(scales.shape(), emb, packed)) {
      throw new IllegalArgumentException(what + " scales " + scales.source() + " have shape " + scales.shapeString()
          + "; expected " + tokenShapes(emb, packed) + " (one per token of " + emb.source() + " "
          + emb.shapeString() + ")");
    }
    float[] s = scales.floats();
    for (int i = 0; i < s.length; i++) {
      if (!Float.isFinite(s[i]) && valid != null && !valid[i]) {
        s[i] = 1f;
      } else if (!Float.isFinite(s[i])) {
        throw new IllegalArgumentException(what + " scales " + scales.source() + " hold " + s[i] + " at "
            + index(expected, i) + "; expected finite scales");
      }
    }
    return s;
  }

  /**
   * fp8 e4m3fn has no infinity, and its NaN bytes would turn every score they touch into NaN: refused in the tokens
   * {@code valid} flags (null: every token), not in masked ones (padding, which no score reads).
   */
  static void requireNoNanBytes(String what, NdArray emb, boolean[] valid) {
    MemorySegment data = emb.segment();
    long size = data.byteSize();
    long width = emb.shape()[emb.rank() - 1]; // bytes per token
    for (long at = 0; at < size; ) {
      // a byte 0x7f becomes 0x80 when one is added to it (no carry: every byte is at most 0x7f here)
      if (at + 8 <= size && (((data.get(ValueLayout.JAVA_LONG_UNALIGNED, at) & LOW7) + ONES) & HIGH) == 0) {
        at += 8;
        continue;
      }
      for (long end = Math.min(size, at + 8); at < end; at++) { // the word with a NaN byte, or the last few
        byte b = data.get(ValueLayout.JAVA_BYTE, at);
        if ((b & 0x7f) == 0x7f && (valid == null || valid[(int) (at / width)])) {
          throw new IllegalArgumentException(what + " " + emb.source() + " holds the float8_e4m3fn NaN byte 0x"
              + Integer.toHexString(b & 0xff) + " at " + index(emb.shape(), at) + "; expected finite values"
              + " (e4m3fn has no infinity; 0x7f and 0xff are NaN)");
        }
      }
    }
  }

  /** The position of flat element {@code flat} in an array of {@code shape}, as {@code [i, j, k]}. */
  static String index(long[] shape, long flat) {
    long[] at = new long[shape.length];
    for (int axis = shape.length - 1; axis >= 0; axis--) {
      at[axis] = shape[axis] == 0 ? 0 : flat % shape[axis];
      flat = shape[axis] == 0 ? flat : flat / shape[axis];
    }
    return Arrays.toString(at);
  }

  private static IllegalArgumentException notEmbeddings(String what, NdArray emb) {
    return new IllegalArgumentException(what + " " + emb.source() + " holds " + emb.type() + "; expected float32,"
        + " float16, bfloat16, int8, float8_e4m3fn or uint8 packed bits (with --" + what + "-bits) embeddings");
  }
}
