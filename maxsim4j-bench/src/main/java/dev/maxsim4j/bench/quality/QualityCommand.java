package dev.maxsim4j.bench.quality;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.bench.Synthetic;
import dev.maxsim4j.bench.quality.DebianDescriptions.Description;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.Sizes;
import dev.maxsim4j.cli.UsageException;
import dev.maxsim4j.cli.io.AtomicOutput;
import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.cli.io.PathArgument;
import dev.maxsim4j.cli.text.TextModel;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * {@code quality}: how much ranking quality each compressed document type costs. Documents are scored as
 * fp32 and as each compressed type ({@link TokenBatch#quantize}); the compressed scores are compared with the
 * fp32 ones (relative error, top-10 overlap) on random unit vectors and on all-MiniLM-L6-v2 token embeddings
 * of real text: Debian package descriptions, each package's one-line summary as a query against the long
 * descriptions of the packages named in {@code debian-packages.txt}.
 */
public final class QualityCommand {
  public static final String USAGE = """
      quality [--translations FILE] [--docs N] [--queries N] [--random-docs N] [--threads N] [--json FILE]
        score error and top-10 agreement with fp32 of int8, fp8 and binary documents (fp32 queries) and of
        binary-sym (queries 1-bit too): on random 128-d unit vectors (--random-docs, default 2000, at most
        65535 and what the heap holds, about 220 KB each; 100 queries of 32 tokens) and on MiniLM token
        embeddings of Debian package descriptions (--docs long descriptions, default 3000, at most the 3000
        listed packages; --queries one-line summaries of every (docs/queries)-th package, default 300). FILE:
        apt's Translation-en list (default the largest /var/lib/apt/lists/*_main_i18n_Translation-en*; apt-get
        -o Acquire::Languages=en update makes it).""";

  /** The compressed types compared, in report order: documents' type and queries' type. */
  enum Kind {
    INT8(DType.INT8, null), FP8(DType.FLOAT8_E4M3, null), BINARY(DType.BINARY, null),
    BINARY_SYM(DType.BINARY, DType.BINARY);

    final DType documents;
    final DType queries;

    Kind(DType documents, DType queries) {
      this.documents = documents;
      this.queries = queries;
    }

    String label() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
  }

  record Row(String data, String kind, Agreement agreement) {}

  private static final String PACKAGES = "debian-packages.txt";
  /** Random documents whose longest case, 256 tokens of 128 values each, still fits one Java array. */
  static final int MAX_RANDOM_DOCS = (Integer.MAX_VALUE - 8) / (256 * 128);
  /** A random document's fp32 tokens: 32 to 256 of them, 144 on average, of 128 values each. */
  private static final long RANDOM_DOC_BYTES = 144L * 128 * Float.BYTES;

  private QualityCommand() {}

  public static int run(String[] argv, PrintStream out) throws IOException {
    Args a = new Args("maxsim4j bench", "quality", argv, 1,
        Set.of("--translations", "--docs", "--queries", "--random-docs", "--threads", "--json"), Set.of());
    List<String> packages = packageList();
    int docs = a.intValue("--docs", packages.size(), 1, packages.size()); // the packages listed
    // the default is capped at --docs, as retrieval's is: a user who asked for fewer documents gave no --queries
    int queries = a.intValue("--queries", Math.min(300, docs), 1);
    if (queries > docs) {
      throw new UsageException("quality: --queries " + queries + " is more than --docs " + docs);
    }
    // the random documents, of up to 256 tokens, are made as one fp32 array: more overflowed its int size
    int randomDocs = a.intValue("--random-docs", 2000, 1, MAX_RANDOM_DOCS);
    // the heap holds them about three times over (made, as one array, packed): refused up front, not run out of
    long heap = Runtime.getRuntime().maxMemory();
    if (randomDocs > heap / (3 * RANDOM_DOC_BYTES)) {
      throw new UsageException("quality: --random-docs " + randomDocs + " documents take about "
          + Sizes.of(3 * RANDOM_DOC_BYTES * randomDocs) + " of heap while they are made, more than this JVM's "
          + Sizes.of(heap) + "; expected at most " + heap / (3 * RANDOM_DOC_BYTES) + ", or a larger -Xmx through"
          + " JAVA_OPTS");
    }
    int threads = a.threads(Runtime.getRuntime().availableProcessors());
    Path translations = a.get("--translations") != null
        ? PathArgument.of("--translations", a.get("--translations"))
        : DebianDescriptions.findTranslations();
    if (translations == null) {
      throw new UsageException("no --translations and no *_main_i18n_Translation-en* under "
          + DebianDescriptions.APT_LISTS + "; expected the list apt-get -o Acquire::Languages=en update writes");
    }
    if (a.get("--json") != null) {
      // checked against the list read too: --json onto it replaced the Translation-en list after the run
      AtomicOutput.check("--json", AtomicOutput.target("--json", a.get("--json")), List.of(translations));
    }
    // the texts are read and checked before any work
    Texts texts = texts(translations, packages.subList(0, docs), queries);
    List<Row> rows = new ArrayList<>();
    try (MaxSim maxSim = MaxSim.builder().backend("cpu").threads(threads).build()) {
      SplittableRandom rnd = new SplittableRandom(42);
      TokenBatch q = Synthetic.unitBatch(rnd, DType.FLOAT32, 100, 32, 128);
      TokenBatch d = randomDocuments(rnd, randomDocs, 128);
      String data = "random unit vectors, 128-d: 100 queries x 32 tokens, " + Counts.of(randomDocs, "document")
          + " x 32-256 tokens";
      out.println(data);
      compare(maxSim, data, q, d, null, rows, out);

      Text text = encode(texts, out);
      compare(maxSim, text.what, text.queries, text.documents, text.relevant, rows, out);
    }
    if (a.get("--json") != null) {
      AtomicOutput.writeString("--json", AtomicOutput.target("--json", a.get("--json")), List.of(translations),
          toJson(rows));
    }
    return 0;
  }

  /** Scores every kind against fp32 and prints one line per kind. */
  private static void compare(MaxSim maxSim, String data, TokenBatch queries, TokenBatch documents, int[] relevant,
      List<Row> rows, PrintStream out) {
    float[][] reference = maxSim.scores(queries, documents);
    out.printf(Locale.ROOT, "  %-11s %14s %14s %12s %12s%n", "type", "mean rel err", "max rel err", "top-10 kept",
        "recall@10");
    out.printf(Locale.ROOT, "  %-11s %14s %14s %12s %12s%n", "fp32", "-", "-", "-", percent(
        Agreement.of(reference, reference, relevant).recallAt10()));
    for (Kind kind : Kind.values()) {
      TokenBatch d = documents.quantize(kind.documents);
      TokenBatch q = kind.queries == null ? queries : queries.quantize(kind.queries);
      Agreement agreement = Agreement.of(reference, maxSim.scores(q, d), relevant);
      rows.add(new Row(data, kind.label(), agreement));
      out.printf(Locale.ROOT, "  %-11s %13.3f%% %13.3f%% %11.1f%% %12s%n", kind.label(),
          100 * agreement.meanRelativeError(), 100 * agreement.maxRelativeError(), 100 * agreement.top10Overlap(),
          percent(agreement.recallAt10()));
    }
  }

  private static String percent(double v) {
    return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.1f%%", 100 * v);
  }

  /** Random unit-vector documents of 32 to 256 tokens (packed): real corpora are ragged. */
  private static TokenBatch randomDocuments(SplittableRandom rnd, int n, int dim) {
    int[] offsets = new int[n + 1];
    for (int i = 0; i < n; i++) {
      offsets[i + 1] = offsets[i] + 32 + rnd.nextInt(225);
    }
    TokenBatch flat = Synthetic.unitBatch(rnd, DType.FLOAT32, 1, offsets[n], dim);
    return TokenBatch.packedFloats(flat.toFloatArray(), offsets, dim);
  }

  record Text(String what, TokenBatch queries, TokenBatch documents, int[] relevant) {}

  record Texts(List<String> documents, List<String> summaries, int[] relevant) {}

  /** The packages' long descriptions, and the summaries of every k-th package (the queries). */
  private static Texts texts(Path translations, List<String> packages, int queries) throws IOException {
    Map<String, Description> all = DebianDescriptions.read(translations);
    List<String> documents = new ArrayList<>();
    List<String> summaries = new ArrayList<>();
    List<String> missing = new ArrayList<>();
    for (String name : packages) {
      Description description = all.get(name);
      if (description == null) {
        missing.add(name);
      } else {
        documents.add(description.text());
      }
    }
    if (!missing.isEmpty()) {
      // bad data, not a bad command line: exit status 1, as for any input the user commands cannot use
      throw new IllegalArgumentException("--translations " + translations + " lacks " + missing.size() + " of the "
          + packages.size() + " listed packages (first: " + missing.get(0) + "); expected Debian bookworm's main list");
    }
    int[] relevant = new int[queries];
    for (int i = 0; i < queries; i++) {
      relevant[i] = (int) ((long) i * packages.size() / queries);
      summaries.add(all.get(packages.get(relevant[i])).summary());
    }
    return new Texts(documents, summaries, relevant);
  }

  /** MiniLM token embeddings of the texts. */
  private static Text encode(Texts texts, PrintStream out) {
    List<String> documents = texts.documents();
    int queries = texts.summaries().size();
    try (TextModel encoder = TextModel.load()) {
      long start = System.nanoTime();
      TokenBatch d = encoder.encode(documents, (done, total) -> {
        if (done % 500 == 0 || done == total) {
          System.err.printf(Locale.ROOT, "\rencoding descriptions: %d / %d", done, total);
        }
      });
      System.err.println();
      TokenBatch q = encoder.encode(texts.summaries());
      double seconds = (System.nanoTime() - start) / 1e9;
      String what = String.format(Locale.ROOT,
          "Debian package descriptions, all-MiniLM-L6-v2 tokens, 384-d: %d summaries (%.1f tokens on average)"
              + " against %d long descriptions (%.1f tokens on average; encoded in %.0f s)",
          queries, q.offsets()[queries] / (double) queries, d.size(), d.offsets()[d.size()] / (double) d.size(),
          seconds);
      out.println(what);
      return new Text(what, q, d, texts.relevant());
    }
  }

  /** The pinned package names, one per line. */
  static List<String> packageList() throws IOException {
    try (InputStream in = QualityCommand.class.getResourceAsStream(PACKAGES)) {
      if (in == null) {
        throw new IllegalStateException(PACKAGES + " is missing from the bench jar");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().filter(l -> !l.isBlank()).toList();
    }
  }

  static String toJson(List<Row> rows) {
    StringBuilder b = new StringBuilder("[\n");
    for (int i = 0; i < rows.size(); i++) {
      Row r = rows.get(i);
      Agreement g = r.agreement();
      b.append(String.format(Locale.ROOT, "  {\"data\": \"%s\", \"type\": \"%s\", \"mean_relative_error\": %.6f, "
              + "\"max_relative_error\": %.6f, \"top10_overlap\": %.4f, \"recall_at_10\": %s}",
          r.data().replace("\"", "'"), r.kind(), g.meanRelativeError(), g.maxRelativeError(), g.top10Overlap(),
          Double.isNaN(g.recallAt10()) ? "null" : String.format(Locale.ROOT, "%.4f", g.recallAt10())));
      b.append(i + 1 < rows.size() ? ",\n" : "\n");
    }
    return b.append("]\n").toString();
  }
}
