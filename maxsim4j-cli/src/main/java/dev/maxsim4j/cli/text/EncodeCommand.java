package dev.maxsim4j.cli.text;

import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.Progress;
import dev.maxsim4j.cli.UsageException;
import dev.maxsim4j.cli.io.AtomicOutput;
import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.PathArgument;
import dev.maxsim4j.cli.io.SafeTensors;
import dev.maxsim4j.langchain4j.MiniLmTokenEncoder;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * {@code encode}: texts to token embeddings in a .safetensors file, packed ({@code embeddings [T, 384]},
 * {@code offsets [N+1]}), the input format of {@code score}.
 */
public final class EncodeCommand {
  public static final String USAGE = """
      encode --in TEXTS --out E.safetensors [--dtype bf16|f32]
        TEXTS: a text file (one text per non-blank line) or a folder (one text per .txt/.md file); lines
        and files that are not UTF-8 text (invalid bytes, NUL bytes) are skipped and named on stderr.
        Token embeddings of all-MiniLM-L6-v2 (a sentence model used token-wise), unit length, packed
        without padding: tensors "embeddings" [T, 384] (every text's tokens in order, bf16 by default) and
        "offsets" [N+1] int64 (text i is tokens offsets[i] .. offsets[i+1]-1), which score reads as is:
        score --queries Q.safetensors --docs E.safetensors --top-k 10 --out-run run.tsv""";

  private EncodeCommand() {}

  public static int run(String[] argv, PrintStream out, PrintStream err) throws IOException {
    Args a = new Args("encode", argv, 1, Set.of("--in", "--out", "--dtype"), Set.of());
    Path in = PathArgument.of("--in", a.require("--in"));
    Path target = AtomicOutput.target("--out", a.require("--out"));
    String dtype = a.getOr("--dtype", "bf16");
    if (!dtype.equals("f32") && !dtype.equals("bf16")) {
      throw new UsageException("encode: --dtype = " + dtype + "; expected f32 or bf16");
    }
    if (target.getFileName() == null || !target.getFileName().toString().toLowerCase(Locale.ROOT)
        .endsWith(".safetensors")) {
      // score picks the reader by the extension, so any other name would make the output unreadable; a mistake in
      // the command line, reported before any file is looked at
      throw new UsageException("encode: --out " + target + " does not end in .safetensors; encode writes"
          + " .safetensors");
    }
    Warnings warnings = new Warnings(err);
    if (!Files.isDirectory(in)) {
      TextFiles.requireTextFile("--in", in);
    }
    List<Path> files = Files.isDirectory(in) ? TextFiles.under(in, warnings) : List.of(in);
    List<Path> inputs = new ArrayList<>(files);
    inputs.add(in);
    // checked before any text is read: an output that is one of the texts read, or that cannot be written, is
    // refused before the reading and encoding work
    try (AtomicOutput output = AtomicOutput.create("--out", target, inputs)) {
      List<String> texts = new ArrayList<>();
      if (Files.isDirectory(in)) {
        for (Path f : files) {
          TextFiles.readOrWarn(f, TextFiles.shown(f), warnings).ifPresent(texts::add);
        }
      } else {
        TextFiles.lines("--in", in, warnings).forEach(line -> texts.add(line.text()));
      }
      warnings.finish();
      if (texts.isEmpty()) {
        throw new IllegalArgumentException("encode: " + in + " holds no text; expected non-blank lines or .txt/.md"
            + " files");
      }
      TokenBatch b;
      try (MiniLmTokenEncoder encoder = MiniLmTokenEncoder.load()) {
        Progress progress = new Progress(err, "encoding " + Counts.of(texts.size(), "text"));
        b = encoder.encode(texts, progress::update);
        progress.done();
      }
      int[] offsets = b.offsets();
      long tokens = offsets[b.size()];
      Map<String, NdArray> tensors = new LinkedHashMap<>();
      tensors.put("embeddings", PackedTokens.embeddings(target.toString(), b, dtype.equals("bf16")));
      tensors.put("offsets", PackedTokens.offsets(target.toString(), offsets));
      output.write(file -> SafeTensors.write(file, tensors));
      output.commit();
      out.printf(Locale.ROOT, "encoded %s into %s: embeddings [%d, %d] %s (all tokens, packed), offsets [%d]%n",
          Counts.of(b.size(), "text"), TextFiles.shown(target), tokens, b.dim(), dtype, b.size() + 1);
    }
    return 0;
  }
}
