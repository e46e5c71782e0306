package dev.maxsim4j.cli;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.TopK;
import dev.maxsim4j.cli.io.AtomicOutput;
import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.cli.io.Npy;
import dev.maxsim4j.cli.io.PathArgument;
import dev.maxsim4j.cli.io.Printable;
import dev.maxsim4j.cli.text.Warnings;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * {@code score}: MaxSim of query embeddings against document embeddings from .npy or .safetensors files.
 * All pairs by default ({@code [Nq, Nd]}), {@code --pairwise} ({@code [B]}), candidates when the documents
 * are 4-D {@code [B, K, Ld, d]} ({@code [B, K]}), or {@code --top-k K} as a run file.
 */
final class ScoreCommand {
  static final String USAGE = """
      score --queries Q --docs D [--query-mask QM] [--doc-mask DM] (--out S.npy | --top-k K --out-run run.tsv)
            [--pairwise] [--normalize]
            [--query-offsets QO] [--doc-offsets DO] [--query-offsets-tensor NAME] [--doc-offsets-tensor NAME]
            [--queries-tensor NAME] [--docs-tensor NAME] [--query-mask-tensor NAME] [--doc-mask-tensor NAME]
            [--docs-scale-tensor NAME] [--doc-scales S] [--docs-bits D]   (the same for queries:
            --queries-scale-tensor, --query-scales, --queries-bits)
            [--backend NAME] [--threads N] [--verbose]
        D may be a folder of .safetensors shards (as encode / quantize write them; one token type and d):
        the documents are the shards concatenated in name order, each memory-mapped and scored on its own
        (progress per shard on stderr), --top-k merged exactly, so the heap need not hold the corpus.
        Q, D: .npy (float32/float16, int8; uint8 packed bits) or .safetensors (F32/F16/BF16, I8, F8_E4M3; U8
        packed bits): packed bits need --docs-bits D / --queries-bits D (the last axis holds ceil(D/8) bytes,
        most significant bit first, bit 1 = +1, bit 0 = -1), or a file quantize wrote, which records D.
        Quantized tokens may have fp32 scales (value = scale x stored value; none = 1): [N, L] padded, [T]
        packed, the tensor "scales" beside the embeddings (as quantize writes it) or --docs-scale-tensor /
        --doc-scales. Layouts: padded [N, L, d], D may be [B, K, L, d]
        (candidates), or packed [T, d] with offsets [N+1] (int32/int64, like cu_seqlens; row i is tokens
        offsets[i] .. offsets[i+1]-1): given by --query-offsets / --doc-offsets (a .npy file, or a .safetensors
        file and its --*-offsets-tensor), or in a .safetensors file the tensor "offsets" beside the embeddings, or
        the one --*-offsets-tensor names there. [L, d] without offsets is one row of L tokens (N = 1); a note on
        stderr says so where an integer tensor beside it reads as offsets.
        Masks: bool/uint8/int32/int64 of 0 and 1, [N, L] (packed: [T]; [L, d]: [L] or [1, L]); the
        tensor "mask" beside the embeddings, or a --*-mask-tensor without --*-mask, reads the mask from the embeddings'
        .safetensors file ("mask", "scales" and "offsets" beside them are read, whatever the embeddings tensor
        is called, or refused where they do not fit; an option that names another replaces them). A .safetensors
        file holding "embeddings" (+ "mask", "offsets"), as encode writes it, needs no tensor options.
        Writes float32 scores to --out; --top-k writes only the run file --out-run, lines
        query_index<TAB>doc_index<TAB>rank<TAB>score sorted by query then rank (rank from 1); with candidates
        [B, K, L, d] each query ranks its own K candidates and doc_index is the index among them.""";

  private ScoreCommand() {}

