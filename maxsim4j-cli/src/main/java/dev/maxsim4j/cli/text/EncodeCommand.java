package dev.maxsim4j.cli.text;

import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.Progress;
import dev.maxsim4j.cli.UsageException;
import dev.maxsim4j.cli.io.AtomicOutput;
import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.cli.io.GivenFiles;
import dev.maxsim4j.cli.io.MiniJson;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.PathArgument;
import dev.maxsim4j.cli.io.SafeTensors;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code encode}: texts to token embeddings in a .safetensors file, packed ({@code embeddings [T, 384]},
 * {@code offsets [N+1]}), the input format of {@code score}.
 */
public final class EncodeCommand {
  public static final String USAGE = """
      encode --in TEXTS --out E.safetensors [--dtype bf16|f32]
        TEXTS: a text file (one text per non-blank line, in order; a line ends at \\n, \\r\\n or a lone \\r,
        as Java's readers count them) or a folder (one text per .txt/.md file, the suffix in any case,
        sorted by path byte by byte, as LC_ALL=C sort orders them; its own .maxsim4j, where index keeps
        its files, left out), so that row i is the i-th of them; for a folder, __metadata__
        "maxsim4j.files" holds each row's path under it, a JSON array of strings (its bytes read as
        UTF-8, bytes that are not UTF-8 written as \\xNN, as Python's backslashreplace;
        json.loads(safe_open(F, "np").metadata()["maxsim4j.files"]) in Python; left out, with a warning,
        where the paths would pass the header's 100 MB). A text that cannot be read as
        UTF-8 (invalid bytes, NUL bytes), or holds no word piece (whitespace, control or format
        characters only, or only what the model's vocabulary lacks: emoji, scripts such as Thai), is a
        row of no token, named on stderr (the first 20 of the reading's warnings, then of these, the
        rest counted): as a document it scores -1e9, as a query 0 against documents with tokens. A text
        of more than 254 word pieces is encoded in windows of 254, each with its own [CLS] and [SEP], and
        keeps every window's tokens (score then reads it whole; rerank scores its best passage).
        Token embeddings of all-MiniLM-L6-v2 (a sentence model used token-wise), unit length, packed
        without padding: tensors "embeddings" [T, 384] (every text's tokens in order, bf16 by default) and
        "offsets" [N+1] int64 (text i is tokens offsets[i] .. offsets[i+1]-1), which score reads as is:
        score --queries Q.safetensors --docs E.safetensors --top-k 10 --out-run run.tsv""";

