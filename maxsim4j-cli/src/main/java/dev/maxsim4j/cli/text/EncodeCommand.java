package dev.maxsim4j.cli.text;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.Progress;
import dev.maxsim4j.cli.UsageException;
import dev.maxsim4j.cli.io.NdArray;
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
 * {@code encode}: texts to token embeddings in a .safetensors file ({@code embeddings [N, L, 384]} padded,
 * {@code mask [N, L]}), the input format of {@code score}.
 */
public final class EncodeCommand {
  public static final String USAGE = """
      encode --in TEXTS --out E.safetensors [--dtype f32|bf16]
        TEXTS: a text file (one text per non-blank line) or a folder (one text per .txt/.md file); lines
        and files that are not UTF-8 text (invalid bytes, NUL bytes) are skipped and named on stderr.
        Token embeddings of all-MiniLM-L6-v2 (a sentence model used token-wise), unit length; writes
        tensors "embeddings" [N, L, 384] and "mask" [N, L] (false on padding), e.g. for
        score --queries E.safetensors --queries-tensor embeddings --query-mask E.safetensors --query-mask-tensor mask""";

  private EncodeCommand() {}

  public static int run(String[] argv, PrintStream out, PrintStream err) throws IOException {
    Args a = new Args("encode", argv, 1, Set.of("--in", "--out", "--dtype"), Set.of());
    Path in = Path.of(a.require("--in"));
    Path target = Path.of(a.require("--out"));
    String dtype = a.getOr("--dtype", "f32");
    if (!dtype.equals("f32") && !dtype.equals("bf16")) {
      throw new UsageException("encode: --dtype = " + dtype + "; expected f32 or bf16");
    }
    List<String> texts = new ArrayList<>();
    Warnings warnings = new Warnings(err);
    if (Files.isDirectory(in)) {
      for (Path f : TextFiles.under(in, warnings)) {
        TextFiles.readOrWarn(f, TextFiles.shown(f), warnings).ifPresent(texts::add);
      }
    } else {
      TextFiles.lines(in, warnings).forEach(line -> texts.add(line.text()));
    }
    warnings.finish();
    if (texts.isEmpty()) {
      throw new IllegalArgumentException("encode: " + in + " holds no text; expected non-blank lines or .txt/.md files");
    }
    TokenBatch b;
    try (MiniLmTokenEncoder encoder = MiniLmTokenEncoder.load()) {
      Progress progress = new Progress(err, "encoding " + texts.size() + " texts");
      b = encoder.encode(texts, progress::update);
      progress.done();
    }
    int n = b.size();
    int l = b.maxLength();
    int d = b.dim();
    float[] packed = b.toFloatArray();
    int[] offsets = b.offsets();
    float[] padded = new float[Math.multiplyExact(Math.multiplyExact(n, l), d)];
    boolean[] mask = new boolean[n * l];
    for (int i = 0; i < n; i++) {
      System.arraycopy(packed, offsets[i] * d, padded, i * l * d, (offsets[i + 1] - offsets[i]) * d);
      for (int t = 0; t < offsets[i + 1] - offsets[i]; t++) {
        mask[i * l + t] = true;
      }
    }
    Map<String, NdArray> tensors = new LinkedHashMap<>();
    long[] shape = {n, l, d};
    if (dtype.equals("bf16")) {
      short[] bits = new short[padded.length];
      for (int x = 0; x < padded.length; x++) {
        bits[x] = DType.BFLOAT16.narrow(padded[x]);
      }
      tensors.put("embeddings", new NdArray(target.toString(), NdArray.ElementType.BF16, shape, null, bits, null));
    } else {
      tensors.put("embeddings", NdArray.ofFloats(target.toString(), shape, padded));
    }
    tensors.put("mask", new NdArray(target.toString(), NdArray.ElementType.BOOL, new long[] {n, l}, null, null, mask));
    SafeTensors.write(target, tensors);
    out.printf(Locale.ROOT, "encoded %d texts into %s: embeddings [%d, %d, %d] %s, mask [%d, %d] (%d tokens)%n", n,
        target, n, l, d, dtype, n, l, offsets[n]);
    return 0;
  }
}
