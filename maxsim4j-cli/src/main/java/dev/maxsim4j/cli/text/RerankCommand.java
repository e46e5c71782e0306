package dev.maxsim4j.cli.text;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.Engine;
import dev.maxsim4j.cli.Progress;
import dev.maxsim4j.cli.UsageException;
import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.cli.io.PathArgument;
import dev.maxsim4j.langchain4j.MiniLmTokenEncoder;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.IntStream;

/** {@code rerank}: given candidates (one per line) in order of MaxSim against a query. */
public final class RerankCommand {
  public static final String USAGE = """
      rerank --query TEXT --candidates FILE [--top N] [--backend NAME] [--verbose]
        FILE: one candidate text per non-blank line. Prints them best first with their score (mean best
        cosine per query token) and line number in FILE (a line ends at \\n, \\r\\n or a lone \\r, as Java's
        readers count them). A candidate longer than a passage (see index) is
        scored by its best passage. Lines that are not UTF-8 text are skipped and named on stderr. A candidate
        without a word piece (only format, control or lone combining characters, or only what the model's
        vocabulary lacks: emoji, scripts such as Thai) has no valid token: it scores MaxSim's -1e9 (divided
        by the query's tokens), last; such a query is an error.""";

  private RerankCommand() {}

  public static int run(String[] argv, PrintStream out, PrintStream err) throws IOException {
    Args a = new Args("rerank", argv, 1, Set.of("--query", "--candidates", "--top", "--backend"), Set.of("--verbose"));
    a.require("--query");
    String query = a.text("--query");
    if (TextFiles.blank(query)) {
      throw new UsageException("rerank: --query is empty (white space only); expected some text");
    }
    Path file = PathArgument.of("--candidates", a.require("--candidates"));
    int top = a.intValue("--top", Integer.MAX_VALUE, 1);
    Warnings warnings = new Warnings(err);
    List<TextFiles.Line> candidates = TextFiles.lines("--candidates", file, warnings);
    warnings.finish();
    if (candidates.isEmpty()) {
      throw new IllegalArgumentException("rerank: " + TextFiles.shown(file)
          + " holds no candidate; expected one UTF-8 text per line");
    }
    List<String> passages = new ArrayList<>();
    int[] candidateOf = passagesOf(candidates, passages);
    try (TextModel encoder = TextModel.load();
        MaxSim maxSim = Engine.open(a)) {
      TokenBatch q = encoder.encode(query);
      SearchCommand.requireText("rerank", query, MiniLmTokenEncoder.hasWordPiece(q.validTokens(0)));
      Progress progress = new Progress(err, "encoding " + Counts.of(candidates.size(), "candidate") + " ("
          + Counts.of(passages.size(), "passage") + ")");
      String candidatesIn = "rerank: the candidates in " + TextFiles.shown(file);
      String instead = "give fewer or shorter candidates";
      int[] counts = passages.stream().mapToInt(encoder::tokenCount).toArray();
      PackedRows.requireAtMostMax(Arrays.stream(counts).asLongStream().sum(), candidatesIn, instead);
      PackedRows rows = PackedRows.encode(encoder, passages, counts, progress, Store.BF16);
      progress.done();
      float[] passageScores = ChunkedScores.of(maxSim, q, rows, "passage", err);
      float[] scores = new float[candidates.size()];
      Arrays.fill(scores, Float.NEGATIVE_INFINITY);
      for (int p = 0; p < passageScores.length; p++) {
        // a passage without a word piece is its [CLS] and [SEP] alone, which match every query alike: it has no
        // valid token, and scores as such
        float score = MiniLmTokenEncoder.hasWordPiece(rows.length(p)) ? passageScores[p] : MaxSim.EMPTY_DOCUMENT_SCORE;
        scores[candidateOf[p]] = Math.max(scores[candidateOf[p]], score);
      }
      int[] order = IntStream.range(0, scores.length).boxed()
          .sorted(Comparator.<Integer>comparingDouble(i -> -scores[i]).thenComparingInt(i -> i))
          .mapToInt(Integer::intValue).toArray();
      out.printf(Locale.ROOT, "%4s  %6s  %5s  %s%n", "rank", "score", "line", "candidate");
      for (int r = 0; r < Math.min(top, order.length); r++) {
        int i = order[r];
        out.printf(Locale.ROOT, "%4d  %6.3f  %5d  %s%n", r + 1, scores[i] / q.length(0), candidates.get(i).number(),
            TextFiles.snippet(candidates.get(i).text(), 90));
      }
    }
    return 0;
  }

  /** Adds each candidate's passages to {@code passages}; returns the candidate of each passage. */
  private static int[] passagesOf(List<TextFiles.Line> candidates, List<String> passages) {
    List<Integer> owner = new ArrayList<>();
    for (int i = 0; i < candidates.size(); i++) {
      for (Passages.Passage p : Passages.of(candidates.get(i).text())) {
        passages.add(p.text());
        owner.add(i);
      }
    }
    return owner.stream().mapToInt(Integer::intValue).toArray();
  }
}
