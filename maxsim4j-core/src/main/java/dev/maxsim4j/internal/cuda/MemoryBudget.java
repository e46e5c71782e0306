package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.internal.DecimalText;

/**
 * The device memory the GPU backend may use, and the chunk size it leaves for documents streamed from the host.
 * The cap is the system property {@value #PROPERTY} (bytes), read when the backend is made; without it, what the
 * device has free less {@link #headroom} for the driver and other users of the GPU.
 */
final class MemoryBudget {
  static final String PROPERTY = "maxsim4j.cuda.memoryLimit";
  /**
   * Largest chunk: a copy this size already runs at the bus's full speed and outlasts a chunk's launches, while
   * the first chunk's copy, which nothing overlaps, stays short.
   */
  static final long MAX_CHUNK_BYTES = 256L << 20;
  /** Device buffers streamed chunks take turns in: one copied while the other is scored. */
  static final int CHUNK_BUFFERS = 2;

  private final long limit;

  /** A cap of {@code limit} bytes; 0: none (what the device has free). */
  MemoryBudget(long limit) {
    if (limit < 0) {
      throw new IllegalArgumentException("memory limit = " + limit + " bytes; expected >= 0 (0: no limit)");
    }
    this.limit = limit;
  }

  /** The cap {@code value} of {@value #PROPERTY} sets; null or blank: none. */
  static MemoryBudget parse(String value) {
    if (value == null || value.isBlank()) {
      return new MemoryBudget(0);
    }
    long bytes;
    try {
      bytes = DecimalText.parseLong(value.strip());
    } catch (NumberFormatException e) {
      bytes = -1;
    }
    if (bytes <= 0) {
      throw new IllegalArgumentException(PROPERTY + " = '" + value + "'; expected a whole number of bytes > 0");
    }
    return new MemoryBudget(bytes);
  }

  static MemoryBudget fromSystemProperty() {
    return parse(System.getProperty(PROPERTY));
  }

  /** The cap in bytes; 0: none. */
  long limit() {
    return limit;
  }

  /** What the driver and other users of a GPU of {@code total} bytes keep without a cap: 1/32, 512 MiB at least. */
  static long headroom(long total) {
    return Math.max(512L << 20, total / 32);
  }

  /**
   * Bytes a call may still allocate: below the cap less what the backend holds ({@code allocated}), and below
   * what the device has free ({@code free} of {@code total}) less the headroom.
   */
  long available(long allocated, long free, long total) {
    long device = free - headroom(total);
    return Math.max(0, limit > 0 ? Math.min(limit - allocated, device) : device);
  }

  /**
   * Bytes of each of the {@value #CHUNK_BUFFERS} chunk buffers when {@code available} bytes are free for the
   * call and its other buffers take {@code otherBytes}: at most {@link #MAX_CHUNK_BYTES}, or up to
   * {@code largestDocument} where that is larger (a document that big is a chunk of its own, and the memory may
   * well hold two of it); 0 when nothing is left.
   */
  static long chunkBytes(long available, long otherBytes, long largestDocument) {
    long cap = Math.max(MAX_CHUNK_BYTES, largestDocument);
    return Math.max(0, Math.min(cap, (available - otherBytes) / CHUNK_BUFFERS));
  }
}
