package dev.maxsim4j.bench.retrieval;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.Sizes;
import dev.maxsim4j.cli.UsageException;
import dev.maxsim4j.cli.io.AtomicOutput;
import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.cli.io.PathArgument;
import dev.maxsim4j.lucene.LateInteractionRetriever;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * {@code retrieval --synthetic}: time per query of FDE candidates (HNSW in an on-disk Lucene index) + exact
 * rerank against exact MaxSim over the whole corpus (in memory, fp32), on {@link ClusteredCorpus} corpora of
 * growing size: the first grows with the log of the corpus (HNSW) and the candidate count, the second
 * linearly. {@code --exact-only} skips the indexes, so that every size's exact time comes from one quiet run.
 */
final class SyntheticScaling {
  private SyntheticScaling() {}

  /** The machine's memory, or the container's limit where one is set. */
  private static long physicalMemory() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getTotalMemorySize();
  }

  static int run(Args a, PrintStream out) throws IOException {
    int[] sizes = KnownItemEvaluation.ints("--synthetic", a.get("--synthetic"));
    int queries = a.intValue("--queries", 100, 1);
    int[] candidateList = KnownItemEvaluation.ints("--candidates", a.getOr("--candidates", "200"));
    ClusteredCorpus corpus = new ClusteredCorpus(42, 64, 16, 8);
    List<FdeParams> fdeList = FdeParams.parseList("--fde", a.getOr("--fde", "3:8:8"), corpus.dim);
    // one set and one count are timed: more, silently dropped, would read as measured
    if (candidateList.length > 1) {
      throw new UsageException("retrieval: --candidates '" + a.get("--candidates") + "'; expected one count with"
          + " --synthetic");
    }
    if (fdeList.size() > 1) {
      throw new UsageException("retrieval: --fde '" + a.get("--fde") + "'; expected one set with --synthetic");
    }
    for (int n : sizes) {
      // the corpus's token offsets are ints: a larger one wrapped them instead of failing
      if ((long) n * corpus.docTokens > Integer.MAX_VALUE) {
        throw new UsageException("retrieval: --synthetic " + n + " documents of " + corpus.docTokens + " tokens is "
            + (long) n * corpus.docTokens + " tokens; expected at most " + Integer.MAX_VALUE / corpus.docTokens
            + " documents");
      }
    }
    // the corpus lives off the heap, which -Xmx does not bound: too large, it is refused here, not killed by the system
    long perDocument = (long) corpus.docTokens * corpus.dim * Float.BYTES;
    long room = Math.max(0, physicalMemory() - Runtime.getRuntime().maxMemory());
    for (int n : sizes) {
      if (n > room / perDocument) {
        throw new UsageException("retrieval: --synthetic " + n + " documents take " + Sizes.of(n * perDocument)
            + " of native memory; this machine has " + Sizes.of(room) + " beside the JVM's heap; expected at most "
            + room / perDocument + " documents");
      }
    }
    // every query's tokens are held at once (as small arrays): a count the heap cannot hold is refused, not run out of
    long perQuery = (long) corpus.queryTokens * (corpus.dim * Float.BYTES + 16) + 64;
    long heap = Runtime.getRuntime().maxMemory();
    if (queries > heap / 2 / perQuery) {
      throw new UsageException("retrieval: --queries " + queries + "; their tokens take about " + perQuery + " bytes"
          + " each, more than half this JVM's heap (" + (heap >> 20) + " MiB) in all; expected at most "
          + heap / 2 / perQuery + ", or a larger -Xmx through JAVA_OPTS");
    }
    int candidates = candidateList[0];
    FdeParams params = fdeList.get(0);
    if (!a.has("--exact-only")) {
      // HNSW holds a segment's encodings on the heap while it builds the graph: an estimate the heap must pass
      long heapBytes = Runtime.getRuntime().maxMemory();
      int dimension = params.encoder(corpus.dim).dimension();
      for (int n : sizes) {
        long bytes = (long) n * dimension * Float.BYTES;
        if (bytes > heapBytes) {
          throw new UsageException("retrieval: --fde " + params + " for --synthetic " + n + ": " + n + " documents x "
              + dimension + " dimensions of encodings need about " + (bytes >> 20) + " MiB while the index is"
              + " built; the heap is " + (heapBytes >> 20) + " MiB (smaller sizes, a smaller set, or -Xmx through"
              + " JAVA_OPTS)");
        }
      }
    }
    int threads = a.threads(Runtime.getRuntime().availableProcessors());
    Path indexRoot = a.get("--index-dir") != null ? PathArgument.of("--index-dir", a.get("--index-dir"))
        : RetrievalCommand.defaultCache().resolve("index");
    Report report = new Report(out);
    report.fact(String.format(Locale.ROOT, "synthetic: %d centres, %d-d unit tokens, %d per document (%d topics),"
            + " %d per query (a document's tokens, perturbed); %d queries per size; %s; %d threads",
        ClusteredCorpus.CENTRES, corpus.dim, corpus.docTokens, ClusteredCorpus.TOPICS, corpus.queryTokens, queries,
        a.has("--exact-only") ? "exact MaxSim alone" : "FDE " + params + " + exact rerank of " + candidates
            + " candidates", threads));
    try (MaxSim maxSim = MaxSim.builder().backend("cpu").threads(threads).build()) {
      for (int n : sizes) {
        try (Arena arena = Arena.ofShared()) {
          long start = System.nanoTime();
          Encoded docs = corpus.documents(n, arena);
          double generated = (System.nanoTime() - start) / 1e9;
          int[] target = new int[queries];
          float[][][] q = new float[queries][][];
          for (int j = 0; j < queries; j++) {
            target[j] = (int) ((long) j * n / queries);
            q[j] = corpus.query(j, target[j]);
          }
          TokenBatch all = docs.batch();
          int[][] exactTop = new int[queries][];
          for (int j = 0; j < Math.min(3, queries); j++) {
            maxSim.topK(TokenBatch.ofQuery(q[j]), all, Ranking.TOP);
          }
          Ranking exact = new Ranking();
          long exactNs = 0;
          for (int j = 0; j < queries; j++) {
            start = System.nanoTime();
            exactTop[j] = maxSim.topK(TokenBatch.ofQuery(q[j]), all, Ranking.TOP).indices()[0];
            exactNs += System.nanoTime() - start;
            exact.add(exactTop[j], target[j], exactTop[j]);
          }
          String size = Counts.of(n, "doc");
          report.fact(String.format(Locale.ROOT, "%s: generated in %.1f s; load %s", size, generated, Report.load()));
          report.header();
          report.add(size, "exact MaxSim (in memory, fp32)", "-", 0, exact, exactNs / 1e6 / queries, "");
          if (a.has("--exact-only")) {
            continue;
          }
          LateInteractionRetriever retriever = new LateInteractionRetriever(params.encoder(corpus.dim),
              LuceneIndex.FDE, LuceneIndex.TOKENS, maxSim);
          Path dir = indexRoot.resolve("synthetic-" + n + "-" + params.toString().replace(':', '-'));
          // the index is deleted however its size's run ends (out of memory, say), not left half built
          try (LuceneIndex index = LuceneIndex.build(dir, docs, retriever, null, maxSim, threads, false)) {
            for (int j = 0; j < Math.min(20, queries); j++) {
              index.fdeRerank(q[j], candidates, Ranking.TOP);
            }
            Ranking fde = new Ranking();
            long fdeNs = 0;
            for (int j = 0; j < queries; j++) {
              start = System.nanoTime();
              int[] top = index.fdeRerank(q[j], candidates, Ranking.TOP);
              fdeNs += System.nanoTime() - start;
              fde.add(top, target[j], exactTop[j]);
            }
            report.add(size, "FDE HNSW + exact rerank", params + "=" + retriever.encoder().dimension(), candidates,
                fde, fdeNs / 1e6 / queries, String.format(Locale.ROOT, "index built in %.1f s, %.2f GB, %d segments",
                    index.buildSeconds, index.bytes / 1e9, index.segments));
          } catch (IOException | RuntimeException | Error e) {
            try {
              LuceneIndex.deleteTree(dir);
            } catch (IOException | RuntimeException suppressed) {
              e.addSuppressed(suppressed);
            }
            throw e;
          }
          LuceneIndex.deleteTree(dir);
        }
      }
    }
    if (a.get("--json") != null) {
      AtomicOutput.writeString("--json", AtomicOutput.target("--json", a.get("--json")), List.of(), report.toJson());
    }
    return 0;
  }
}
