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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;

/** {@code search}: the files of a folder that best match a query, by MaxSim over token embeddings. */
public final class SearchCommand {
  public static final String USAGE = """
      search --dir FOLDER --query TEXT [--k 5] [--candidates 200 | --exact] [--backend NAME]
             [--store bf16|int8|binary]
        Brings FOLDER's index up to date (see index), then ranks its files against the query: a file's score
        is that of its best passage (the mean over query tokens of the best cosine with any token of the
        passage); prints FILE:LINE of that passage and its start. The passages scored are the --candidates
        whose MUVERA encodings are nearest the query's (HNSW in the Lucene index), reranked by exact MaxSim;
        --exact scores every passage instead. Prints the time of each stage and the index's size. Skipped
        files are named on stderr. --store as for index (without it the index keeps its store).""";
  static final int CANDIDATES = 200;

  private SearchCommand() {}

  /** The best passage of one file: its row's file, passage number and line, and its MaxSim sum. */
  private record Best(String path, int passage, int line, float score) {}

  public static int run(String[] argv, PrintStream out, PrintStream err) throws IOException {
    Args a = new Args("search", argv, 1, Set.of("--dir", "--query", "--k", "--backend", "--store", "--candidates"),
        Set.of("--verbose", "--exact"));
    Store store = Store.parse("search", a.get("--store"));
    Path folder = Path.of(a.require("--dir"));
    String query = a.require("--query");
    if (query.isBlank()) {
      throw new UsageException("search: --query is empty; expected some text");
    }
    int k = a.intValue("--k", 5, 1);
    boolean exact = a.has("--exact");
    if (exact && a.get("--candidates") != null) {
      throw new UsageException("search: --candidates has no effect with --exact (every passage is scored)");
    }
    int candidates = a.intValue("--candidates", CANDIDATES, 1);
    Warnings warnings = new Warnings(err);
    try (MiniLmTokenEncoder encoder = MiniLmTokenEncoder.load();
        MaxSim maxSim = Engine.open(a)) {
      TextIndex index = TextIndex.update(folder, encoder, false, warnings, err, store);
      long t0 = System.nanoTime();
      TokenBatch q = encoder.encode(query);
      double encodeMs = (System.nanoTime() - t0) / 1e6;
      List<Best> best;
      String stages;
      String size;
      if (exact) {
        long t1 = System.nanoTime();
        float[] scores = ChunkedScores.of(maxSim, q, index.rows(), "passages", err);
        double ms = (System.nanoTime() - t1) / 1e6;
        best = bestPerFile(index, scores);
        stages = String.format(Locale.ROOT, "encode query %.1f ms, exact MaxSim over all %d passages %.1f ms",
            encodeMs, scores.length, ms);
        size = index.size();
      } else {
        try (LuceneIndex lucene = LuceneIndex.sync(folder, index, false, warnings, err)) {
          LuceneIndex.Result r = lucene.search(maxSim, q, candidates);
          best = bestPerFile(r.hits());
          stages = String.format(Locale.ROOT, "encode query %.1f ms, candidates %.1f ms (%d of %d passages by"
              + " their %d-d encodings), rerank %.1f ms", encodeMs, r.candidatesNanos() / 1e6, r.candidates(),
              lucene.passages(), lucene.encodingDimension(), r.rerankNanos() / 1e6);
          size = index.size() + " + Lucene " + lucene.size();
        }
      }
      warnings.finish();
      out.printf(Locale.ROOT, "%d files, %d passages (%d files encoded now, %d skipped), index %s (%s tokens),"
          + " query of %d tokens; %s (%s, first call: JIT cold)%n", index.entries().size(), index.rows().size(),
          index.encoded(), index.skipped(), size, index.store(), q.length(0), stages, maxSim.backendName());
      out.printf(Locale.ROOT, "%4s  %6s  %s%n", "rank", "score", "file:line  passage");
      for (int r = 0; r < Math.min(k, best.size()); r++) {
        Best b = best.get(r);
        out.printf(Locale.ROOT, "%4d  %6.3f  %s:%d  %s%n", r + 1, b.score() / q.length(0), Names.escape(b.path()),
            b.line(), passageText(folder.resolve(b.path()), b.passage()));
      }
    }
    return 0;
  }

  /** Each file's best passage by its score against every row, best first (ties: the earlier file). */
  private static List<Best> bestPerFile(TextIndex index, float[] scores) {
    List<TextIndex.Entry> entries = index.entries();
    int[] best = new int[entries.size()];
    Arrays.fill(best, -1);
    for (int row = 0; row < scores.length; row++) {
      int e = index.entryOf(row);
      if (best[e] < 0 || scores[row] > scores[best[e]]) {
        best[e] = row;
      }
    }
    return IntStream.range(0, best.length).filter(e -> best[e] >= 0).boxed()
        .sorted(Comparator.<Integer>comparingDouble(e -> -scores[best[e]]).thenComparingInt(e -> e))
        .map(e -> {
          TextIndex.Entry entry = entries.get(e);
          int passage = index.passageOf(best[e]);
          return new Best(entry.path(), passage, entry.passages().get(passage).line(), scores[best[e]]);
        }).toList();
  }

  /** Each file's best reranked passage, best first (hits come best first: a file's first hit is its best). */
  private static List<Best> bestPerFile(List<LuceneIndex.Hit> hits) {
    Map<String, Best> byFile = new LinkedHashMap<>();
    for (LuceneIndex.Hit h : hits) {
      byFile.putIfAbsent(h.path(), new Best(h.path(), h.passage(), h.line(), h.score()));
    }
    return new ArrayList<>(byFile.values());
  }

  /** The start of a passage, read again from its file ("" when the file changed or went since). */
  private static String passageText(Path file, int passage) {
    List<Passages.Passage> passages = TextFiles.tryRead(file).map(Passages::of).orElse(List.of());
    return passage < passages.size() ? TextFiles.snippet(passages.get(passage).text(), 70) : "";
  }
}
