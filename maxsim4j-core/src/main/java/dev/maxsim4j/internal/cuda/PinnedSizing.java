package dev.maxsim4j.internal.cuda;

/**
 * How much page-locked memory a reused buffer holds. It grows by half again, at least to what is asked, and gives
 * back what a window of requests left unused, so that one large call does not keep gigabytes of the host's memory
 * locked until close: after {@link #WINDOW} requests whose largest is under a quarter of what is held, it keeps half
 * again that largest, where that frees at least {@link #MIN_RETURNED} bytes. Pinning memory costs about as much as
 * copying it, so a buffer shrinks at most once a window and never for a small gain.
 */
final class PinnedSizing {
  /** Requests after which the memory they left unused is given back. */
  static final int WINDOW = 16;
  /** The fewest bytes a shrink gives back. */
  static final long MIN_RETURNED = 64L << 20;

  private int requests;
  private long largest;

  /** The bytes to hold for a request of {@code bytes} while {@code held} are held: {@code held} to keep them. */
  long next(long held, long bytes) {
    if (bytes > held) {
      requests = 1; // a window starts at each growth
      largest = bytes;
      return Math.max(bytes, held + held / 2);
    }
    largest = Math.max(largest, bytes);
    if (++requests < WINDOW) {
      return held;
    }
    long used = largest;
    requests = 0;
    largest = 0;
    long keep = used + used / 2;
    return held / 4 > used && held - keep >= MIN_RETURNED ? keep : held;
  }
}
