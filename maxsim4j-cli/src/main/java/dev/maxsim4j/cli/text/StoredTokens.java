package dev.maxsim4j.cli.text;

import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.SafeTensors;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * A text index's token vectors as they are stored: bf16 bits, or the int8 / 1-bit codes of each token and its
 * fp32 scale. In a tokens file: tensor {@code tokens} ({@code BF16 [T, d]}, {@code I8 [T, d]} or
 * {@code U8 [T, ceil(d/8)]}) and, for the codes, {@code scales} ({@code F32 [T]}).
 */
final class StoredTokens {
  private final Store store;
  private final int dim;
  private final int width;
  private final short[] bf16;
  private final byte[] codes;
  private final float[] scales;

  private StoredTokens(Store store, int dim, short[] bf16, byte[] codes, float[] scales) {
    this.store = store;
    this.dim = dim;
    this.width = store == Store.BF16 ? dim : (int) store.dtype().bytesPerToken(dim);
    this.bf16 = bf16;
    this.codes = codes;
    this.scales = scales;
  }

  static StoredTokens ofBf16(short[] bits, int dim) {
    return new StoredTokens(Store.BF16, dim, bits, null, null);
  }

  /** Room for {@code tokens} tokens; the caller has checked that they fit one Java array. */
  static StoredTokens allocate(Store store, int tokens, int dim) {
    if (store == Store.BF16) {
      return ofBf16(new short[Math.multiplyExact(tokens, dim)], dim);
    }
    return new StoredTokens(store, dim, null, new byte[Math.toIntExact(tokens * store.dtype().bytesPerToken(dim))],
        new float[tokens]);
  }

  /** Float tokens (a packed or one-row batch, every token) in this store's form. */
  static StoredTokens of(Store store, TokenBatch floats) {
    int dim = floats.dim();
    if (store == Store.BF16) {
      return ofBf16(store.dtype().narrow(floats.toFloatArray()), dim);
    }
    TokenBatch q = floats.quantize(store.dtype());
    return new StoredTokens(store, dim, null, q.toByteArray(), q.scales());
  }

  Store store() {
    return store;
  }

  int dim() {
    return dim;
  }

  int tokens() {
    return store == Store.BF16 ? bf16.length / dim : scales.length;
  }

  /** Copies {@code count} tokens from token {@code from} into {@code to} at token {@code at}. */
  void copyTo(int from, StoredTokens to, int at, int count) {
    if (store == Store.BF16) {
      System.arraycopy(bf16, from * width, to.bf16, at * width, count * width);
    } else {
      System.arraycopy(codes, from * width, to.codes, at * width, count * width);
      System.arraycopy(scales, from, to.scales, at, count);
    }
  }

  /** Tokens {@code from} (inclusive) to {@code to} (exclusive) as a packed batch with these row offsets. */
  TokenBatch batch(int from, int to, int[] offsets) {
    boolean all = from == 0 && to == tokens();
    if (store == Store.BF16) {
      short[] bits = all ? bf16 : Arrays.copyOfRange(bf16, from * width, to * width);
      return TokenBatch.packedHalfs(store.dtype(), bits, offsets, dim);
    }
    byte[] c = all ? codes : Arrays.copyOfRange(codes, from * width, to * width);
    float[] s = all ? scales : Arrays.copyOfRange(scales, from, to);
    return TokenBatch.packedBytes(store.dtype(), c, s, offsets, dim);
  }

  /**
   * CRC-32C of the stored bytes (little-endian), the scales after the codes; for bf16 the same sum as the
   * indexes written before other stores existed, so that they stay valid.
   */
  long checksum() {
    CRC32C crc = new CRC32C();
    ByteBuffer buffer = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
    if (store == Store.BF16) {
      for (int at = 0; at < bf16.length; ) {
        int n = Math.min(bf16.length - at, buffer.capacity() / 2);
        buffer.clear();
        buffer.asShortBuffer().put(bf16, at, n);
        buffer.limit(2 * n);
        crc.update(buffer);
        at += n;
      }
    } else {
      crc.update(codes);
      for (int at = 0; at < scales.length; ) {
        int n = Math.min(scales.length - at, buffer.capacity() / 4);
        buffer.clear();
        buffer.asFloatBuffer().put(scales, at, n);
        buffer.limit(4 * n);
        crc.update(buffer);
        at += n;
      }
    }
    return crc.getValue();
  }

  /** The tensors of a tokens file. */
  Map<String, NdArray> tensors() {
    Map<String, NdArray> t = new LinkedHashMap<>();
    int tokens = tokens();
    if (store == Store.BF16) {
      t.put("tokens", new NdArray("tokens", NdArray.ElementType.BF16, new long[] {tokens, dim}, null, bf16, null));
    } else {
      NdArray.ElementType type = store == Store.INT8 ? NdArray.ElementType.I8 : NdArray.ElementType.U8;
      t.put("tokens", NdArray.ofSegment("tokens", type, new long[] {tokens, width}, MemorySegment.ofArray(codes)));
      t.put("scales", NdArray.ofFloats("scales", new long[] {tokens}, scales));
    }
    return t;
  }

  /** Reads a tokens file of {@code tokens} tokens of this store; an IllegalArgumentException if it is not one. */
  static StoredTokens read(Path file, Store store, long tokens, int dim) throws IOException {
    NdArray stored = SafeTensors.read(file, "tokens");
    NdArray.ElementType type = switch (store) {
      case BF16 -> NdArray.ElementType.BF16;
      case INT8 -> NdArray.ElementType.I8;
      case BINARY -> NdArray.ElementType.U8;
    };
    long width = store == Store.BF16 ? dim : store.dtype().bytesPerToken(dim);
    if (stored.type() != type || stored.rank() != 2 || stored.shape()[1] != width || stored.shape()[0] != tokens) {
      throw new IllegalArgumentException("its tokens are " + stored.type() + " " + stored.shapeString()
          + "; expected " + type + " [" + tokens + ", " + width + "]");
    }
    if (store == Store.BF16) {
      return ofBf16(stored.halfs(), dim); // a copy of the mapped file: made once
    }
    NdArray scales = SafeTensors.read(file, "scales");
    if (scales.type() != NdArray.ElementType.F32 || scales.rank() != 1 || scales.shape()[0] != tokens) {
      throw new IllegalArgumentException("its scales are " + scales.type() + " " + scales.shapeString()
          + "; expected float32 [" + tokens + "]");
    }
    return new StoredTokens(store, dim, null, stored.bytes(), scales.floats());
  }
}
