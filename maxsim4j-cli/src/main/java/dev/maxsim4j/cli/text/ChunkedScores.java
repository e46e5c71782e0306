package dev.maxsim4j.cli.text;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.Progress;
import dev.maxsim4j.cli.io.Counts;
import java.io.PrintStream;

/** One query's scores against many documents, a slice at a time, so that progress can be shown. */
final class ChunkedScores {
  /** Rows per scoring call: small enough for steady progress, large enough to keep every core busy. */
  static final int ROWS = 2048;

  private ChunkedScores() {}

  /** The query's score against each row; {@code what} names one row (a noun whose plural adds "s") for progress. */
  static float[] of(MaxSim maxSim, TokenBatch query, PackedRows rows, String what, PrintStream err) {
    int n = rows.size();
    float[] scores = new float[n];
    Progress progress = new Progress(err, "scoring " + Counts.of(n, what));
    for (int from = 0; from < n; from += ROWS) {
      int to = Math.min(n, from + ROWS);
      System.arraycopy(maxSim.scores(query, rows.slice(from, to))[0], 0, scores, from, to - from);
      progress.update(to, n);
    }
    progress.done();
    return scores;
  }
}
