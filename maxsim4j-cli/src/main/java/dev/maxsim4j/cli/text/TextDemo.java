package dev.maxsim4j.cli.text;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.Engine;
import dev.maxsim4j.TopK;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code demo}: search over the paragraphs that ship with maxsim4j, end to end on real text: the
 * paragraphs and three questions are encoded token by token by all-MiniLM-L6-v2 (progress on stderr), then
 * each question's best three paragraphs come from one fused MaxSim top-k call.
 */
public final class TextDemo {
  private static final List<String> QUESTIONS = List.of(
      "why does the sea rise and fall twice a day",
      "how do plants make sugar from light",
      "how does the JVM free memory nobody uses");

  private TextDemo() {}

  public static int run(Args a, PrintStream out, PrintStream err) {
    List<SampleTexts.Paragraph> paragraphs = SampleTexts.paragraphs();
    long t0 = System.nanoTime();
    err.println("loading all-MiniLM-L6-v2 (ONNX Runtime) ...");
    try (TextModel encoder = TextModel.load();
        MaxSim maxSim = Engine.open(a)) {
      // encoded two at a time so the progress shows; one call would do
      List<TokenBatch> parts = new ArrayList<>();
      for (int i = 0; i < paragraphs.size(); i += 2) {
        List<String> texts = paragraphs.subList(i, Math.min(paragraphs.size(), i + 2)).stream()
            .map(SampleTexts.Paragraph::text).toList();
        parts.add(encoder.encode(texts));
        err.printf(Locale.ROOT, "encoding %d paragraphs ... %d/%d%n", paragraphs.size(),
            Math.min(paragraphs.size(), i + 2), paragraphs.size());
      }
      TokenBatch documents = concat(parts);
      TokenBatch questions = encoder.encode(QUESTIONS);
      double encodeMs = (System.nanoTime() - t0) / 1e6;
      maxSim.topK(questions, documents, 3); // warm-up: the first call compiles the kernel (JIT)
      long t1 = System.nanoTime();
      TopK top = maxSim.topK(questions, documents, 3);
      double scoreMs = (System.nanoTime() - t1) / 1e6;
      out.printf(Locale.ROOT, "maxsim4j demo: %d paragraphs (%d tokens of d=%d), %d questions, %s backend%n",
          paragraphs.size(), documents.offsets()[documents.size()], documents.dim(), QUESTIONS.size(),
          maxSim.backendName());
      out.println("token embeddings: all-MiniLM-L6-v2, a sentence model used token by token (not a ColBERT model)");
      for (int i = 0; i < QUESTIONS.size(); i++) {
        out.printf(Locale.ROOT, "%nquestion: %s%n", QUESTIONS.get(i));
        for (int r = 0; r < top.indices()[i].length; r++) {
          SampleTexts.Paragraph p = paragraphs.get(top.indices()[i][r]);
          out.printf(Locale.ROOT, "  %d. %-18s %6.3f  %s%n", r + 1, p.title(), top.scores()[i][r] / questions.length(i),
              TextFiles.snippet(p.text(), 60));
        }
      }
      out.printf(Locale.ROOT, "%nencoding (model load included): %.0f ms; MaxSim top-3 (after one warm-up call):"
          + " %.2f ms%n", encodeMs, scoreMs);
    }
    return 0;
  }

  /** Packed fp32 batches joined row after row. */
  private static TokenBatch concat(List<TokenBatch> parts) {
    int rows = parts.stream().mapToInt(TokenBatch::size).sum();
    int dim = parts.get(0).dim();
    int[] offsets = new int[rows + 1];
    List<float[]> data = new ArrayList<>();
    int r = 0;
    for (TokenBatch b : parts) {
      int[] o = b.offsets();
      for (int i = 0; i < b.size(); i++, r++) {
        offsets[r + 1] = offsets[r] + o[i + 1] - o[i];
      }
      data.add(b.toFloatArray());
    }
    float[] all = new float[offsets[rows] * dim];
    int at = 0;
    for (float[] d : data) {
      System.arraycopy(d, 0, all, at, d.length);
      at += d.length;
    }
    return TokenBatch.packedFloats(all, offsets, dim);
  }
}
