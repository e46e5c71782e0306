package dev.maxsim4j.cli;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.io.AtomicOutput;
import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.PathArgument;
import dev.maxsim4j.cli.io.Printable;
import dev.maxsim4j.cli.io.RunMemory;
import dev.maxsim4j.cli.io.SafeTensors;
import dev.maxsim4j.cli.io.SafeTensorsFile;
import dev.maxsim4j.cli.io.UnsupportedDtypeException;
import dev.maxsim4j.cli.text.Warnings;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code quantize}: float token embeddings in a .safetensors file to int8, fp8 or packed bits with per-token
 * scales, in the layout {@code score} reads. Works through the tokens a slice at a time, so it holds the mapped
 * input, the output and one slice, never an expanded copy.
 */
final class QuantizeCommand {
  static final String USAGE = """
      quantize --in E.safetensors [--tensor embeddings] --to int8|fp8|binary --out C.safetensors
        Quantizes the float tokens of E (F32/F16/BF16, padded [.., L, d] or packed [T, d]) one token at a
        time: int8 with scale absmax/127, fp8 (e4m3fn) with scale absmax/448, binary (1 bit per dimension,
        bit 1 = +1 for x >= 0, packed 8 per byte, most significant bit first) with scale mean |x|. Writes
        "embeddings" (I8, F8_E4M3, or U8 [.., ceil(d/8)]), "scales" F32 (one per token) and copies "mask"
        and "offsets" if E holds them beside the tensor (checked as score reads them; any other tensor is left
        out, and named), E's __metadata__ (its string entries; others are named) and d in it
        (maxsim4j.dim.embeddings); score reads the result as
        is (binary too: packed bits hold d only in whole bytes, the record tells it). A masked
        token (padding, which score never reads) that holds NaN or an infinity is stored as zeros; in a valid
        token such a value is an error.""";

  /** Tokens per quantize call: bounds the heap a slice takes while keeping calls few. */
  static final int SLICE_TOKENS = 16_384;

  private QuantizeCommand() {}

  static int run(String[] argv, PrintStream out, PrintStream err) throws IOException {
    Args a = new Args("quantize", argv, 1, Set.of("--in", "--tensor", "--to", "--out"), Set.of());
    String to = a.require("--to");
    DType dtype = switch (to) {
      case "int8" -> DType.INT8;
      case "fp8" -> DType.FLOAT8_E4M3;
      case "binary" -> DType.BINARY;
      default -> throw new UsageException("quantize: --to = " + to + "; expected int8, fp8 or binary");
    };
    String inPath = a.require("--in");
    // the command line is checked in full (exit 2) before any file is looked at (exit 1)
    Path target = AtomicOutput.target("--out", a.require("--out"));
    for (Path p : new Path[] {PathArgument.of("--in", inPath), target}) {
      if (p.getFileName() == null || !p.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".safetensors")) {
        throw new UsageException("quantize: " + (p == target ? "--out " : "--in ") + p + " does not end in"
            + " .safetensors; quantize reads and writes .safetensors");
      }
    }
    Path in = Inputs.input("--in", inPath);
    SafeTensorsFile source;
    try {
      source = SafeTensorsFile.open(in);
    } catch (IllegalArgumentException e) {
      throw Inputs.named("--in", in, e);
    }
    List<String> names = source.names();
    String tensor = Inputs.pick("--in", in, a.label("--tensor"), "--tensor", names, Inputs.EMBEDDINGS);
    NdArray emb;
    try {
      emb = source.read(tensor);
    } catch (UnsupportedDtypeException e) {
      throw e.as("quantize: --in", "F32, F16 or BF16 embeddings to quantize");
    }
    if (!emb.isFloating()) {
      throw new IllegalArgumentException("quantize: " + emb.source() + " holds " + emb.type() + "; expected float32,"
          + " float16 or bfloat16 embeddings to quantize");
    }
    if (emb.rank() < 2 || emb.rank() > 4) {
      // the ranks score reads, so quantize never writes a file score refuses
      throw new IllegalArgumentException("quantize: " + emb.source() + " has shape " + emb.shapeString()
          + "; expected tokens [.., d] (padded [N, L, d], packed [T, d] or candidates [B, K, L, d])");
    }
    int d = emb.dim(emb.rank() - 1);
    if (d < 1) {
      throw new IllegalArgumentException("quantize: " + emb.source() + " has shape " + emb.shapeString()
          + "; expected a token dimension d >= 1 (the last axis)");
    }
    // the mask and offsets beside the tensor are copied, so they are checked as score will read them, first
    Map<String, NdArray> companions = new LinkedHashMap<>();
    for (String name : List.of(Inputs.MASK, Inputs.OFFSETS)) {
      if (names.contains(name) && !name.equals(tensor) && (tensor != null || names.size() > 1)) {
        try {
          companions.put(name, source.read(name));
        } catch (UnsupportedDtypeException e) {
          throw e.as("quantize: --in", Inputs.takes(name, true));
        }
      }
    }
    Inputs.requireCompanions("quantize: --in", emb, companions.get(Inputs.MASK), companions.get(Inputs.OFFSETS));
    if (companions.get(Inputs.OFFSETS) == null) {
      // the codes keep the input's shape: one score could not read as a batch is refused before the work
      Inputs.requirePaddedShape("quantize: --in", emb);
    }
    if (names.contains(Inputs.SCALES) && !Inputs.SCALES.equals(tensor) && (tensor != null || names.size() > 1)) {
      // score refuses scales beside float embeddings (are they applied already?); replacing them would hide that
      throw new IllegalArgumentException("quantize: --in " + inPath + " holds a 'scales' tensor, but its embeddings "
          + emb.source() + " hold " + emb.type() + "; expected float embeddings without scales");
    }
    NdArray mask = companions.get(Inputs.MASK); // one flag per token, in the tokens' order (padded or packed)
    long tokens = emb.elements() / d;
    long[] tokenShape = Arrays.copyOf(emb.shape(), emb.rank() - 1);
    long[] codeShape = emb.shape();
    codeShape[codeShape.length - 1] = dtype.bytesPerToken(d);