  static int run(String[] argv, PrintStream out, PrintStream err) throws IOException {
    Args a = new Args("score", argv, 1,
        Set.of("--queries", "--docs", "--query-mask", "--doc-mask", "--out", "--top-k", "--out-run",
            "--query-offsets", "--doc-offsets", "--query-offsets-tensor", "--doc-offsets-tensor", "--queries-tensor",
            "--docs-tensor", "--query-mask-tensor",
            "--doc-mask-tensor", "--query-scales", "--doc-scales", "--queries-scale-tensor", "--docs-scale-tensor",
            "--queries-bits", "--docs-bits", "--backend", "--threads"),
        Set.of("--pairwise", "--normalize", "--verbose"));
    boolean topK = a.get("--top-k") != null;
    if (topK && a.get("--out-run") == null) {
      throw new UsageException("score: --top-k needs --out-run FILE");
    }
    if (topK && a.get("--out") != null) {
      throw new UsageException("score: --out has no effect with --top-k (the run goes to --out-run)");
    }
    if (!topK && a.get("--out-run") != null) {
      throw new UsageException("score: --out-run needs --top-k K");
    }
    if (!topK && a.get("--out") == null) {
      throw new UsageException("score: --out is required (or --top-k K --out-run FILE)");
    }
    if (!topK) {
      AtomicOutput.target("--out", a.get("--out")); // a folder named as the output is said as such first
    }
    if (!topK && !a.get("--out").toLowerCase(Locale.ROOT).endsWith(".npy")) {
      // readers pick the format by the extension: an array under any other name is taken for a damaged file of that
      // kind, or for text; a mistake in the command line, reported before any file is looked at
      throw new UsageException("score: --out " + a.get("--out") + " does not end in .npy; score writes its scores"
          + " as a float32 .npy array (a text run: --top-k K --out-run FILE.tsv)");
    }
    String run = topK ? a.get("--out-run").toLowerCase(Locale.ROOT) : "";
    if (run.endsWith(".safetensors") || run.endsWith(".npy")) {
      // a text run under an array's name is taken for a damaged array, and in a --docs folder for a damaged shard
      throw new UsageException("score: --out-run " + a.get("--out-run") + " ends in "
          + run.substring(run.lastIndexOf('.')) + ", but the run is a text file (query, doc, rank, score per line);"
          + " name it .tsv");
    }
    if (a.has("--pairwise") && topK) {
      throw new UsageException("score: --pairwise cannot be combined with --top-k");
    }
    int k = a.intValue("--top-k", 10, 1);
    MaxSim.Builder builder = MaxSim.builder();
    if (a.get("--threads") != null) {
      builder.threads(a.threads(1));
    }
    String option = topK ? "--out-run" : "--out";
    // checked before the inputs are read (which may copy gigabytes or scan every fp8 byte), so a missing or
    // unwritable folder fails at once; the output is checked again against every file read once they are known
    AtomicOutput.check(option, AtomicOutput.target(option, a.get(option)), namedFiles(a));
    boolean sharded = ShardedScore.applies(a);
    if (sharded) {
      ShardedScore.checkOptions(a);
    }
    // the backend, and the library's -D settings it reads, are refused before the inputs are read (gigabytes,
    // perhaps, whose reading would fail first in a heap too small for them and hide the setting's mistake)
    try (MaxSim maxSim = Engine.open(a, builder)) {
      return sharded ? ShardedScore.run(a, out, err, maxSim) : score(a, out, err, maxSim, option, topK, k);
    }
  }

  /** Scores one --docs file with {@code maxSim} into {@code option}'s file. */
  private static int score(Args a, PrintStream out, PrintStream err, MaxSim maxSim, String option, boolean topK,
      int k) throws IOException {
    long start = System.nanoTime();
    Inputs.Loaded queries = Inputs.load(a, Inputs.QUERIES);
    Inputs.Loaded docs = Inputs.load(a, Inputs.DOCS);
    Warnings warnings = new Warnings(err);
    for (Inputs.Loaded l : List.of(queries, docs)) {
      if (l.note() != null) {
        warnings.warn("score " + l.note());
      }
    }
    boolean candidates = docs.embeddings().rank() == 4;
    if (a.has("--pairwise") && candidates) {
      throw new UsageException("score: --pairwise cannot be combined with 4-D candidate documents");
    }
    requireSameDim(queries, "--docs " + docs.embeddings().source(), docs, docs.embeddings().shapeString());
    if (a.has("--pairwise") && queries.batch().size() != docs.batch().size()) {
      throw new IllegalArgumentException("--pairwise: " + rows(queries, Inputs.QUERIES) + ", " + rows(docs, Inputs.DOCS)
          + "; expected as many documents as queries (row i scores against row i)");
    }
    List<Path> inputs = new ArrayList<>(queries.files());
    inputs.addAll(docs.files());
    Path target = AtomicOutput.target(option, a.get(option));
    TokenBatch q = queries.batch();
    TokenBatch d = docs.batch();
    int perQuery = 0;
    if (candidates) {
      int b = docs.embeddings().dim(0);
      perQuery = docs.embeddings().dim(1);
      if (perQuery == 0) {
        throw new IllegalArgumentException("--docs " + docs.embeddings().source() + " has shape "
            + docs.embeddings().shapeString() + ": K = 0 candidates per query; expected at least 1");
      }
      if (q.size() != b) {
        throw new IllegalArgumentException(rows(queries, Inputs.QUERIES) + ", but --docs " + docs.embeddings().source()
            + " holds candidates for " + Counts.of(b, "query", "queries") + " " + docs.embeddings().shapeString()
            + "; expected [B, K, L, d]"
            + " with B the queries' rows");
      }
    }
    long read = System.nanoTime();
    String what;
    try (AtomicOutput output = AtomicOutput.create(option, target, inputs)) {
      if (a.has("--normalize")) {
        q = q.l2Normalized();
        d = d.l2Normalized();
      }
      if (topK) {
        TopK top = candidates ? TopRows.of(maxSim.candidates(q, d, perQuery), k) : maxSim.topK(q, d, k);
        output.write(file -> writeRun(file, top));
        what = "top-" + k + " of " + (candidates ? Counts.of(perQuery, "candidate") + " each"
            : Counts.of(d.size(), "document")) + " for " + Counts.of(q.size(), "query", "queries") + " -> " + target;
      } else if (a.has("--pairwise")) {
        float[] s = maxSim.pairwise(q, d);
        output.write(file -> Npy.writeFloats(file, s, s.length));
        what = Counts.of(s.length, "pairwise score") + " -> " + target;
      } else if (candidates) {
        float[][] s = maxSim.candidates(q, d, perQuery);
        int columns = perQuery;
        output.write(file -> Npy.writeFloatRows(file, s, columns));
        what = "[" + q.size() + ", " + perQuery + "] candidate scores -> " + target;
      } else {
        requireMatrixFits(q.size(), d.size());
        float[][] s = allPairs(maxSim, q, d, "split --docs into a folder of shards, whose scores are held a shard"
            + " at a time");
        int columns = d.size();
        output.write(file -> Npy.writeFloatRows(file, s, columns));
        what = "[" + q.size() + ", " + d.size() + "] scores -> " + target;
      }
      output.commit();
      // the output's name may hold any character: the summary stays one line
      out.println(Printable.oneLine(String.format(Locale.ROOT,
          "%s (%s backend, %s, read %.1f ms, scored %.1f ms)",
          what, maxSim.backendName(), Counts.of(maxSim.threads(), "thread"), (read - start) / 1e6,
          (System.nanoTime() - read) / 1e6)));
    }
    return 0;
  }

