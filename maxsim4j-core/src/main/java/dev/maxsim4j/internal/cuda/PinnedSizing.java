package dev.maxsim4j.internal.cuda;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * How much page-locked memory a reused buffer holds. It grows by half again, at least to what is asked, and gives
 * back what a period of requests left unused, so that one large call does not keep gigabytes of the host's memory
 * locked until close: once {@link #PERIOD_NANOS} have passed since the period began, where the period's largest
 * request is under a quarter of what is held, it keeps half again that largest, where that frees at least
 * {@link #MIN_RETURNED} bytes. Pinning costs time in proportion to the bytes pinned, so a period long against it
 * bounds what giving back and growing again can cost a workload that alternates large and small calls; the memory
 * is looked at only when asked for, so an idle buffer keeps it.
 */
final class PinnedSizing {
  /** How long a period of requests runs before what it left unused is given back. */
  static final long PERIOD_NANOS = TimeUnit.SECONDS.toNanos(60);
  /** The fewest bytes a shrink gives back. */
  static final long MIN_RETURNED = 64L << 20;

  private final LongSupplier clock;
  private long periodStart;
  private long largest;

  PinnedSizing() {
    this(System::nanoTime);
  }

  /** Sizing on {@code clock}, in nanoseconds (tests pass one of their own). */
  PinnedSizing(LongSupplier clock) {
    this.clock = clock;
    this.periodStart = clock.getAsLong();
  }

  /** The bytes to hold for a request of {@code bytes} while {@code held} are held: {@code held} to keep them. */
  long next(long held, long bytes) {
    long now = clock.getAsLong();
    if (bytes > held) {
      periodStart = now; // a period starts at each growth
      largest = bytes;
      return Math.max(bytes, held + held / 2);
    }
    largest = Math.max(largest, bytes);
    if (now - periodStart < PERIOD_NANOS) {
      return held;
    }
    long used = largest;
    periodStart = now;
    largest = 0;
    long keep = used + used / 2;
    return held / 4 > used && held - keep >= MIN_RETURNED ? keep : held;
  }
}
