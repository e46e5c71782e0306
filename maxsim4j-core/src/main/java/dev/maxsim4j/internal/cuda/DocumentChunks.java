package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.internal.Tokens;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Splits a document batch into chunks of consecutive whole documents whose device copy fits a byte budget, for
 * top-k over batches larger than the device memory the backend may use. A chunk is a {@link Tokens} view over the
 * same storage (no copy of the tokens), its rows rebased to the chunk's first stored token; its document
 * {@code i} is the batch's document {@code firstRow + i}.
 */
final class DocumentChunks {
  /** Documents {@code firstRow ..} of the batch, stored in tokens {@code firstToken .. firstToken + tokens - 1}. */
  record Chunk(int firstRow, int rows, int firstToken, int tokens) {}

  private DocumentChunks() {}

  /**
   * Consecutive chunks covering every document of {@code t} in order, each as many documents as fit
   * {@code budgetBytes} of device memory ({@link DeviceTokens#bytesFor} of its view). Throws
   * {@link IllegalArgumentException} when one document alone does not fit.
   */
  static List<Chunk> plan(Tokens t, long budgetBytes) {
    List<Chunk> chunks = new ArrayList<>();
    int first = 0;
    long lo = Long.MAX_VALUE; // the chunk's stored tokens: [lo, hi), empty while lo > hi
    long hi = Long.MIN_VALUE;
    for (int r = 0; r < t.rows; r++) {
      int length = t.rowLength[r];
      long start = t.rowStart[r];
      if (length > 0 && deviceBytes(t, 1, length) > budgetBytes) {
        throw new IllegalArgumentException("document " + r + " needs " + deviceBytes(t, 1, length)
            + " bytes of device memory; the memory the GPU backend may use leaves " + budgetBytes
            + " per chunk (raise maxsim4j.cuda.memoryLimit)");
      }
      long newLo = length > 0 ? Math.min(lo, start) : lo;
      long newHi = length > 0 ? Math.max(hi, start + length) : hi;
      if (r > first && deviceBytes(t, r + 1 - first, span(newLo, newHi)) > budgetBytes) {
        chunks.add(chunk(first, r - first, lo, hi));
        first = r;
        newLo = length > 0 ? start : Long.MAX_VALUE;
        newHi = length > 0 ? start + length : Long.MIN_VALUE;
      }
      lo = newLo;
      hi = newHi;
    }
    if (t.rows > first) {
      chunks.add(chunk(first, t.rows - first, lo, hi));
    }
    return chunks;
  }

  private static Chunk chunk(int first, int rows, long lo, long hi) {
    return lo > hi ? new Chunk(first, rows, 0, 0) : new Chunk(first, rows, (int) lo, (int) (hi - lo));
  }

  private static long span(long lo, long hi) {
    return lo > hi ? 0 : hi - lo;
  }

  /** {@link DeviceTokens#bytesFor} of a view of {@code rows} documents over {@code tokens} of {@code t}'s tokens. */
  static long deviceBytes(Tokens t, int rows, long tokens) {
    return DeviceTokens.align(tokens * t.tokenBytes) + 3 * DeviceTokens.align(4L * rows)
        + (t.mask == null ? 0 : DeviceTokens.align(tokens)) + (t.dtype.isQuantized() ? DeviceTokens.align(4L * tokens)
        : 0);
  }

  /** The documents of {@code c} as a batch of their own over {@code t}'s storage (mask and scales copied). */
  static Tokens view(Tokens t, Chunk c) {
    int[] length = Arrays.copyOfRange(t.rowLength, c.firstRow(), c.firstRow() + c.rows());
    int[] start = new int[c.rows()];
    for (int i = 0; i < c.rows(); i++) {
      start[i] = length[i] > 0 ? t.rowStart[c.firstRow() + i] - c.firstToken() : 0;
    }
    int from = c.firstToken();
    int to = from + c.tokens();
    MemorySegment data = t.storage().asSlice((long) from * t.tokenBytes, (long) c.tokens() * t.tokenBytes);
    return new Tokens(t.dtype, t.dim, t.paddedLength, start, length, c.tokens(),
        t.mask == null ? null : Arrays.copyOfRange(t.mask, from, to), null, null, null, data,
        t.scales == null ? null : Arrays.copyOfRange(t.scales, from, to));
  }
}
