package dev.maxsim4j.cli.text;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.Engine;
import dev.maxsim4j.cli.UsageException;
import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.cli.io.PathArgument;
import dev.maxsim4j.cli.io.Printable;
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
      search --dir FOLDER (--query TEXT | --queries FILE) [--k 5] [--candidates 200 | --exact]
             [--rerank tokens|lucene] [--backend NAME] [--store bf16|int8|binary] [--verbose]
        Brings FOLDER's index up to date (see index), then ranks its files against the query: a file's score
        is that of its best passage (the mean over query tokens of the best cosine with any token of the
        passage); prints FILE:LINE of that passage and its start. The passages scored are the --candidates
        whose MUVERA encodings are nearest the query's (HNSW in the Lucene index; doubled until they name --k
        files, where passages alike in a few files fill them), reranked by exact MaxSim
        on their tokens gathered from the tokens file (--rerank tokens, the default: one fused call) or read
        from the Lucene index (--rerank lucene: MaxSimRescorer, as a Lucene deployment would); --exact
        scores every passage instead. Prints the time of each stage and the index's size. --queries:
        one query per line (blank lines skipped, and lines that are not UTF-8 with a warning), each ranked in
        turn and named by its line, then the mean time of each stage per query (the first query left out: its
        time is mostly the JIT's). Skipped files are named on stderr.
        A passage (or query) without a word piece (only format, control or lone combining characters, or
        only what the model's vocabulary lacks: emoji, scripts such as Thai) has no text to match: it is
        never listed (a query is an error, named by its line of --queries before any work). --store as for
        index (without it the index keeps its store).""";
  static final int CANDIDATES = 200;

  private SearchCommand() {}

  /** The best passage of one file: its row's file, passage number and line, and its MaxSim sum. */
  private record Best(String path, int passage, int line, float score) {}

  /** One query's ranking and the nanoseconds of its stages: encode, candidates (0 for exact), score. */
  private record Ranked(List<Best> best, int queryTokens, long encode, long candidates, long score, int scored) {}

  public static int run(String[] argv, PrintStream out, PrintStream err) throws IOException {
    Args a = new Args("search", argv, 1, Set.of("--dir", "--query", "--queries", "--k", "--backend", "--store",
        "--candidates", "--rerank"), Set.of("--verbose", "--exact"));
    Store store = Store.parse("search", a.get("--store"));
    String dir = a.require("--dir");
    Warnings warnings = new Warnings(err);
    List<TextFiles.Line> lines = queries(a, warnings);
    List<String> queries = lines.stream().map(TextFiles.Line::text).toList();
    int k = a.intValue("--k", 5, 1);
    boolean exact = a.has("--exact");
    if (exact && a.get("--candidates") != null) {
      throw new UsageException("search: --candidates has no effect with --exact (every passage is scored)");
    }
    int candidates = a.intValue("--candidates", CANDIDATES, 1);
    String rerank = a.getOr("--rerank", "tokens");
    if (!rerank.equals("tokens") && !rerank.equals("lucene")) {
      throw new UsageException("search: --rerank = " + rerank + "; expected tokens or lucene");
    }
    if (exact && a.get("--rerank") != null) {
      throw new UsageException("search: --rerank has no effect with --exact (every passage is scored)");
    }
    Path folder = TextFiles.folder("--dir", dir);
    try (TextModel encoder = TextModel.load();
        MaxSim maxSim = Engine.open(a);
        UpdateLock lock = new UpdateLock(err)) {
      // every query is checked before the index work and before any is ranked (by the tokenizer: each is encoded
      // once, when ranked), so that a bad line of --queries does not end the run after the rankings before it
      for (TextFiles.Line line : lines) {
        requireText(line.number() == 0 ? "search" : "search: --queries "
            + TextFiles.shown(PathArgument.of("--queries", a.get("--queries"))) + " line " + line.number(), line.text(),
            encoder.hasWordPiece(line.text()));
      }
      TextIndex index = TextIndex.update(folder, () -> encoder, false, warnings, err, store, lock);
      LuceneIndex lucene = exact ? null : LuceneIndex.sync(folder, index, maxSim, false, warnings, err);
      // the queries read only what is loaded and open, so another run may update the folder's index meanwhile
      lock.close();
      try {
        warnings.finish();
        String size = index.size() + (lucene == null ? "" : " + Lucene " + lucene.size());
        String summary = String.format(Locale.ROOT, "%s, %s (%s encoded now, %d skipped), index %s (%s tokens),"
            + " %s backend", Counts.of(index.entries().size(), "file"), Counts.of(index.rows().size(), "passage"),
            Counts.of(index.encoded(), "file"), index.skipped(), size, index.store(), maxSim.backendName());
        if (queries.size() > 1) {
          out.println(summary);
        }
        int filesWithText = (int) IntStream.range(0, index.rows().size()).filter(row -> hasText(index, row))
            .map(index::entryOf).distinct().count();
        long[] sums = new long[3];
        for (int i = 0; i < queries.size(); i++) {
          Ranked r = rank(encoder, maxSim, index, lucene, rerank.equals("lucene"), queries.get(i), candidates,
              Math.min(k, filesWithText), err);
          String stages = stages(r, lucene) + (i == 0 ? " (first query: JIT cold)" : "");
          if (queries.size() > 1) {
            // the line named too: blank lines and lines that are not UTF-8 are skipped, so the count alone would
            // pair a ranking with the wrong line of the file
            out.printf(Locale.ROOT, "%nquery %d (line %d): %s%n%s%n", i + 1, lines.get(i).number(),
                Printable.oneLine(queries.get(i)), stages);
          } else {
            out.println(summary + "; " + stages);
          }
          print(out, index, r, k);
          if (i > 0) {
            sums[0] += r.encode();
            sums[1] += r.candidates();
            sums[2] += r.score();
          }
        }
        if (queries.size() > 1) {
          double n = (queries.size() - 1) * 1e6;
          out.printf(Locale.ROOT, "%n%d queries, mean per query after the first: encode %.2f ms, %s%n",
              queries.size(), sums[0] / n, lucene == null ? String.format(Locale.ROOT, "exact MaxSim %.2f ms",
                  sums[2] / n) : String.format(Locale.ROOT, "candidates %.2f ms, rerank %.2f ms", sums[1] / n,
                  sums[2] / n));
        }
      } finally {
        if (lucene != null) {
          lucene.close();
        }
      }
    }
    return 0;
  }

  /**
   * The queries: --query TEXT (as line 0), or the lines of --queries FILE (lines that are not UTF-8 skipped with a
   * warning).
   */
  private static List<TextFiles.Line> queries(Args a, Warnings warnings) throws IOException {
    String query = a.text("--query");
    String file = a.get("--queries");
    if ((query == null) == (file == null)) {
      throw new UsageException("search: give either --query TEXT or --queries FILE");
    }
    if (query != null) {
      if (TextFiles.blank(query)) {
        throw new UsageException("search: --query is empty (white space only); expected some text");
      }
      return List.of(new TextFiles.Line(0, query));
    }
    Path path = PathArgument.of("--queries", file);
    List<TextFiles.Line> lines = TextFiles.lines("--queries", path, warnings);
    if (lines.isEmpty()) {
      throw new IllegalArgumentException("--queries " + file + " holds no query; expected one per line");
    }
    return lines;
  }

  /**
   * Ranks the files against {@code query}. From candidates, until their best passages name {@code files} files (the
   * k asked for, or every file with text where fewer): the candidates are passages, and passages alike (copies in one
   * file, say) could fill them all, listing fewer files than asked and missing a better one. Each round doubles them;
   * past half the passages the round scores every passage as --exact does, in slices of bounded memory. The stages'
   * times are those of all rounds, the candidates' count that of the last.
   */
  private static Ranked rank(TextModel encoder, MaxSim maxSim, TextIndex index, LuceneIndex lucene,
      boolean viaLucene, String query, int candidates, int files, PrintStream err) throws IOException {
    long t0 = System.nanoTime();
    TokenBatch q = encoder.encode(query);
    long encode = System.nanoTime() - t0;
    if (lucene == null) {
      long t1 = System.nanoTime();
      float[] scores = ChunkedScores.of(maxSim, q, index.rows(), "passage", err);
      return new Ranked(bestPerFile(index, scores), q.length(0), encode, 0, System.nanoTime() - t1, scores.length);
    }
    long candidateNanos = 0;
    long rerankNanos = 0;
    for (int c = candidates; ; c *= 2) {
      Ranked r = rerank(maxSim, index, lucene, viaLucene, q, c, encode);
      candidateNanos += r.candidates();
      rerankNanos += r.score();
      if (r.best().size() >= files || c >= lucene.passages()) {
        return new Ranked(r.best(), r.queryTokens(), encode, candidateNanos, rerankNanos, r.scored());
      }
      if ((long) c * 2 > lucene.passages() / 2) {
        long t1 = System.nanoTime();
        float[] scores = ChunkedScores.of(maxSim, q, index.rows(), "passage", err);
        return new Ranked(bestPerFile(index, scores), q.length(0), encode, candidateNanos,
            rerankNanos + System.nanoTime() - t1, scores.length);
      }
    }
  }

  /** One round of {@link #rank} from {@code candidates} candidates. */
  private static Ranked rerank(MaxSim maxSim, TextIndex index, LuceneIndex lucene, boolean viaLucene, TokenBatch q,
      int candidates, long encode) throws IOException {
    if (!viaLucene) {
      long t1 = System.nanoTime();
      List<LuceneIndex.Hit> near = lucene.candidates(q, candidates).stream()
          .filter(h -> hasText(index, index.rowOf(h.path(), h.passage()))).toList();
      long t2 = System.nanoTime();
      int[] rows = near.stream().mapToInt(h -> index.rowOf(h.path(), h.passage())).toArray();
      float[] scores = rows.length == 0 ? new float[0] : maxSim.scores(q, index.rows().gather(rows))[0];
      List<LuceneIndex.Hit> reranked = IntStream.range(0, rows.length).boxed()
          .sorted(Comparator.<Integer>comparingDouble(i -> -scores[i]).thenComparingInt(i -> rows[i]))
          .map(i -> new LuceneIndex.Hit(near.get(i).path(), near.get(i).passage(), near.get(i).line(), scores[i]))
          .toList();
      return new Ranked(bestPerFile(reranked), q.length(0), encode, t2 - t1, System.nanoTime() - t2, near.size());
    }
    LuceneIndex.Result r = lucene.search(maxSim, q, candidates);
    // ties in row order, as the other paths break them: Lucene's doc order leaves the files' order once an update
    // has added a file's passages again
    List<LuceneIndex.Hit> hits = r.hits().stream().filter(h -> hasText(index, index.rowOf(h.path(), h.passage())))
        .sorted(Comparator.<LuceneIndex.Hit>comparingDouble(h -> -h.score())
            .thenComparingInt(h -> index.rowOf(h.path(), h.passage())))
        .toList();
    return new Ranked(bestPerFile(hits), q.length(0), encode, r.candidatesNanos(), r.rerankNanos(), r.candidates());
  }

  private static String stages(Ranked r, LuceneIndex lucene) {
    if (lucene == null) {
      return String.format(Locale.ROOT, "query of %s: encode %.1f ms, exact MaxSim over all %s %.1f ms",
          Counts.of(r.queryTokens(), "token"), r.encode() / 1e6, Counts.of(r.scored(), "passage"), r.score() / 1e6);
    }
    return String.format(Locale.ROOT, "query of %s: encode %.1f ms, candidates %.1f ms (%d of %s by their %d-d"
        + " encodings), rerank %.1f ms", Counts.of(r.queryTokens(), "token"), r.encode() / 1e6, r.candidates() / 1e6,
        r.scored(), Counts.of(lucene.passages(), "passage"), lucene.encodingDimension(), r.score() / 1e6);
  }

  private static void print(PrintStream out, TextIndex index, Ranked r, int k) {
    out.printf(Locale.ROOT, "%4s  %6s  %s%n", "rank", "score", "file:line  passage");
    for (int i = 0; i < Math.min(k, r.best().size()); i++) {
      Best b = r.best().get(i);
      out.printf(Locale.ROOT, "%4d  %6.3f  %s:%d  %s%n", i + 1, b.score() / r.queryTokens(),
          Names.escape(b.path()), b.line(), passageText(index, b.path(), b.passage()));
    }
  }

  /** Each file's best passage by its score against every row, best first (ties: the earlier file). */
  private static List<Best> bestPerFile(TextIndex index, float[] scores) {
    List<TextIndex.Entry> entries = index.entries();
    int[] best = new int[entries.size()];
    Arrays.fill(best, -1);
    for (int row = 0; row < scores.length; row++) {
      int e = index.entryOf(row);
      if (hasText(index, row) && (best[e] < 0 || scores[row] > scores[best[e]])) {
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

  /**
   * Whether a row of the index is a passage with text: one the tokenizer kept no word piece of (only format, control
   * or lone combining characters, or only what the vocabulary lacks) is its [CLS] and [SEP] alone, which would match
   * every query alike.
   */
  private static boolean hasText(TextIndex index, int row) {
    return row >= 0 && MiniLmTokenEncoder.hasWordPiece(index.rows().length(row));
  }

  /**
   * Refuses a query the tokenizer kept no word piece of: its [CLS] and [SEP] alone would rank the passages by
   * nothing the query says.
   */
  static void requireText(String command, String query, boolean hasWordPiece) {
    if (!hasWordPiece) {
      throw new IllegalArgumentException(command + ": the query \"" + TextFiles.snippet(query, 40) + "\" has no word"
          + " piece (only format, control or lone combining characters, or only what the model's vocabulary lacks:"
          + " emoji, scripts such as Thai); expected some text");
    }
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
  private static String passageText(TextIndex index, String path, int passage) {
    List<Passages.Passage> passages = index.indexedText(path).map(Passages::of).orElse(List.of());
    return passage < passages.size() ? TextFiles.snippet(passages.get(passage).text(), 70) : "";
  }
}
