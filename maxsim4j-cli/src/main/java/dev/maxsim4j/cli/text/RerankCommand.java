package dev.maxsim4j.cli.text;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.langchain4j.MiniLmTokenEncoder;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.IntStream;

/** {@code rerank}: given candidates (one per line) in order of MaxSim against a query. */
public final class RerankCommand {
  public static final String USAGE = """
      rerank --query TEXT --candidates FILE [--top N] [--backend NAME]
        FILE: one candidate text per non-blank line. Prints them best first with their score (mean best
        cosine per query token) and number (1 = first non-blank line).""";

  private RerankCommand() {}

  public static int run(String[] argv, PrintStream out, PrintStream err) throws IOException {
    Args a = new Args("rerank", argv, 1, Set.of("--query", "--candidates", "--top", "--backend"), Set.of());
    String query = a.require("--query");
    Path file = Path.of(a.require("--candidates"));
    List<String> candidates = TextFiles.lines(file);
    if (candidates.isEmpty()) {
      throw new IllegalArgumentException("rerank: " + file + " holds no candidate; expected one text per line");
    }
    int top = a.intValue("--top", candidates.size(), 1);
    try (MiniLmTokenEncoder encoder = MiniLmTokenEncoder.load();
        MaxSim maxSim = MaxSim.builder().backend(a.getOr("--backend", "auto")).build()) {
      TokenBatch q = encoder.encode(query);
      float[] scores = maxSim.scores(q, encoder.encode(candidates))[0];
      int[] order = IntStream.range(0, scores.length).boxed()
          .sorted(Comparator.<Integer>comparingDouble(i -> -scores[i]).thenComparingInt(i -> i))
          .mapToInt(Integer::intValue).toArray();
      out.printf(Locale.ROOT, "%4s  %6s  %5s  %s%n", "rank", "score", "#", "candidate (# among non-blank lines)");
      for (int r = 0; r < Math.min(top, order.length); r++) {
        int i = order[r];
        out.printf(Locale.ROOT, "%4d  %6.3f  %5d  %s%n", r + 1, scores[i] / q.length(0), i + 1,
            TextFiles.snippet(candidates.get(i), 90));
      }
    }
    return 0;
  }
}
