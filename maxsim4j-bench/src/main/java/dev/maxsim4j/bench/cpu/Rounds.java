package dev.maxsim4j.bench.cpu;

import dev.maxsim4j.bench.Timing;
import java.util.List;

/**
 * Times several calls in alternating rounds and keeps each call's best round: on a machine shared with other
 * work, load that comes and goes then falls on every call of a comparison alike rather than on one of them.
 */
final class Rounds {
  private Rounds() {}

  /** Each call's median time in its best of {@code rounds} rounds; iterations 0 = as many as fit ~2 s. */
  static double[] bestMedians(List<Runnable> calls, int iterations, int rounds) {
    double[] best = new double[calls.size()];
    int[] n = new int[calls.size()];
    for (int r = 0; r < rounds; r++) {
      for (int c = 0; c < calls.size(); c++) {
        Runnable call = calls.get(c);
        double ms;
        if (r == 0) {
          ms = Timing.medianMillis(call, iterations);
          n[c] = iterations > 0 ? iterations : (int) Math.max(5, Math.min(200, 2000 / Math.max(ms, 1e-3)));
        } else {
          ms = Timing.medianMillis(call, 200_000_000L, 2, n[c]);
        }
        best[c] = r == 0 ? ms : Math.min(best[c], ms);
      }
    }
    return best;
  }
}