  /** The encoder's refusal of texts past what a call holds: the limit, and the text that passed it. */
  private static final Pattern TOO_MANY = Pattern.compile("texts hold more than (\\d+) tokens .*?, passed at"
      + " texts\\[(\\d+)]");

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
    } else {
      GivenFiles.given("--in", in); // a folder that cannot be listed is named by its option too
    }
    TextFiles.Listing listing = Files.isDirectory(in) ? TextFiles.under(in) : null;
    List<Path> files = listing != null ? listing.files() : List.of(in);
    if (listing != null && !listing.unlisted().isEmpty()) {
      // files may be missing under what could not be read, and rows past them would name the wrong files
      TextFiles.Skip first = listing.unlisted().getFirst();
      throw new IllegalArgumentException("encode: --in " + TextFiles.shown(in) + ": cannot read " + first.what()
          + " (" + first.reason() + (listing.unlisted().size() > 1 ? ", and " + (listing.unlisted().size() - 1)
          + " more" : "") + "); expected a folder encode can list whole, so that row i is its i-th text file");
    }
    List<Path> inputs = new ArrayList<>(files);
    inputs.add(in);
    // checked before any text is read: an output that is one of the texts read, or that cannot be written or
    // replaced (an append-only folder), is refused before the reading and encoding work
    AtomicOutput.check("--out", target, inputs);
    try (AtomicOutput output = AtomicOutput.create("--out", target, inputs)) {
      // one row per input, in order, whether or not it can be read (null: named in a warning already): a row's
      // number names its file or line
      List<String> texts = new ArrayList<>();
      List<String> names = new ArrayList<>();
      List<String> rowFiles = new ArrayList<>(); // a folder's rows: each one's path under it
      if (listing != null) {
        // the files and the text-named entries that are no readable file, in one order by path
        List<TextFiles.Skip> skips = listing.skippedFiles();
        List<Path> paths = new ArrayList<>();
        List<TextFiles.Skip> skipOf = new ArrayList<>(); // per row: the entry that is no readable file, or null
        for (int f = 0, k = 0; f < files.size() || k < skips.size(); ) {
          boolean isSkip = k < skips.size() && (f == files.size() || skips.get(k).path().compareTo(files.get(f)) < 0);
          TextFiles.Skip skip = isSkip ? skips.get(k++) : null;
          paths.add(isSkip ? skip.path() : files.get(f++));
          skipOf.add(skip);
        }
        // a row whose name has no key has no token, and null in the row-to-file map
        List<String> keys = TextFiles.keys(in, paths, (f, why) -> warnings.warn(TextFiles.shown(f) + ": " + why
            + "; " + TextFiles.NO_TOKEN + ", named null in the row-to-file map"));
        for (int r = 0; r < paths.size(); r++) {
          TextFiles.Skip skip = skipOf.get(r);
          Path file = paths.get(r);
          if (skip != null) {
            warnings.warn(skip.what() + ": " + skip.reason() + "; " + TextFiles.NO_TOKEN);
          }
          texts.add(skip != null || keys.get(r) == null ? null
              : TextFiles.readOrNoToken(file, TextFiles.shown(file), warnings).orElse(null));
          names.add(skip != null ? skip.what() : TextFiles.shown(file));
          rowFiles.add(keys.get(r));
        }
      } else {
        for (TextFiles.Line line : TextFiles.lines("--in", in, warnings, true)) {
          texts.add(line.text());
          names.add("line " + line.number() + " of " + TextFiles.shown(in));
        }
      }
      if (texts.isEmpty()) {
        warnings.finish();
        throw new IllegalArgumentException("encode: " + in + " holds no text; expected non-blank lines or .txt/.md"
            + " files");
      }
      warnings.finish(); // the reading's warnings, before the model loads (which may fail)
      if (texts.stream().allMatch(Objects::isNull)) {
        throw new IllegalArgumentException("encode: " + in + " holds no text that can be read (each is named above);"
            + " expected UTF-8 text");
      }
      TokenBatch b;
      int[] lengths = new int[texts.size()];
      try (TextModel encoder = TextModel.load()) {
        List<String> withText = new ArrayList<>();
        boolean[] kept = new boolean[texts.size()];
        for (int i = 0; i < texts.size(); i++) {
          // the encoder's [CLS] and [SEP] alone would match every text alike, above texts that share words
          kept[i] = texts.get(i) != null && encoder.hasWordPiece(texts.get(i));
          if (kept[i]) {
            withText.add(texts.get(i));
          } else if (texts.get(i) != null) {
            warnings.warn(names.get(i) + " holds no word piece; " + TextFiles.NO_TOKEN);
          }
        }
        warnings.finish();
        if (withText.isEmpty()) {
          throw new IllegalArgumentException("encode: " + in + " holds no text with a word piece; expected lines or"
              + " .txt/.md files of text");
        }
        Progress progress = new Progress(err, "encoding " + Counts.of(withText.size(), "text"));
        try {
          b = encoder.encode(withText, progress::update);
        } catch (IllegalArgumentException e) {
          throw tooManyTokens(e, in, rowNames(names, kept));
        }
        progress.done();
        for (int i = 0, row = 0; i < texts.size(); i++) {
          lengths[i] = kept[i] ? b.validTokens(row++) : 0;
        }
      }
      int[] offsets = new int[texts.size() + 1];
      for (int i = 0; i < texts.size(); i++) {
        offsets[i + 1] = Math.addExact(offsets[i], lengths[i]);
      }
      long tokens = offsets[texts.size()];
      Map<String, NdArray> tensors = new LinkedHashMap<>();
      tensors.put("embeddings", PackedTokens.embeddings(target.toString(), b, dtype.equals("bf16")));
      tensors.put("offsets", PackedTokens.offsets(target.toString(), offsets));
      Map<String, String> metadata = listing == null ? Map.of() : filesOfRows(rowFiles, FILES_LIMIT, err);
      output.write(file -> SafeTensors.write(file, tensors, metadata));
      output.commit();
      int empty = texts.size() - b.size();
      out.printf(Locale.ROOT, "encoded %s%s into %s: embeddings [%d, %d] %s (all tokens, packed), offsets [%d]%s%n",
          Counts.of(texts.size(), "text"), empty == 0 ? "" : " (" + empty + " of no token)", TextFiles.shown(target),
          tokens, b.dim(), dtype, texts.size() + 1, metadata.containsKey(FILES) ? ", each row's file in __metadata__ "
          + FILES : "");
    }
    return 0;
  }

  /** The metadata key of a folder's row-to-file map. */
  static final String FILES = "maxsim4j.files";

  /**
   * Header bytes the row-to-file map may take: readers refuse a header past 100 MB (the reference implementation's
   * limit), which a folder of some million files' paths would pass.
   */
  static final long FILES_LIMIT = 90_000_000L;

  /**
   * {@link #FILES}: the rows' paths as a JSON array, or none where its header bytes would pass {@code limit}, said in
   * a warning of its own (the reading's warnings may have filled the lines shown).
   */
  static Map<String, String> filesOfRows(List<String> rowFiles, long limit, PrintStream err) {
    StringBuilder json = new StringBuilder("[");
    for (String f : rowFiles) {
      json.append(json.length() == 1 ? "" : ",").append(f == null ? "null" : MiniJson.quote(f));
    }
    String array = json.append("]").toString();
    // quoted again as the metadata value, as the header holds it
    if (MiniJson.quote(array).getBytes(StandardCharsets.UTF_8).length > limit) {
      new Warnings(err).warn("the row-to-file map of " + Counts.of(rowFiles.size(), "file") + " would pass the"
          + " safetensors header's 100 MB; written without it (row i is the i-th file by path, byte by byte)");
      return Map.of();
    }
    return Map.of(FILES, array);
  }

  /** The encoder's "texts hold more than N tokens, passed at texts[i]" as this command's input names it. */
  static IllegalArgumentException tooManyTokens(IllegalArgumentException e, Path in, List<String> namesOfTexts) {
    Matcher m = TOO_MANY.matcher(String.valueOf(e.getMessage()));
    if (!m.lookingAt() || Integer.parseInt(m.group(2)) >= namesOfTexts.size()) {
      return e;
    }
    return new IllegalArgumentException("encode: --in " + TextFiles.shown(in) + " holds more than " + m.group(1)
        + " tokens (word pieces and each window's [CLS] and [SEP]), passed at " + namesOfTexts.get(
        Integer.parseInt(m.group(2))) + "; expected at most " + m.group(1) + " for a heap of "
        + (Runtime.getRuntime().maxMemory() >> 20) + " MiB: split the texts over several runs, or raise the heap"
        + " (JAVA_OPTS=-Xmx...)", e);
  }

  /** The names of the rows kept, in order: the texts the encoder was given. */
  private static List<String> rowNames(List<String> names, boolean[] kept) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < kept.length; i++) {
      if (kept[i]) {
        out.add(names.get(i));
      }
    }
    return out;
  }
}