  /**
   * Refuses documents of another token dimension than {@code queries}, naming both files ({@code docs}: the option
   * and file, {@code shape} its embeddings' shape); the library's own refusal names neither.
   */
  static void requireSameDim(Inputs.Loaded queries, String docs, Inputs.Loaded loaded, String shape) {
    TokenBatch q = queries.batch();
    TokenBatch d = loaded.batch();
    if (q.dim() != d.dim()) {
      throw new IllegalArgumentException("d mismatch: --queries " + queries.embeddings().source() + " holds tokens of "
          + dim(queries) + " " + queries.embeddings().shapeString() + ", but " + docs + " holds tokens of "
          + dim(loaded) + (shape.isEmpty() ? "" : " " + shape) + "; expected one token dimension");
    }
  }

  /** A batch's token dimension, and where packed bits take it from. */
  private static String dim(Inputs.Loaded l) {
    return "d = " + l.batch().dim() + (l.bitsFrom() != null ? " (" + l.bitsFrom() + ")" : "");
  }

  /** "--queries FILE holds N rows [shape]" for a message. */
  private static String rows(Inputs.Loaded l, Inputs.Options o) {
    return o.embeddings() + " " + l.embeddings().source() + " holds " + Counts.of(l.batch().size(), "row") + " "
        + l.embeddings().shapeString();
  }

  /** The files the command line names for queries and documents (a --docs folder included). */
  private static List<Path> namedFiles(Args a) {
    List<Path> files = new ArrayList<>();
    for (Inputs.Options o : List.of(Inputs.QUERIES, Inputs.DOCS)) {
      for (String option : List.of(o.embeddings(), o.mask(), o.offsets(), o.scales())) {
        if (a.get(option) != null) {
          files.add(PathArgument.of(option, a.get(option)));
        }
      }
    }
    return files;
  }

  /**
   * Refuses, before any scoring, an all-pairs score matrix that one .npy array written from Java cannot hold; the
   * library's own refusal would point to its API rather than to the option that helps.
   */
  static void requireMatrixFits(long queries, long documents) {
    if (queries * documents > Inputs.HEAP_ELEMENTS) {
      throw new IllegalArgumentException("the score matrix [" + queries + ", " + documents + "] has more than"
          + " 2^31-1 entries, more than one .npy array written from Java can hold; use --top-k K --out-run FILE");
    }
  }

  /** The library's advice where all-pairs scores do not fit the heap, which the command line words otherwise. */
  private static final String LIBRARY_ADVICE = "use topK(queries, documents, k), or score the documents in chunks";

  /**
   * {@code maxSim.scores(q, d)}; a refusal for the heap says what to do on the command line ({@code --top-k}, or
   * {@code orElse}) instead of in the library's API.
   */
  static float[][] allPairs(MaxSim maxSim, TokenBatch q, TokenBatch d, String orElse) {
    try {
      return maxSim.scores(q, d);
    } catch (IllegalArgumentException e) {
      if (e.getMessage() == null || !e.getMessage().endsWith(LIBRARY_ADVICE)) {
        throw e;
      }
      String message = e.getMessage();
      throw new IllegalArgumentException("score: " + message.substring(0, message.length() - LIBRARY_ADVICE.length())
          + "use --top-k K --out-run FILE, or " + orElse + ", or raise -Xmx through JAVA_OPTS", e);
    }
  }

  static void writeRun(Path file, TopK top) throws IOException {
    try (BufferedWriter w = Files.newBufferedWriter(file)) {
      for (int i = 0; i < top.indices().length; i++) {
        for (int r = 0; r < top.indices()[i].length; r++) {
          w.write(i + "\t" + top.indices()[i][r] + "\t" + (r + 1) + "\t" + top.scores()[i][r]);
          w.newLine();
        }
      }
    }
  }
}
