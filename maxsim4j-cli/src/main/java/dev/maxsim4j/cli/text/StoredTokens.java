package dev.maxsim4j.cli.text;

import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.SafeTensorsFile;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32C;

/**
 * A text index's token vectors as they are stored: bf16 bits, or the int8 / 1-bit codes of each token and its
 * fp32 scale. In a tokens file: tensor {@code tokens} ({@code BF16 [T, d]}, {@code I8 [T, d]} or
 * {@code U8 [T, ceil(d/8)]}) and, for the codes, {@code scales} ({@code F32 [T]}). Both are little-endian
 * memory: heap arrays while an index is built, the mapped tokens file once it is read, so that searching an
 * index does not copy its tokens onto the heap (only the scales of the rows a call scores).
 */
final class StoredTokens {
  private static final ValueLayout.OfFloat LE_FLOAT = NdArray.LE_FLOAT;
  private final Store store;
  private final int dim;
  private final int width; // bytes per token
  private final MemorySegment data;
  private final MemorySegment scales; // null for bf16

  private StoredTokens(Store store, int dim, MemorySegment data, MemorySegment scales) {
    this.store = store;
    this.dim = dim;
    this.width = store == Store.BF16 ? 2 * dim : (int) store.dtype().bytesPerToken(dim);
    this.data = data;
    this.scales = scales;
  }

  static StoredTokens ofBf16(short[] bits, int dim) {
    return new StoredTokens(Store.BF16, dim, MemorySegment.ofArray(bits), null);
  }

  /** Room for {@code tokens} tokens; the caller has checked that they fit one Java array. */
  static StoredTokens allocate(Store store, int tokens, int dim) {
    if (store == Store.BF16) {
      return ofBf16(new short[Math.multiplyExact(tokens, dim)], dim);
    }
    return new StoredTokens(store, dim,
        MemorySegment.ofArray(new byte[Math.toIntExact(tokens * store.dtype().bytesPerToken(dim))]),
        MemorySegment.ofArray(new float[tokens]));
  }

  /** Float tokens (a packed or one-row batch, every token) in this store's form. */
  static StoredTokens of(Store store, TokenBatch floats) {
    int dim = floats.dim();
    if (store == Store.BF16) {
      return ofBf16(store.dtype().narrow(floats.toFloatArray()), dim);
    }
    TokenBatch q = floats.quantize(store.dtype());
    return new StoredTokens(store, dim, MemorySegment.ofArray(q.toByteArray()), MemorySegment.ofArray(q.scales()));
  }

  Store store() {
    return store;
  }

  int dim() {
    return dim;
  }

  int tokens() {
    return Math.toIntExact(data.byteSize() / width);
  }

  /** Whether the tokens are in heap arrays (being built) rather than a mapped file. */
  boolean onHeap() {
    return data.heapBase().isPresent();
  }

  /** Copies {@code count} tokens from token {@code from} into {@code to} at token {@code at}. */
  void copyTo(int from, StoredTokens to, int at, int count) {
    MemorySegment.copy(data, (long) from * width, to.data, (long) at * width, (long) count * width);
    if (scales != null) {
      MemorySegment.copy(scales, 4L * from, to.scales, 4L * at, 4L * count);
    }
  }

  /** Tokens {@code from} (inclusive) to {@code to} (exclusive) as a packed batch with these row offsets. */
  TokenBatch batch(int from, int to, int[] offsets) {
    MemorySegment rows = data.asSlice((long) from * width, (long) (to - from) * width);
    if (store == Store.BF16) {
      return TokenBatch.packedFromMemorySegment(rows, store.dtype(), offsets, dim);
    }
    float[] s = new float[to - from];
    MemorySegment.copy(scales, LE_FLOAT, 4L * from, s, 0, s.length);
    return TokenBatch.packedFromMemorySegment(rows, store.dtype(), s, offsets, dim);
  }

  /**
   * CRC-32C of the stored bytes (little-endian), the scales after the codes; for bf16 the same sum as the
   * indexes written before other stores existed, so that they stay valid.
   */
  long checksum() {
    CRC32C crc = new CRC32C();
    update(crc, data);
    if (scales != null) {
      update(crc, scales);
    }
    return crc.getValue();
  }

  private static void update(CRC32C crc, MemorySegment bytes) {
    byte[] chunk = new byte[1 << 16];
    for (long at = 0; at < bytes.byteSize(); at += chunk.length) {
      int n = (int) Math.min(chunk.length, bytes.byteSize() - at);
      MemorySegment.copy(bytes, ValueLayout.JAVA_BYTE, at, chunk, 0, n);
      crc.update(chunk, 0, n);
    }
  }

