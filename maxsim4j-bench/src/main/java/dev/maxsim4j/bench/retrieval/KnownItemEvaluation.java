package dev.maxsim4j.bench.retrieval;

import dev.maxsim4j.FixedDimensionalEncoder;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.bench.retrieval.KnownItems.Item;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.UsageException;
import dev.maxsim4j.cli.io.AtomicOutput;
import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.cli.io.PathArgument;
import dev.maxsim4j.langchain4j.MiniLmTokenEncoder;
import dev.maxsim4j.lucene.LateInteractionRetriever;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The Debian known-item evaluation: exact MaxSim over every document as the reference, then each candidate
 * generator, first as a brute-force scan (what the encoding itself can find, without HNSW's own misses) and
 * then end to end in an on-disk Lucene index (HNSW + exact rerank), timed per query.
 */
final class KnownItemEvaluation {
  /** Queries timed before the timed pass of each method, so the JIT has compiled what it runs. */
  private static final int WARMUP = 20;

  private KnownItemEvaluation() {}

  interface Search {
    int[] run(int query) throws IOException;
  }

  static int run(Args a, List<Item> items, TokenCache cache, PrintStream out) throws IOException {
    int docs = a.intValue("--docs", Math.min(10_000, items.size()), 1);
    if (docs > items.size()) {
      throw new UsageException("--docs " + docs + " is more than the " + items.size() + " pinned packages");
    }
    int queries = a.intValue("--queries", Math.min(500, docs), 1);
    if (queries > docs) {
      throw new UsageException("--queries " + queries + " is more than --docs " + docs);
    }
    int[] candidates = ints("--candidates", a.getOr("--candidates", "100,500,2000"));
    List<FdeParams> sweep = FdeParams.parseList("--fde", a.getOr("--fde", "4:8:8"), MiniLmTokenEncoder.DIM);
    List<FdeParams> indexed = a.getOr("--lucene", "first").equals("none") ? List.of()
        : a.getOr("--lucene", "first").equals("first") ? sweep.subList(0, 1)
        : FdeParams.parseList("--lucene", a.get("--lucene"), MiniLmTokenEncoder.DIM);
    // every document's FDE is one array of a set: past its size or the heap, found only after the exact search
    checkEncodings("--fde", sweep, docs);
    checkEncodings("--lucene", indexed, docs);
    int threads = a.threads(Runtime.getRuntime().availableProcessors());
    int exactTimed = a.intValue("--exact-timed", 50, 0);
    // read here, not in the Lucene step: there a bad value ended the run after the exact search and the sweep
    int luceneExact = a.intValue("--lucene-exact", 5, 0);
    Path indexRoot = PathArgument.of("--index-dir",
        a.getOr("--index-dir", cache.dir().resolveSibling("index").toString()));
    String corpus = Counts.of(docs, "doc");
    Report report = new Report(out);
    try (Arena arena = Arena.ofShared(); MaxSim maxSim = MaxSim.builder().backend("cpu").threads(threads).build()) {
      Encoded d = cache.load("doc", docs, arena);
      int[] relevant = new int[queries];
      for (int i = 0; i < queries; i++) {
        relevant[i] = (int) ((long) i * docs / queries);
      }
      Encoded q = cache.load("query", docs, arena).gather(relevant, arena);
      report.fact(String.format(Locale.ROOT, "corpus: %d Debian long descriptions (%.1f MiniLM tokens on average,"
              + " bf16), %d queries (one-line descriptions, %.1f tokens on average); %d threads; load %s", docs,
          d.tokenCount() / (double) docs, queries, q.tokenCount() / (double) queries, threads, Report.load()));

      // the reference: every query against every document in one fp32 batch (the CPU kernel's fastest input)
      float[][] exact;
      int[][] exactTop = new int[queries][];
      Ranking exactRanking = new Ranking();
      int timedQueries = Math.min(exactTimed, queries);
      long start;
      try (Arena wide = Arena.ofShared()) {
        Encoded d32 = d.toFloat32(wide);
        start = System.nanoTime();
        exact = maxSim.scores(q.batch(), d32.batch());
        double batchMs = (System.nanoTime() - start) / 1e6 / queries;
        for (int i = 0; i < queries; i++) {
          exactTop[i] = Ranking.top(exact[i], Ranking.TOP);
          exactRanking.add(exactTop[i], relevant[i], exactTop[i]);
        }
        report.header();
        report.add(corpus, "exact MaxSim (in memory, fp32)", "-", 0, exactRanking, timeExact(maxSim, q, d32,
            timedQueries), String.format(Locale.ROOT, "one query at a time (%d timed); %.2f ms/query in one"
                + " batch of all", timedQueries, batchMs));
      }
      report.add(corpus, "exact MaxSim (in memory, bf16)", "-", 0, exactRanking, timeExact(maxSim, q, d,
          timedQueries), String.format(Locale.ROOT, "one query at a time (%d timed); ranking as fp32's",
              timedQueries));

      Map<FdeParams, float[]> kept = new HashMap<>();
      for (FdeParams p : sweep) {
        FixedDimensionalEncoder encoder = p.encoder(d.dim());
        start = System.nanoTime();
        float[] docEnc = encodeDocuments(encoder, d);
        double encodeMs = (System.nanoTime() - start) / 1e6 / docs;
        float[] queryEnc = flat(encoder.encodeQueries(q.batch()));
        float[][] scores = maxSim.scores(TokenBatch.ofFloats(queryEnc, queries, 1, encoder.dimension()),
            TokenBatch.ofFloats(docEnc, docs, 1, encoder.dimension()));
        scan(report, corpus, "FDE scan", p.toString() + "=" + encoder.dimension(), scores, exact, exactTop, relevant,
            candidates, String.format(Locale.ROOT, "brute-force inner products; encode %.2f ms/doc", encodeMs));
        if (indexed.contains(p)) {
          kept.put(p, docEnc);
        }
      }
      float[] means = new float[docs * d.dim()];
      for (int i = 0; i < docs; i++) {
        System.arraycopy(d.meanUnit(i), 0, means, i * d.dim(), d.dim());
      }
      float[] queryMeans = new float[queries * d.dim()];
      for (int i = 0; i < queries; i++) {
        System.arraycopy(q.meanUnit(i), 0, queryMeans, i * d.dim(), d.dim());
      }
      float[][] meanScores = maxSim.scores(TokenBatch.ofFloats(queryMeans, queries, 1, d.dim()),
          TokenBatch.ofFloats(means, docs, 1, d.dim()));
      scan(report, corpus, "mean-pooled scan", "-", meanScores, exact, exactTop, relevant, candidates,
          "brute-force cosine of mean token vectors");

      for (FdeParams p : indexed) {
        float[] encodings = kept.containsKey(p) ? kept.remove(p) : encodeDocuments(p.encoder(d.dim()), d);
        lucene(report, corpus, p, d, q, encodings, relevant, exactTop, candidates, maxSim, threads,
            indexRoot.resolve(cache.dir().getFileName() + "-" + docs + "-" + p.toString().replace(':', '-')),
            luceneExact);
      }
    }
    if (a.get("--json") != null) {
      AtomicOutput.writeString("--json", AtomicOutput.target("--json", a.get("--json")), List.of(), report.toJson());
    }
    return 0;
  }

  /** FDE-only and FDE-candidates + exact rerank rows from brute-force candidate scores. */
  private static void scan(Report report, String corpus, String method, String fde, float[][] scores,
      float[][] exact, int[][] exactTop, int[] relevant, int[] candidates, String note) {
    Ranking alone = new Ranking();
    for (int i = 0; i < scores.length; i++) {
      alone.add(Ranking.top(scores[i], Ranking.TOP), relevant[i], exactTop[i]);
    }
    report.add(corpus, method + " only", fde, 0, alone, Double.NaN, note);
    for (int c : candidates) {
      Ranking reranked = new Ranking();
      for (int i = 0; i < scores.length; i++) {
        reranked.add(Ranking.top(exact[i], Ranking.top(scores[i], c), Ranking.TOP), relevant[i], exactTop[i]);
      }
      report.add(corpus, method + " + exact rerank", fde, c, reranked, Double.NaN, "");
    }
  }

  private static void lucene(Report report, String corpus, FdeParams p, Encoded d, Encoded q, float[] encodings,
      int[] relevant,
      int[][] exactTop, int[] candidates, MaxSim maxSim, int threads, Path dir, int luceneExact) throws IOException {
    FixedDimensionalEncoder encoder = p.encoder(d.dim());
    LateInteractionRetriever retriever = new LateInteractionRetriever(encoder, LuceneIndex.FDE, LuceneIndex.TOKENS,
        maxSim);
    try (LuceneIndex index = LuceneIndex.build(dir, d, retriever, encodings, maxSim, threads, true)) {
      report.fact(String.format(Locale.ROOT, "Lucene index (FDE %s, %d dims, %s; tokens fp32; mean 384-d) of %s:"
              + " built in %.1f s (FDEs encoded beforehand), %.2f GB on disk (token doc values %.2f GB,"
              + " vectors + graphs %.2f GB), %d segments; load %s", p, encoder.dimension(),
          encoder.dimension() > 1024 ? "WideVectorsCodec" : "default codec", corpus, index.buildSeconds,
          index.bytes / 1e9, index.bytesOf(dir, "dvd") / 1e9,
          index.bytesOf(dir, "vec", "vex", "veq", "vemf", "vem") / 1e9, index.segments, Report.load()));
      float[][][] tokens = new float[q.size()][][];
      float[][] means = new float[q.size()][];
      for (int i = 0; i < q.size(); i++) {
        tokens[i] = q.row(i);
        means[i] = q.meanUnit(i);
      }
      String fde = p + "=" + encoder.dimension();
      timed(report, corpus, "FDE HNSW only (k=10)", fde, 0, relevant, exactTop,
          i -> index.fdeOnly(tokens[i], Ranking.TOP), "");
      for (int c : candidates) {
        timed(report, corpus, "FDE HNSW + exact rerank", fde, c, relevant, exactTop,
            i -> index.fdeRerank(tokens[i], c, Ranking.TOP), "LateInteractionRetriever.search");
      }
      for (int c : candidates) {
        timed(report, corpus, "mean-pooled HNSW + exact rerank", "-", c, relevant, exactTop,
            i -> index.meanRerank(tokens[i], means[i], c, Ranking.TOP), "MaxSimRescorer");
      }
      int exactQueries = Math.min(q.size(), luceneExact);
      if (exactQueries > 0) {
        int[] sub = Arrays.copyOf(relevant, exactQueries);
        timed(report, corpus, "exact MaxSim in Lucene (brute force)", "-", 0, sub, exactTop,
            i -> index.exact(tokens[i], Ranking.TOP), "LateInteractionRetriever.searchExact, "
                + Counts.of(exactQueries, "query", "queries"));
      }
    }
  }

  /** Runs every query (after a warm-up), adding its quality and mean time per query. */
  private static void timed(Report report, String corpus, String method, String fde, int candidates,
      int[] relevant, int[][] exactTop, Search search, String note) throws IOException {
    int n = relevant.length;
    for (int i = 0; i < Math.min(WARMUP, n) && n > 1; i++) {
      search.run(i);
    }
    Ranking r = new Ranking();
    long total = 0;
    for (int i = 0; i < n; i++) {
      long start = System.nanoTime();
      int[] top = search.run(i);
      total += System.nanoTime() - start;
      r.add(top, relevant[i], exactTop[i]);
    }
    report.add(corpus, method, fde, candidates, r, total / 1e6 / n, note);
  }

  /** Mean time of one query's exact top 10 over the whole corpus, one query at a time, after a warm-up. */
  private static double timeExact(MaxSim maxSim, Encoded q, Encoded d, int n) {
    if (n == 0) {
      return Double.NaN;
    }
    TokenBatch all = d.batch();
    for (int i = 0; i < Math.min(3, n); i++) {
      maxSim.topK(q.rows(i, i + 1), all, Ranking.TOP);
    }
    long start = System.nanoTime();
    for (int i = 0; i < n; i++) {
      maxSim.topK(q.rows(i, i + 1), all, Ranking.TOP);
    }
    return (System.nanoTime() - start) / 1e6 / n;
  }

  private static void checkEncodings(String option, List<FdeParams> sets, int docs) {
    for (FdeParams p : sets) {
      long floats = (long) docs * p.encoder(MiniLmTokenEncoder.DIM).dimension();
      if (floats > Integer.MAX_VALUE - 8) {
        throw new UsageException(option + " " + p + ": " + Counts.of(docs, "document") + " x " + floats / docs
            + " dimensions = "
            + floats + " floats, more than one Java array holds; expected at most " + (Integer.MAX_VALUE - 8)
            + " (fewer --docs or a smaller set)");
      }
      if (Float.BYTES * floats > Runtime.getRuntime().maxMemory()) {
        throw new UsageException(option + " " + p + ": " + Counts.of(docs, "document") + " x " + floats / docs
            + " dimensions need "
            + (Float.BYTES * floats >> 20) + " MiB; the heap is " + (Runtime.getRuntime().maxMemory() >> 20)
            + " MiB (fewer --docs, a smaller set, or -Xmx through JAVA_OPTS)");
      }
    }
  }

  private static float[] encodeDocuments(FixedDimensionalEncoder encoder, Encoded d) {
    int dim = encoder.dimension();
    float[] out = new float[Math.multiplyExact(d.size(), dim)];
    for (int from = 0; from < d.size(); from += 1000) {
      int to = Math.min(d.size(), from + 1000);
      float[][] part = encoder.encodeDocuments(d.rows(from, to));
      for (int i = 0; i < part.length; i++) {
        System.arraycopy(part[i], 0, out, (from + i) * dim, dim);
      }
    }
    return out;
  }

  private static float[] flat(float[][] rows) {
    int dim = rows.length == 0 ? 0 : rows[0].length;
    float[] out = new float[rows.length * dim];
    for (int i = 0; i < rows.length; i++) {
      System.arraycopy(rows[i], 0, out, i * dim, dim);
    }
    return out;
  }

  static int[] ints(String option, String value) {
    String expected = "; expected integers from 1 to " + Integer.MAX_VALUE + " (plain digits), comma-separated";
    try {
      int[] v = Arrays.stream(value.split(",", -1)).map(String::strip).mapToInt(Args::parseInt).toArray();
      for (int x : v) {
        if (x < 1) {
          throw new UsageException("retrieval: " + option + " '" + value + "'" + expected);
        }
      }
      return v;
    } catch (NumberFormatException e) {
      throw new UsageException("retrieval: " + option + " '" + value + "'" + expected);
    }
  }
}
