package dev.maxsim4j.cli.text;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.Engine;
import dev.maxsim4j.cli.UsageException;
import dev.maxsim4j.langchain4j.MiniLmTokenEncoder;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.IntStream;

/** {@code search}: the files of a folder that best match a query, by MaxSim over token embeddings. */
public final class SearchCommand {
  public static final String USAGE = """
      search --dir FOLDER --query TEXT [--k 5] [--backend NAME] [--store bf16|int8|binary]
        Brings FOLDER's index up to date (see index), then ranks its files against the query: a file's score
        is that of its best passage (the mean over query tokens of the best cosine with any token of the
        passage); prints FILE:LINE of that passage and its start. Skipped files are named on stderr.
        --store as for index (without it the index keeps its store).""";

  private SearchCommand() {}

  public static int run(String[] argv, PrintStream out, PrintStream err) throws IOException {
    Args a = new Args("search", argv, 1, Set.of("--dir", "--query", "--k", "--backend", "--store"),
        Set.of("--verbose"));
    Store store = Store.parse("search", a.get("--store"));
    Path folder = Path.of(a.require("--dir"));
    String query = a.require("--query");
    if (query.isBlank()) {
      throw new UsageException("search: --query is empty; expected some text");
    }
    int k = a.intValue("--k", 5, 1);
    Warnings warnings = new Warnings(err);
    try (MiniLmTokenEncoder encoder = MiniLmTokenEncoder.load();
        MaxSim maxSim = Engine.open(a)) {
      TextIndex index = TextIndex.update(folder, encoder, false, warnings, err, store);
      TokenBatch q = encoder.encode(query);
      long t0 = System.nanoTime();
      float[] scores = ChunkedScores.of(maxSim, q, index.rows(), "passages", err);
      double ms = (System.nanoTime() - t0) / 1e6;
      List<TextIndex.Entry> entries = index.entries();
      int[] best = new int[entries.size()];
      Arrays.fill(best, -1);
      for (int row = 0; row < scores.length; row++) {
        int e = index.entryOf(row);
        if (best[e] < 0 || scores[row] > scores[best[e]]) {
          best[e] = row;
        }
      }
      int[] order = IntStream.range(0, best.length).filter(e -> best[e] >= 0).boxed()
          .sorted(Comparator.<Integer>comparingDouble(e -> -scores[best[e]]).thenComparingInt(e -> e))
          .mapToInt(Integer::intValue).toArray();
      warnings.finish();
      out.printf(Locale.ROOT, "%d files, %d passages (%d files encoded now, %d skipped), index %s (%s tokens),"
          + " query of %d tokens, scored in %.1f ms (%s, first call: JIT cold)%n", entries.size(), scores.length,
          index.encoded(), index.skipped(), index.size(), index.store(), q.length(0), ms,
          maxSim.backendName());
      out.printf(Locale.ROOT, "%4s  %6s  %s%n", "rank", "score", "file:line  passage");
      for (int r = 0; r < Math.min(k, order.length); r++) {
        int row = best[order[r]];
        TextIndex.Entry e = entries.get(order[r]);
        TextIndex.Span span = e.passages().get(index.passageOf(row));
        out.printf(Locale.ROOT, "%4d  %6.3f  %s:%d  %s%n", r + 1, scores[row] / q.length(0), Names.escape(e.path()),
            span.line(), passageText(folder.resolve(e.path()), index.passageOf(row)));
      }
    }
    return 0;
  }

  /** The start of a passage, read again from its file ("" when the file changed or went since). */
  private static String passageText(Path file, int passage) {
    List<Passages.Passage> passages = TextFiles.tryRead(file).map(Passages::of).orElse(List.of());
    return passage < passages.size() ? TextFiles.snippet(passages.get(passage).text(), 70) : "";
  }
}