    AtomicOutput.check("--out", target, List.of(in)); // an append-only folder is refused before the work
    try (AtomicOutput output = AtomicOutput.create("--out", target, List.of(in))) {
      Arena arena = RunMemory.arena();
      MemorySegment codes = arena.allocate(Math.multiplyExact(tokens, dtype.bytesPerToken(d)));
      MemorySegment scales = arena.allocate(tokens * Float.BYTES, Float.BYTES);
      long width = (long) d * emb.type().width();
      for (long from = 0; from < tokens; from += SLICE_TOKENS) {
        int count = (int) Math.min(SLICE_TOKENS, tokens - from);
        MemorySegment slice = emb.segment().asSlice(from * width, count * width);
        TokenBatch q;
        try {
          TokenBatch batch = TokenBatch.fromMemorySegment(slice, emb.dtype(), 1, count, d);
          // masked tokens are padding, which score never reads: quantize stores their NaN or infinities as zeros
          q = (mask == null ? batch : batch.withMask(flags(mask, from, count))).quantize(dtype);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("quantize: " + emb.source() + ": " + inFile(e.getMessage(), from,
              tokenShape));
        }
        byte[] stored = q.toByteArray();
        MemorySegment.copy(stored, 0, codes, ValueLayout.JAVA_BYTE, from * dtype.bytesPerToken(d), stored.length);
        MemorySegment.copy(q.scales(), 0, scales, NdArray.LE_FLOAT, from * Float.BYTES, count);
      }
      Map<String, NdArray> tensors = new LinkedHashMap<>();
      tensors.put(Inputs.EMBEDDINGS, NdArray.ofSegment(Inputs.EMBEDDINGS, TokenType.elementType(dtype), codeShape,
          codes));
      tensors.put(Inputs.SCALES, NdArray.ofSegment(Inputs.SCALES, NdArray.ElementType.F32, tokenShape, scales));
      String copied = "";
      for (Map.Entry<String, NdArray> c : companions.entrySet()) {
        tensors.put(c.getKey(), c.getValue());
        copied += ", " + c.getKey() + " copied";
      }
      // other tensors (ids, metadata arrays) have no meaning quantize knows: named, so that none goes unnoticed
      String embName = tensor != null ? tensor : names.get(0);
      List<String> leftOut = names.stream().filter(n -> !n.equals(embName) && !companions.containsKey(n)).toList();
      if (!leftOut.isEmpty()) {
        copied += ", left out: " + SafeTensorsFile.shown(leftOut);
      }
      if (!source.otherMetadata().isEmpty()) {
        // the format's metadata maps strings to strings: the reader keeps those only
        copied += ", __metadata__ entries that are not strings left out: " + SafeTensorsFile.shown(
            source.otherMetadata());
      }
      // the input's __metadata__ stays (model names, formats), but its d records, which named the input's tensors; then
      // d itself: packed bits hold it only rounded up to whole bytes, and score reads it from here
      Map<String, String> metadata = new LinkedHashMap<>();
      source.metadata().forEach((k, v) -> {
        if (!k.startsWith(Inputs.DIM_KEY)) {
          metadata.put(k, v);
        }
      });
      metadata.put(Inputs.DIM_KEY + Inputs.EMBEDDINGS, String.valueOf(d));
      if (!SafeTensors.headerFits(tensors, metadata)) {
        // the entries quantize adds pushed a header near the limit past it: the input's own metadata goes, d stays
        int entries = metadata.size();
        metadata.keySet().removeIf(k -> !k.startsWith(Inputs.DIM_KEY));
        new Warnings(err).warn("quantize: --in " + inPath + ": its __metadata__ (" + Counts.of(entries
            - metadata.size(), "entry", "entries") + ") would pass the safetensors header's limit of "
            + SafeTensors.MAX_HEADER + " bytes beside the entries quantize adds; written without it");
      }
      output.write(file -> SafeTensors.write(file, tensors, metadata));
      output.commit();
      long before = emb.byteSize();
      long after = codes.byteSize() + scales.byteSize();
      // a file of no tokens has no ratio to report
      // for a few dims (bf16 to int8 at d <= 3) a token's scale outweighs the bytes saved: the file grows, and says so
      String ratio = after == 0 ? "no tokens" : after == before ? "the same size" : after < before
          ? String.format(Locale.ROOT, "%.2fx smaller", (double) before / after)
          : String.format(Locale.ROOT, "%.2fx larger", (double) after / before);
      // names may hold any character: the summary stays one line
      out.println(Printable.oneLine(String.format(Locale.ROOT, "quantized %s %s %s (%s) -> %s: embeddings %s %s"
              + " + scales %s float32 (%s, %s%s); file %s -> %s", emb.source(), emb.type(), emb.shapeString(),
          Sizes.of(before), target, TokenType.elementType(dtype), Arrays.toString(codeShape),
          Arrays.toString(tokenShape), Sizes.of(after), ratio, copied, Sizes.of(Files.size(in)),
          Sizes.of(Files.size(target)))));
    }
    return 0;
  }

  /**
   * The mask's flags of tokens {@code from} .. {@code from + count - 1}: elements of one byte (bool, uint8) or of
   * four or eight (int32, int64), each 0 or 1 (checked with the companions), so any byte set is a set flag.
   */
  private static boolean[] flags(NdArray mask, long from, int count) {
    MemorySegment bytes = mask.segment();
    int width = mask.type().width();
    boolean[] flags = new boolean[count];
    for (int t = 0; t < count; t++) {
      for (int b = 0; b < width && !flags[t]; b++) {
        flags[t] = bytes.get(ValueLayout.JAVA_BYTE, (from + t) * width + b) != 0;
      }
    }
    return flags;
  }

  /** The library's message about token t of a slice, with the token named by its place in the file. */
  private static String inFile(String message, long from, long[] tokenShape) {
    Matcher m = Pattern.compile("stored token (\\d+)").matcher(message);
    return m.find() ? m.replaceFirst("token " + TokenType.index(tokenShape, from + Long.parseLong(m.group(1))))
        : message;
  }
}
