package dev.maxsim4j.cli;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.TopK;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.Npy;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Set;

/**
 * {@code score}: MaxSim of query embeddings against document embeddings from .npy or .safetensors files.
 * All pairs by default ({@code [Nq, Nd]}), {@code --pairwise} ({@code [B]}), candidates when the documents
 * are 4-D {@code [B, K, Ld, d]} ({@code [B, K]}), or {@code --top-k K} as a run file.
 */
final class ScoreCommand {
  static final String USAGE = """
      score --queries Q --docs D [--query-mask QM] [--doc-mask DM] --out S.npy
            [--pairwise] [--top-k K --out-run run.tsv] [--normalize]
            [--queries-tensor NAME] [--docs-tensor NAME] [--query-mask-tensor NAME] [--doc-mask-tensor NAME]
            [--backend auto|reference|scalar|vector] [--threads N]
        Q, D: .npy (float32/float16) or .safetensors (F32/F16/BF16), [N, L, d]; D may be [B, K, L, d]
        (candidates). Masks: bool/uint8 [N, L]. Writes float32 scores; a top-k run file has lines
        query_index<TAB>doc_index<TAB>rank<TAB>score, sorted by query then rank (rank from 1).""";

  private ScoreCommand() {}

  static int run(String[] argv, PrintStream out) throws IOException {
    Args a = new Args("score", argv, 1,
        Set.of("--queries", "--docs", "--query-mask", "--doc-mask", "--out", "--top-k", "--out-run",
            "--queries-tensor", "--docs-tensor", "--query-mask-tensor", "--doc-mask-tensor", "--backend", "--threads"),
        Set.of("--pairwise", "--normalize"));
    NdArray qe = Inputs.read(a.require("--queries"), a.get("--queries-tensor"));
    NdArray de = Inputs.read(a.require("--docs"), a.get("--docs-tensor"));
    NdArray qm = a.get("--query-mask") == null ? null : Inputs.read(a.get("--query-mask"), a.get("--query-mask-tensor"));
    NdArray dm = a.get("--doc-mask") == null ? null : Inputs.read(a.get("--doc-mask"), a.get("--doc-mask-tensor"));
    TokenBatch q = Inputs.batch("queries", qe, qm);
    TokenBatch d = Inputs.batch("docs", de, dm);
    if (a.has("--normalize")) {
      q = q.l2Normalized();
      d = d.l2Normalized();
    }
    boolean candidates = de.rank() == 4;
    boolean topK = a.get("--top-k") != null;
    if (topK && a.get("--out-run") == null) {
      throw new UsageException("score: --top-k needs --out-run FILE");
    }
    if (!topK && a.get("--out") == null) {
      throw new UsageException("score: --out is required (or --top-k K --out-run FILE)");
    }
    if (a.has("--pairwise") && (candidates || topK)) {
      throw new UsageException("score: --pairwise cannot be combined with 4-D candidate documents or --top-k");
    }
    MaxSim.Builder builder = MaxSim.builder().backend(a.getOr("--backend", "auto"));
    if (a.get("--threads") != null) {
      builder.threads(a.intValue("--threads", 1, 1));
    }
    long start = System.nanoTime();
    String what;
    try (MaxSim maxSim = builder.build()) {
      if (topK) {
        int k = a.intValue("--top-k", 10, 1);
        TopK top = maxSim.topK(q, d, k);
        writeRun(Path.of(a.get("--out-run")), top);
        what = "top-" + k + " of " + d.size() + " documents for " + q.size() + " queries -> " + a.get("--out-run");
      } else if (a.has("--pairwise")) {
        float[] s = maxSim.pairwise(q, d);
        Npy.writeFloats(Path.of(a.get("--out")), s, s.length);
        what = s.length + " pairwise scores -> " + a.get("--out");
      } else if (candidates) {
        int b = de.dim(0);
        int k = de.dim(1);
        if (q.size() != b) {
          throw new IllegalArgumentException("queries have B=" + q.size() + " rows but docs " + de.shapeString()
              + " have B=" + b);
        }
        float[][] s = maxSim.candidates(q, d, k);
        Npy.writeFloats(Path.of(a.get("--out")), flatten(s, k), b, k);
        what = "[" + b + ", " + k + "] candidate scores -> " + a.get("--out");
      } else {
        float[][] s = maxSim.scores(q, d);
        Npy.writeFloats(Path.of(a.get("--out")), flatten(s, d.size()), q.size(), d.size());
        what = "[" + q.size() + ", " + d.size() + "] scores -> " + a.get("--out");
      }
      out.printf(Locale.ROOT, "%s (%s backend, %d threads, %.1f ms)%n", what, maxSim.backendName(),
          maxSim.threads(), (System.nanoTime() - start) / 1e6);
    }
    return 0;
  }

  private static float[] flatten(float[][] m, int cols) {
    float[] f = new float[m.length * cols];
    for (int i = 0; i < m.length; i++) {
      System.arraycopy(m[i], 0, f, i * cols, cols);
    }
    return f;
  }

  private static void writeRun(Path file, TopK top) throws IOException {
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
