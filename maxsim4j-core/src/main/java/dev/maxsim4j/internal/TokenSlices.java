package dev.maxsim4j.internal;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * Whole rows of a {@link Tokens} batch as a batch of their own, and the split of a batch into shards by
 * capacity. A slice holds the stored tokens from its first row's first slot to its last row's last slot, as a view
 * of the batch's storage (a heap array's through a heap memory segment, which a device upload reads only as far as
 * the slice reaches): a batch split for every call, or held whole in resident shards, is never copied. Its masks and
 * scales, one flag and one float a token, are copied.
 */
public final class TokenSlices {
  /** Bytes a row costs a device beyond its tokens: its start, length and valid count. */
  private static final long ROW_BYTES = 12;

  private TokenSlices() {}

  /** Rows {@code from .. to - 1} of {@code t}, their slots renumbered from 0; {@code t} itself when whole. */
  public static Tokens rows(Tokens t, int from, int to) {
    if (from < 0 || to > t.rows || from > to) {
      throw new IllegalArgumentException("rows " + from + " .. " + to + " of a batch of " + t.rows
          + " rows; expected 0 <= from <= to <= rows");
    }
    if (from == 0 && to == t.rows) {
      return t;
    }
    int first = firstSlot(t, from, to);
    int end = endSlot(t, from, to);
    int n = to - from;
    int[] start = new int[n];
    for (int i = 0; i < n; i++) {
      start[i] = t.rowStart[from + i] - first;
    }
    int[] length = Arrays.copyOfRange(t.rowLength, from, to);
    boolean[] mask = t.mask == null ? null : Arrays.copyOfRange(t.mask, first, end);
    float[] scales = t.scales == null ? null : Arrays.copyOfRange(t.scales, first, end);
    MemorySegment segment = t.storage().asSlice(first * t.tokenBytes, (end - (long) first) * t.tokenBytes);
    return new Tokens(t.dtype, t.dim, t.paddedLength, start, length, end - first, mask, null, null, null, segment,
        scales);
  }

  /**
   * Heap bytes {@link #rows} copies for rows {@code from .. to - 1} of {@code t}: their starts and lengths, and their
   * slots' masks and scales (none where the slice is the whole batch).
   */
  public static long copiedBytes(Tokens t, int from, int to) {
    if (from == 0 && to == t.rows) {
      return 0;
    }
    long slots = endSlot(t, from, to) - (long) firstSlot(t, from, to);
    long perSlot = (t.mask == null ? 0 : 1) + (t.scales == null ? 0 : Float.BYTES);
    return 2L * Integer.BYTES * (to - from) + perSlot * slots + 4 * HeapLimit.ARRAY_OVERHEAD;
  }

  /** The first stored slot of rows {@code from .. to - 1} (0 when there are none). */
  public static int firstSlot(Tokens t, int from, int to) {
    if (from == to) {
      return 0;
    }
    int first = Integer.MAX_VALUE;
    for (int i = from; i < to; i++) {
      first = Math.min(first, t.rowStart[i]);
    }
    return first;
  }

  /** One past the last stored slot of rows {@code from .. to - 1}: a padded row owns its padding too. */
  public static int endSlot(Tokens t, int from, int to) {
    int end = 0;
    for (int i = from; i < to; i++) {
      end = Math.max(end, t.rowStart[i] + (t.isPacked() ? t.rowLength[i] : t.paddedLength));
    }
    return Math.max(end, firstSlot(t, from, to));
  }

  /**
   * Where the shards of {@code t} begin: shard {@code s} holds rows {@code bounds[s] .. bounds[s + 1] - 1}, whole
   * rows in order. Equal parts (by bytes) where each fits its shard's {@code capacity} (bytes), so every device
   * has the same work and a batch splits the same way whatever memory is free; else parts in proportion to the
   * capacities.
   */
  public static int[] split(Tokens t, long[] capacity) {
    int n = capacity.length;
    long[] equal = new long[n];
    for (int s = 0; s < n; s++) {
      if (capacity[s] < 0) {
        throw new IllegalArgumentException("capacity[" + s + "] = " + capacity[s] + "; expected >= 0");
      }
      equal[s] = 1;
    }
    if (n == 0 || Arrays.stream(capacity).allMatch(c -> c == 0)) {
      throw new IllegalArgumentException("capacities " + Arrays.toString(capacity)
          + "; expected at least one shard with a capacity above 0");
    }
    long[] before = new long[t.rows + 1]; // bytes of rows 0 .. r - 1
    for (int r = 0; r < t.rows; r++) {
      before[r + 1] = before[r] + rowBytes(t, r);
    }
    int[] bounds = proportional(before, equal);
    for (int s = 0; s < n; s++) {
      if (before[bounds[s + 1]] - before[bounds[s]] > capacity[s]) {
        return proportional(before, capacity);
      }
    }
    return bounds;
  }

  /** Bounds of shards of rows in proportion to {@code weights}; {@code before[r]}: bytes of rows 0 .. r - 1. */
  private static int[] proportional(long[] before, long[] weights) {
    int rows = before.length - 1;
    int n = weights.length;
    double total = 0;
    for (long w : weights) {
      total += w;
    }
    int[] bounds = new int[n + 1];
    double share = 0;
    int row = 0;
    for (int s = 0; s < n - 1; s++) {
      share += weights[s];
      double target = before[rows] * (share / total);
      while (row < rows && before[row] + (before[row + 1] - before[row]) / 2.0 <= target) {
        row++; // a row goes to the shard that holds more than half of it
      }
      bounds[s + 1] = row;
    }
    bounds[n] = rows;
    return bounds;
  }

  /** Device bytes of row {@code r}: its slots and its metadata. */
  public static long rowBytes(Tokens t, int r) {
    return (t.isPacked() ? t.rowLength[r] : t.paddedLength) * (t.tokenBytes + (t.mask == null ? 0 : 1)
        + (t.dtype.isQuantized() ? 4 : 0)) + ROW_BYTES;
  }
}
