package dev.maxsim4j.cli;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.TopK;
import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.cli.text.TextDemo;
import java.io.PrintStream;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * {@code demo}: real text by default ({@link TextDemo}); with {@code --synthetic}, a synthetic corpus with planted
 * topics, three queries, the ten best documents of each, and how long it took. A document is a bag of tokens
 * drawn mostly from its topic's "concept" vectors, so MaxSim should rank the query's topic first: the demo prints
 * the precision it reached.
 */
final class DemoCommand {
  static final String USAGE = """
      demo [--backend NAME] [--verbose]
        Search over the paragraphs that ship with maxsim4j: real text, token embeddings from
        all-MiniLM-L6-v2 (ONNX Runtime), three questions, each one's best three paragraphs.
      demo --synthetic [--docs N] [--threads N] [--backend NAME] [--verbose]
        A synthetic corpus instead (N documents, 64-300 bf16 tokens of d=128, planted topics): three
        queries, each one's top 10 and the precision reached.""";

  private static final int DIM = 128;
  private static final int TOPICS = 40;
  private static final int CONCEPTS = 12;
  /** Most tokens a synthetic document has. */
  private static final int MAX_DOC_TOKENS = 64 + 236;
  /** Documents whose tokens surely fit one Java array (the token count is an int). */
  static final int MAX_DOCS = Integer.MAX_VALUE / (MAX_DOC_TOKENS * DIM);

  private DemoCommand() {}

  static int run(String[] argv, PrintStream out, PrintStream err) {
    Args a = new Args("demo", argv, 1, Set.of("--docs", "--threads", "--backend"), Set.of("--synthetic", "--verbose"));
    if (!a.has("--synthetic")) {
      if (a.get("--docs") != null || a.get("--threads") != null) {
        throw new UsageException("demo: --docs and --threads belong to demo --synthetic");
      }
      return TextDemo.run(a, out, err);
    }
    int nDocs = a.intValue("--docs", 5_000, 1, MAX_DOCS);
    // the options are checked before the corpus is built, which is the slow part
    MaxSim.Builder builder = MaxSim.builder();
    if (a.get("--threads") != null) {
      builder.threads(a.threads(1));
    }
    SplittableRandom rnd = new SplittableRandom(2026);
    float[] concepts = new float[TOPICS * CONCEPTS * DIM];
    for (int c = 0; c < TOPICS * CONCEPTS; c++) {
      unitVector(rnd, concepts, c * DIM);
    }
    int[] topicOf = new int[nDocs];
    int[] offsets = new int[nDocs + 1];
    for (int j = 0; j < nDocs; j++) {
      topicOf[j] = rnd.nextInt(TOPICS);
      offsets[j + 1] = offsets[j] + 64 + rnd.nextInt(MAX_DOC_TOKENS - 64 + 1);
    }
    Progress progress = new Progress(err, "building " + Counts.of(nDocs, "document"));
    short[] docBits = new short[Math.multiplyExact(offsets[nDocs], DIM)];
    float[] token = new float[DIM];
    for (int j = 0; j < nDocs; j++) {
      for (int t = offsets[j]; t < offsets[j + 1]; t++) {
        // 60% of tokens from the document's topic, the rest from any topic: shared vocabulary
        int topic = rnd.nextInt(10) < 6 ? topicOf[j] : rnd.nextInt(TOPICS);
        noisyConcept(rnd, concepts, topic, token, 0.35);
        for (int k = 0; k < DIM; k++) {
          docBits[t * DIM + k] = DType.BFLOAT16.narrow(token[k]);
        }
      }
      progress.update(j + 1, nDocs);
    }
    progress.done();
    TokenBatch docs = TokenBatch.packedHalfs(DType.BFLOAT16, docBits, offsets, DIM);

    int[] queryTopics = {3, 17, 29};
    int lq = 32;
    float[] q = new float[queryTopics.length * lq * DIM];
    for (int i = 0; i < queryTopics.length; i++) {
      for (int s = 0; s < lq; s++) {
        noisyConcept(rnd, concepts, queryTopics[i], token, 0.5);
        System.arraycopy(token, 0, q, (i * lq + s) * DIM, DIM);
      }
    }
    TokenBatch queries = TokenBatch.ofFloats(q, queryTopics.length, lq, DIM);

    try (MaxSim maxSim = Engine.open(a, builder)) {
      maxSim.topK(queries, docs, 10); // warm-up: JIT compilation of the kernel
      long t0 = System.nanoTime();
      TopK top = maxSim.topK(queries, docs, 10);
      double ms = (System.nanoTime() - t0) / 1e6;
      double flops = 2.0 * queries.size() * lq * (double) offsets[nDocs] * DIM;
      out.printf(Locale.ROOT, "maxsim4j demo: %d queries x %s (%d bf16 tokens of d=%d), %s backend, %s%n",
          queryTopics.length, Counts.of(nDocs, "document"), offsets[nDocs], DIM, maxSim.backendName(),
          Counts.of(maxSim.threads(), "thread"));
      int hits = 0;
      for (int i = 0; i < queryTopics.length; i++) {
        out.printf(Locale.ROOT, "%nquery %d (topic %d): top %d%n", i, queryTopics[i], top.indices()[i].length);
        out.printf(Locale.ROOT, "  %4s  %7s  %5s  %8s%n", "rank", "doc", "topic", "score");
        for (int r = 0; r < top.indices()[i].length; r++) {
          int doc = top.indices()[i][r];
          boolean relevant = topicOf[doc] == queryTopics[i];
          hits += relevant ? 1 : 0;
          out.printf(Locale.ROOT, "  %4d  %7d  %5d  %8.3f  %s%n", r + 1, doc, topicOf[doc], top.scores()[i][r],
              relevant ? "relevant" : "");
        }
      }
      int listed = top.indices()[0].length; // 10, or every document of a smaller corpus
      out.printf(Locale.ROOT, "%nprecision@%d: %.2f   scoring time: %.1f ms (%.1f GFLOP/s, top-k streamed, no Nq x Nd"
          + " buffer)%n", listed, hits / ((double) listed * queryTopics.length), ms, flops / ms / 1e6);
    }
    return 0;
  }

  private static void noisyConcept(SplittableRandom rnd, float[] concepts, int topic, float[] token, double noise) {
    int c = (topic * CONCEPTS + rnd.nextInt(CONCEPTS)) * DIM;
    double sq = 0;
    for (int k = 0; k < DIM; k++) {
      double v = concepts[c + k] + noise * rnd.nextGaussian() / Math.sqrt(DIM);
      token[k] = (float) v;
      sq += v * v;
    }
    normalize(token, 0, sq);
  }

  /** A random direction: Gaussian entries, scaled to length 1. */
  private static void unitVector(SplittableRandom rnd, float[] v, int off) {
    double sq = 0;
    for (int k = 0; k < DIM; k++) {
      double x = rnd.nextGaussian();
      v[off + k] = (float) x;
      sq += x * x;
    }
    normalize(v, off, sq);
  }

  private static void normalize(float[] v, int off, double sq) {
    float inv = (float) (1 / Math.sqrt(Math.max(sq, 1e-30)));
    for (int k = 0; k < DIM; k++) {
      v[off + k] *= inv;
    }
  }
}