  /** The tensors of a tokens file. */
  Map<String, NdArray> tensors() {
    Map<String, NdArray> t = new LinkedHashMap<>();
    int tokens = tokens();
    if (store == Store.BF16) {
      t.put("tokens", NdArray.ofSegment("tokens", NdArray.ElementType.BF16, new long[] {tokens, dim}, data));
    } else {
      NdArray.ElementType type = store == Store.INT8 ? NdArray.ElementType.I8 : NdArray.ElementType.U8;
      t.put("tokens", NdArray.ofSegment("tokens", type, new long[] {tokens, width}, data));
      t.put("scales", NdArray.ofSegment("scales", NdArray.ElementType.F32, new long[] {tokens}, scales));
    }
    return t;
  }

  /**
   * The store of the tokens files in {@code dir} ({@code pattern}: their names), by the type of their tokens; null
   * where none can be read or they disagree. What a rebuild keeps where the manifest no longer names its store.
   */
  static Store storeOfFiles(Path dir, String pattern) {
    Set<Store> found = EnumSet.noneOf(Store.class);
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, pattern)) {
      for (Path file : files) {
        // a pipe or a device would block the read, or never end it
        Store s = Files.isRegularFile(file) ? storeOf(file) : null;
        if (s != null) {
          found.add(s);
        }
      }
    } catch (IOException | RuntimeException unlisted) {
      return null;
    }
    return found.size() == 1 ? found.iterator().next() : null;
  }

  /** The store whose type the tokens of {@code file} are in; null where it is no tokens file. */
  private static Store storeOf(Path file) {
    try {
      return switch (SafeTensorsFile.open(file).read("tokens").type()) {
        case BF16 -> Store.BF16;
        case I8 -> Store.INT8;
        case U8 -> Store.BINARY;
        default -> null;
      };
    } catch (IOException | RuntimeException unreadable) {
      return null;
    }
  }

  /**
   * Reads a tokens file of {@code tokens} tokens of this store, mapped rather than copied; an
   * IllegalArgumentException if it is not one.
   */
  static StoredTokens read(Path file, Store store, long tokens, int dim) throws IOException {
    SafeTensorsFile tensors = SafeTensorsFile.open(file);
    NdArray stored = tensors.read("tokens");
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
      requireFiniteBf16(stored.segment(), dim);
      return new StoredTokens(store, dim, stored.segment(), null);
    }
    NdArray scales = tensors.read("scales");
    if (scales.type() != NdArray.ElementType.F32 || scales.rank() != 1 || scales.shape()[0] != tokens) {
      throw new IllegalArgumentException("its scales are " + scales.type() + " " + scales.shapeString()
          + "; expected float32 [" + tokens + "]");
    }
    requireFinite(scales.segment());
    return new StoredTokens(store, dim, stored.segment(), scales.segment());
  }

  private static final ValueLayout.OfLong LE_LONG =
      ValueLayout.JAVA_LONG_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
  /** The exponent bits of four bf16 values in a long, and the bit each carries into when they are all set. */
  private static final long EXPONENTS = 0x7f807f807f807f80L;
  private static final long EXPONENT_LOW_BITS = 0x0080008000800080L;
  private static final long CARRIES = 0x8000800080008000L;

  /**
   * Every bf16 value finite (exponent bits not all set), four at a time: a NaN token would score NaN and be
   * printed as a passage's score, where an encoder never gives one.
   */
  private static void requireFiniteBf16(MemorySegment tokens, int dim) {
    long size = tokens.byteSize();
    long at = 0;
    for (; at + Long.BYTES <= size; at += Long.BYTES) {
      if ((((tokens.get(LE_LONG, at) & EXPONENTS) + EXPONENT_LOW_BITS) & CARRIES) != 0) {
        break;
      }
    }
    for (; at + 1 < size; at += 2) { // the value the fast pass stopped at, or the last few
      if ((tokens.get(NdArray.LE_SHORT, at) & 0x7f80) == 0x7f80) {
        throw new IllegalArgumentException("its tokens hold a value that is not finite at token "
            + at / (2L * dim) + "; expected finite values");
      }
    }
  }

  /**
   * Every scale finite: a checksum guards only against damage, and a file written with a matching one (by hand, or by
   * another tool) would otherwise fail every search at scoring time instead of being rebuilt.
   */
  private static void requireFinite(MemorySegment scales) {
    for (long t = 0; t < scales.byteSize() / Float.BYTES; t++) {
      float s = scales.getAtIndex(LE_FLOAT, t);
      if (!Float.isFinite(s)) {
        throw new IllegalArgumentException("its scales hold " + s + " at token " + t + "; expected finite scales");
      }
    }
  }
}
