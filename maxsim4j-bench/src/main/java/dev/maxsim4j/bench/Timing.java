package dev.maxsim4j.bench;

import java.util.Arrays;

/** Wall-clock medians of repeated calls, after the warm-up a JIT-compiled caller would have had. */
public final class Timing {
  private Timing() {}

  /** Median of timed runs after a warm-up of at least a second; iterations 0 = as many as fit ~2 s. */
  public static double medianMillis(Runnable call, int iterations) {
    long warmEnd = System.nanoTime() + 1_000_000_000L;
    int warm = 0;
    long one = 0;
    while (warm < 3 || System.nanoTime() < warmEnd) {
      long t0 = System.nanoTime();
      call.run();
      one = System.nanoTime() - t0;
      warm++;
    }
    int n = iterations > 0 ? iterations : (int) Math.max(5, Math.min(200, 2_000_000_000L / Math.max(1, one)));
    return timedMedianMillis(call, n);
  }

  /**
   * Median wall time of {@code call} over {@code calls} runs, after warming it up for at least
   * {@code warmNanos} and {@code warmCalls} runs.
   */
  public static double medianMillis(Runnable call, long warmNanos, int warmCalls, int calls) {
    long warmEnd = System.nanoTime() + warmNanos;
    for (int i = 0; i < warmCalls || System.nanoTime() < warmEnd; i++) {
      call.run();
    }
    return timedMedianMillis(call, calls);
  }

  /** Median wall time in milliseconds of {@code n} runs of {@code call} (the caller warms it up first). */
  public static double timedMedianMillis(Runnable call, int n) {
    double[] ms = new double[n];
    for (int i = 0; i < n; i++) {
      long t0 = System.nanoTime();
      call.run();
      ms[i] = (System.nanoTime() - t0) / 1e6;
    }
    return median(ms);
  }

  /** The median of {@code values} (sorted here): of an even count, the mean of the two middle ones. */
  public static double median(double[] values) {
    Arrays.sort(values);
    int n = values.length;
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  }
}
