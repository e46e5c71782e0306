package dev.maxsim4j.cli;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.io.Absent;
import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.cli.io.GivenFiles;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.Npy;
import dev.maxsim4j.cli.io.PathArgument;
import dev.maxsim4j.cli.io.Printable;
import dev.maxsim4j.cli.io.SafeTensorsFile;
import dev.maxsim4j.cli.io.UnsupportedDtypeException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Turns embedding, mask, offsets and scales files into token batches: padded {@code [N, L, d]} (or
 * {@code [L, d]}, or {@code [B, K, L, d]}) with an optional mask, or packed {@code [T, d]} with offsets
 * {@code [N+1]}; float, int8, fp8 or packed-bit tokens, the quantized ones with optional per-token scales.
 */
final class Inputs {
  /** Default tensor names in a .safetensors file, as {@code encode} writes them. */
  static final String EMBEDDINGS = "embeddings";
  static final String MASK = "mask";
  static final String OFFSETS = "offsets";
  static final String SCALES = "scales";
  /** The {@code __metadata__} key under which quantize records a tensor's token dimension (d in bits, for bits). */
  static final String DIM_KEY = "maxsim4j.dim.";

  /** The options that describe one side (queries or documents). */
  record Options(String what, String embeddings, String tensor, String mask, String maskTensor, String offsets,
      String offsetsTensor, String scales, String scaleTensor, String bits) {}

  static final Options QUERIES = new Options("queries", "--queries", "--queries-tensor", "--query-mask",
      "--query-mask-tensor", "--query-offsets", "--query-offsets-tensor", "--query-scales", "--queries-scale-tensor",
      "--queries-bits");
  static final Options DOCS = new Options("docs", "--docs", "--docs-tensor", "--doc-mask", "--doc-mask-tensor",
      "--doc-offsets", "--doc-offsets-tensor", "--doc-scales", "--docs-scale-tensor", "--docs-bits");

  /**
   * A batch, the shape of the embeddings it came from, every file it read, whether scales were read, where packed
   * bits took their d from (the flag or the file's record; null for other types), and a note for the user (null:
   * none) where the file suggests another reading than the one taken.
   */
  record Loaded(TokenBatch batch, NdArray embeddings, List<Path> files, boolean scaled, String bitsFrom,
      String note) {}

  /** The largest array the JVM allocates. */
  static final long HEAP_ELEMENTS = Integer.MAX_VALUE - 8;

  private Inputs() {}

  /**
   * The value of {@code o.bits()}, 0 when absent. A file quantize wrote records its tokens' dimension ({@code
   * recorded}, under {@code key} in its __metadata__): for packed bits it stands in for an absent flag and must
   * agree with a given one, since a wrong d that packs into as many bytes would score padding bits silently.
   */
  private static int bits(Args a, Options o, NdArray emb, String recorded, String key) {
    int given = a.intValue(o.bits(), 0, 1);
    if (recorded == null || emb.rank() == 0) {
      return given;
    }
    boolean packed = emb.type() == NdArray.ElementType.U8;
    long last = emb.dim(emb.rank() - 1);
    if (!recorded.matches("0|[1-9][0-9]*")) {
      throw new IllegalArgumentException(o.what() + " " + emb.source() + " records its token dimension as '"
          + Printable.oneLine(Printable.cut(recorded, 43)) + "' (" + key + " in its __metadata__); expected a whole"
          + " number in decimal digits (no sign, space or leading zero), as quantize writes it");
    }
    // a number past 9 digits is past any shape's reach, as 0 is
    int d = recorded.length() <= 9 ? Integer.parseInt(recorded) : 0;
    if (d == 0 || last != (packed ? (d + 7L) / 8 : d)) {
      throw new IllegalArgumentException(o.what() + " " + emb.source() + " records its token dimension as '"
          + Printable.oneLine(Printable.cut(recorded, 43)) + "' (" + key
          + " in its __metadata__), which its shape " + emb.shapeString() + " does not hold; expected "
          + (packed ? last == 0 ? "a last axis of at least 1 byte" : "a d of " + Math.max(1, 8 * last - 7) + " to "
          + 8 * last + " bits" : "d = " + last));
    }
    if (!packed) {
      return given;
    }
    if (given != 0 && given != d) {
      throw new UsageException("score: " + o.bits() + " " + given + ", but " + emb.source() + " records its tokens"
          + " as " + d + " bits (" + key + " in its __metadata__, as quantize writes it); expected " + o.bits()
          + " " + d + " or no " + o.bits());
    }
    return d;
  }

  /**
   * Reads one side. A file's tokens are scored from its mapping, never copied onto the heap: the CPU kernels score
   * float32, half-precision and quantized tokens as fast from there (docs/cli-at-scale.md), so a copy would cost its
   * time and heap, and a file past the heap could not be scored. Tokens on the heap (tests) are read as arrays.
   */
  static Loaded load(Args a, Options o) throws IOException {
    return load(a, o, PathArgument.of(o.embeddings(), a.require(o.embeddings())));
  }

  /**
   * As above, the embeddings being {@code path} (one shard of a folder) rather than the option's file. A shard stays
   * the path its folder listed: turned into a string and back, a name the locale's encoding cannot spell is lost.
   */
  static Loaded load(Args a, Options o, Path path) throws IOException {
    Path file = input(o.embeddings(), path);
    boolean safetensors = isSafetensors(file);
    Map<Path, SafeTensorsFile> opened = new HashMap<>(); // each file's header is parsed once for all its tensors
    SafeTensorsFile tensors;
    try {
      tensors = safetensors ? open(file, opened) : null;
    } catch (IllegalArgumentException e) {
      throw named(o.embeddings(), file, e);
    }
    List<String> names = safetensors ? tensors.names() : List.of();
    if (!safetensors && a.label(o.tensor()) != null) {
      throw new UsageException("score: " + o.tensor() + " names a tensor, but " + path
          + " is not a .safetensors file");
    }
    String embName = safetensors ? pick(o.embeddings(), path, a.label(o.tensor()), o.tensor(), names, EMBEDDINGS)
        : null;
    NdArray emb;
    try {
      emb = safetensors ? tensors.read(embName) : Npy.read(file);
    } catch (UnsupportedDtypeException e) {
      throw e.as(o.embeddings(), (safetensors ? "F32, F16, BF16, I8, F8_E4M3 or U8 (packed bits)"
          : "float32 '<f4', float16 '<f2', int8 '|i1' or uint8 '|u1' (packed bits)") + " embeddings");
    } catch (IllegalArgumentException e) {
      throw named(o.embeddings(), file, e);
    }
    if (embName == null && names.size() == 1) {
      embName = names.get(0);
    }
    List<Path> files = new ArrayList<>(List.of(file));
    int bits = bits(a, o, emb, safetensors && embName != null ? tensors.metadata().get(DIM_KEY + embName) : null,
        DIM_KEY + embName);
    DType dtype = TokenType.dtype(o, emb, bits);
    requireRank(o.what(), emb);
    if (o == QUERIES && emb.rank() == 4) { // only documents come as [B, K, L, d] candidates
      throw new IllegalArgumentException("queries " + emb.source() + " has shape " + emb.shapeString()
          + "; expected [N, L, d] or [L, d]");
    }

    Path maskPath = companionFile(a, o.mask(), o.maskTensor(), path, file, safetensors);
    String maskTensor = a.label(o.maskTensor());
    // the companions "mask", "scales" and "offsets" go with whichever tensor holds the embeddings: read or refused,
    // never ignored
    if (maskPath == null && safetensors && names.contains(MASK) && !MASK.equals(embName)) {
      maskPath = file;
      maskTensor = MASK;
    }
    NdArray mask = maskPath == null ? null : read(given(a, o.mask(), o), maskPath, maskTensor,
        o.maskTensor(), MASK, files, opened);

    Path offsetsPath = companionFile(a, o.offsets(), o.offsetsTensor(), path, file, safetensors);
    String offsetsTensor = a.label(o.offsetsTensor());
    if (offsetsPath != null && emb.rank() != 2) {
      throw new UsageException("score: " + (a.get(o.offsets()) != null ? o.offsets() : o.offsetsTensor())
          + " is for packed [T, d] embeddings, but " + emb.source() + " has shape " + emb.shapeString());
    }
    if (offsetsPath == null && safetensors && names.contains(OFFSETS) && !OFFSETS.equals(embName)) {
      if (emb.rank() != 2) {
        // offsets beside padded embeddings would be ignored: the file is not what it seems
        throw new IllegalArgumentException(o.what() + " " + path + " holds an 'offsets' tensor, but its embeddings "
            + emb.source() + " have shape " + emb.shapeString() + "; expected packed [T, d] embeddings beside"
            + " offsets, or a file without offsets for padded [N, L, d]");
      }
      offsetsPath = file;
    }
    NdArray offsets = offsetsPath == null ? null : read(given(a, o.offsets(), o), offsetsPath, offsetsTensor,
        o.offsetsTensor(), OFFSETS, files, opened);
    String note = offsets == null && emb.rank() == 2 && safetensors
        ? offsetsLike(o, path, tensors, names, embName, emb.dim(0)) : null;

    NdArray scales = scales(a, o, file, safetensors, names, embName, emb, dtype, files, opened);
    // the mask is read once, checked first: it tells which scales must be finite (a masked token's is never read)
    boolean[] valid = mask == null ? null : validTokens(o.what(), emb, offsets != null, mask);
    TokenType type = new TokenType(dtype, TokenType.dim(dtype, emb, bits),
        scales == null ? null : TokenType.scales(o.what(), scales, emb, offsets != null, valid));
    TokenBatch batch = offsets != null
        ? packed(o.what(), emb, type, offsets, valid)
        : padded(o.what(), emb, type, valid);
    // d of packed bits comes from the flag where it is given, else from the record bits() checked
    String bitsFrom = dtype != DType.BINARY ? null : a.get(o.bits()) != null ? o.bits()
        : DIM_KEY + embName + " in its __metadata__";
    return new Loaded(batch, emb, files, scales != null, bitsFrom, note);
  }

  /**
   * A note where {@code [T, d]} embeddings, read as one row of T tokens, sit beside an integer tensor of another name
   * that reads as offsets over them (from 0 to T, never decreasing): packed rows whose offsets were not named.
   */
  private static String offsetsLike(Options o, Path path, SafeTensorsFile tensors, List<String> names, String embName,
      long tokens) {
    for (String name : names) {
      try {
        if (!name.equals(embName) && readsAsOffsets(tensors.read(name), tokens)) {
          String shown = Printable.oneLine(name);
          long rows = tensors.read(name).elements() - 1;
          return o.embeddings() + " " + path + ": the [" + tokens + ", d] tensor '" + Printable.oneLine(embName)
              + "' is scored as one row of " + tokens + " tokens; the tensor '" + shown + "' beside it reads as"
              + " offsets of " + Counts.of(rows, "row") + " (give " + o.offsetsTensor() + " " + shown + " to score"
              + " those rows)";
        }
      } catch (RuntimeException unreadable) {
        // a tensor of a type this reader does not take is not offsets either
      }
    }
    return null;
  }

  /**
   * Whether {@code t} reads as offsets of two rows or more over {@code tokens} tokens: int32 or int64, from 3 to T + 1
   * entries (two, [0, T], are the one row taken) from 0 to T, never decreasing; read where they lie.
   */
  private static boolean readsAsOffsets(NdArray t, long tokens) {
    long entries = t.elements();
    if (t.rank() != 1 || entries < 3 || entries > tokens + 1
        || (t.type() != NdArray.ElementType.I32 && t.type() != NdArray.ElementType.I64)) {
      return false;
    }
    if (t.integerAt(0) != 0 || t.integerAt(entries - 1) != tokens) {
      return false;
    }
    for (long i = 1; i < entries; i++) {
      if (t.integerAt(i) < t.integerAt(i - 1)) {
        return false;
      }
    }
    return true;
  }

  /**
   * The scales of quantized embeddings: from {@code o.scales()} FILE (and {@code o.scaleTensor()}), or the
   * {@code scales} tensor beside the embeddings in a .safetensors file; null when there are none.
   */
  private static NdArray scales(Args a, Options o, Path path, boolean safetensors, List<String> names,
      String embName, NdArray emb, DType dtype, List<Path> files, Map<Path, SafeTensorsFile> opened)
      throws IOException {
    Path scalesPath = companionFile(a, o.scales(), o.scaleTensor(), path, path, safetensors);
    String scaleTensor = a.label(o.scaleTensor());
    if (scalesPath != null && !dtype.isQuantized()) {
      throw new UsageException("score: " + (a.label(o.scaleTensor()) != null ? o.scaleTensor() : o.scales())
          + " is for int8, float8_e4m3fn or packed-bit embeddings, but " + o.what() + " " + emb.source() + " holds "
          + emb.type() + "; expected quantized embeddings (I8, F8_E4M3, U8) or no scales");
    }
    if (scalesPath == null && safetensors && names.contains(SCALES) && !SCALES.equals(embName)) {
      if (!dtype.isQuantized()) {
        // scales beside float embeddings would be ignored: the file is not what it seems
        throw new IllegalArgumentException(o.what() + " " + path + " holds a 'scales' tensor, but its embeddings "
            + emb.source() + " hold " + emb.type() + "; expected scales only beside I8, F8_E4M3 or U8 embeddings");
      }
      scalesPath = path;
      scaleTensor = SCALES;
    }
    return scalesPath == null ? null : read(given(a, o.scales(), o), scalesPath, scaleTensor,
        o.scaleTensor(), SCALES, files, opened);
  }

  /**
   * The file given as {@code option}: it exists and is a regular file; a folder is named as such rather than
   * "no such file".
   */
  static Path input(String option, String path) {
    return input(option, PathArgument.of(option, path));
  }

  /** As above, for a path given as one, or found by listing a folder. */
  static Path input(String option, Path p) {
    if (Files.isDirectory(p)) {
      throw new IllegalArgumentException(option + " " + p + " is a directory; expected a .npy or .safetensors file");
    }
    if (!Files.exists(p)) {
      throw new IllegalArgumentException(option + " " + p + (isLinkLoop(p) ? " is a loop of symbolic links;"
          + " expected a .npy or .safetensors file" : ": " + Absent.why(p)));
    }
    if (!Files.isRegularFile(p)) {
      throw new IllegalArgumentException(option + " " + p + " is not a regular file; expected a .npy or"
          + " .safetensors file");
    }
    GivenFiles.given(option, p);
    return p;
  }

  /** Whether following {@code p}'s links never reaches a file (the system gives up, as on a loop). */
  static boolean isLinkLoop(Path p) {
    if (!Files.isSymbolicLink(p)) {
      return false;
    }
    try {
      p.toRealPath();
      return false;
    } catch (NoSuchFileException missing) {
      return false;
    } catch (IOException e) {
      return true;
    }
  }

  /**
   * The option that gave a companion's file: {@code option} itself, or the embeddings' option where the companion
   * was found beside the embeddings (a refusal must not name an option the command line never gave).
   */
  private static String given(Args a, String option, Options o) {
    return a.get(option) != null ? option : o.embeddings();
  }

  /**
   * The file of a companion (mask, offsets, scales): the one {@code fileOption} gives, else, where {@code tensorOption}
   * names a tensor, the embeddings' own {@code file} ({@code path} as given), which must then be a .safetensors file.
   */
  private static Path companionFile(Args a, String fileOption, String tensorOption, Path path, Path file,
      boolean safetensors) {
    Path given = path(a, fileOption);
    if (given != null || a.get(tensorOption) == null) {
      return given;
    }
    if (!safetensors) {
      throw new UsageException("score: " + tensorOption + " needs " + fileOption + " FILE (it defaults to the"
          + " embeddings file only when that is a .safetensors file, and " + path + " is not)");
    }
    return file;
  }

  /** The path {@code option} gives, or null where it is not given. */
  private static Path path(Args a, String option) {
    String value = a.get(option);
    return value == null ? null : PathArgument.of(option, value);
  }

  private static boolean isSafetensors(Path path) {
    Path name = path.getFileName();
    return name != null && name.toString().toLowerCase(Locale.ROOT).endsWith(".safetensors");
  }

  /**
   * As below, refusing in one line naming the options a tensor that the file lacks, or a file of several tensors none
   * of which has the default name (the reader alone can only say "name one with the matching --...-tensor option").
   */
  static String pick(String fileOption, Path path, String named, String tensorOption, List<String> names,
      String fallback) {
    String name = pick(named, names, fallback);
    if (name != null && !names.contains(name)) {
      throw new IllegalArgumentException(tensorOption + " " + Printable.oneLine(name) + ": " + fileOption + " " + path
          + " has no tensor '" + Printable.oneLine(name) + "'; it holds " + SafeTensorsFile.shown(names));
    }
    if (names.isEmpty()) {
      throw new IllegalArgumentException(fileOption + " " + path + " holds no tensor; expected a file with a \""
          + fallback + "\" tensor");
    }
    if (name == null && names.size() != 1) {
      throw new IllegalArgumentException(fileOption + " " + path + " holds " + names.size() + " tensors "
          + SafeTensorsFile.shown(names) + ", none called \"" + fallback + "\"; expected " + tensorOption
          + " NAME to say which");
    }
    return name;
  }

  /** The tensor to read: the named one, the only one, or the default name when the file holds it. */
  private static String pick(String named, List<String> names, String fallback) {
    if (named != null) {
      return named;
    }
    return names.size() != 1 && names.contains(fallback) ? fallback : null;
  }

  private static NdArray read(String option, Path path, String tensor, String tensorOption, String fallback,
      List<Path> files, Map<Path, SafeTensorsFile> opened) throws IOException {
    Path file = input(option, path);
    files.add(file);
    if (!isSafetensors(file)) {
      if (tensor != null) {
        throw new UsageException("score: " + tensorOption + " names a tensor, but " + path
            + " is not a .safetensors file");
      }
      try {
        return Npy.read(file);
      } catch (UnsupportedDtypeException e) {
        throw e.as(option, takes(fallback, false));
      } catch (IllegalArgumentException e) {
        throw named(option, file, e);
      }
    }
    try {
      SafeTensorsFile tensors = open(file, opened);
      return tensors.read(pick(option, path, tensor, tensorOption, tensors.names(), fallback));
    } catch (UnsupportedDtypeException e) {
      throw e.as(option, takes(fallback, true));
    } catch (IllegalArgumentException e) {
      throw named(option, file, e);
    }
  }

  /**
   * A refusal of a whole file (not a .npy file, a truncated one, a damaged header) that begins with the file's name,
   * as the file readers word it, named by the option that gave the file too: "Q.txt is not a .npy file" becomes
   * "--queries Q.txt is not a .npy file". Refusals that name an option already are left as they are.
   */
  static IllegalArgumentException named(String option, Path file, IllegalArgumentException e) {
    String message = e.getMessage();
    if (message == null || !message.startsWith(file.toString()) || message.startsWith(option + " ")) {
      return e;
    }
    return new IllegalArgumentException(option + " " + message, e);
  }

  /** What a mask, offsets or scales array may hold, in the file format's words. */
  static String takes(String companion, boolean safetensors) {
    return switch (companion) {
      case MASK -> safetensors ? "BOOL, U8, I32 or I64 (0 or 1) mask"
          : "bool '|b1', uint8 '|u1', int32 '<i4' or int64 '<i8' (0 or 1) mask";
      case OFFSETS -> safetensors ? "I32 or I64 offsets" : "int32 '<i4' or int64 '<i8' offsets";
      default -> safetensors ? "F32 scales" : "float32 '<f4' scales";
    };
  }

  /** {@code file} opened, or the same file as opened before for another of its tensors. */
  private static SafeTensorsFile open(Path file, Map<Path, SafeTensorsFile> opened) throws IOException {
    Path key = file.toAbsolutePath().normalize();
    SafeTensorsFile tensors = opened.get(key);
    if (tensors == null) {
      tensors = SafeTensorsFile.open(file);
      opened.put(key, tensors);
    }
    return tensors;
  }

  /** A padded batch of float tokens (see below). */
  static TokenBatch padded(String what, NdArray emb, NdArray mask) {
    boolean[] valid = mask == null ? null : validTokens(what, emb, false, mask);
    return padded(what, emb, TokenType.floating(what, emb), valid);
  }

  /**
   * A padded batch; {@code flags}, the mask's as {@link #validTokens} checked them, or null; a mask that only trims
   * each row's tail becomes per-row lengths, which kernels skip.
   */
  private static TokenBatch padded(String what, NdArray emb, TokenType type, boolean[] flags) {
    requireRank(what, emb);
    int rank = emb.rank();
    int d = type.dim();
    int l = emb.dim(rank - 2);
    requireDim(what, emb, d);
    int n = paddedRows(what, emb);
    TokenBatch b = named(what, emb, () -> {
      if (type.dtype().isQuantized()) {
        return emb.inSegment()
            ? TokenBatch.fromMemorySegment(emb.segment(), type.dtype(), type.scales(), n, l, d)
            : TokenBatch.ofBytes(type.dtype(), emb.bytes(), type.scales(), n, l, d);
      } else if (emb.inSegment()) {
        return TokenBatch.fromMemorySegment(emb.segment(), emb.dtype(), n, l, d);
      }
      float[] floats = emb.floats();
      return floats != null ? TokenBatch.ofFloats(floats, n, l, d)
          : TokenBatch.ofHalfs(emb.dtype(), emb.halfs(), n, l, d);
    });
    requireNoNanBytes(what, emb, type, flags);
    if (flags == null) {
      return b;
    }
    int[] lengths = trailingLengths(flags, n, l);
    return lengths != null ? b.withLengths(lengths) : b.withMask(flags);
  }

  /** The rows a padded tensor's leading axes make, refused by name past what one batch holds. */
  private static int paddedRows(String what, NdArray emb) {
    long rows = 1; // capped past 2^31 - 1 so the product cannot wrap
    for (int axis = 0; axis < emb.rank() - 2; axis++) {
      long size = emb.shape()[axis];
      rows = size == 0 || rows == 0 ? 0 : rows > Integer.MAX_VALUE / size ? Integer.MAX_VALUE + 1L : rows * size;
    }
    if (rows > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(what + " " + emb.source() + " has shape " + emb.shapeString()
          + ": more than 2^31-1 rows; at most 2^31-1 are supported");
    }
    long l = emb.dim(emb.rank() - 2);
    if (rows * l > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(what + " " + emb.source() + " has shape " + emb.shapeString() + ": "
          + rows * l + " token slots; at most 2^31-1 are supported (write the packed layout [T, d] + offsets)");
    }
    return (int) rows;
  }

  /**
   * Refuses padded float tokens {@code emb} (in a segment) where score could not read them, or tokens of their
   * shape, as one batch: the checks of {@link #padded} on the shape alone, without reading a token.
   */
  static void requirePaddedShape(String what, NdArray emb) {
    requireRank(what, emb);
    int d = emb.dim(emb.rank() - 1);
    requireDim(what, emb, d);
    int n = paddedRows(what, emb);
    int l = emb.dim(emb.rank() - 2);
    named(what, emb, () -> TokenBatch.fromMemorySegment(emb.segment(), emb.dtype(), n, l, d));
  }

  private static void requireRank(String what, NdArray emb) {
    int rank = emb.rank();
    if (rank < 2 || rank > 4) {
      throw new IllegalArgumentException(what + " " + emb.source() + " has shape " + emb.shapeString()
          + "; expected [N, L, d]" + (rank == 4 ? "" : " (or [L, d], or [B, K, L, d] for candidates)"));
    }
  }

  /** A token vector needs at least one component; the library's message would not name the file. */
  private static void requireDim(String what, NdArray emb, int d) {
    if (d < 1) {
      throw new IllegalArgumentException(what + " " + emb.source() + " has shape " + emb.shapeString()
          + "; expected a token dimension d >= 1 (the last axis)");
    }
  }

  /** Each row's valid-token count if every row is valid tokens followed only by padding; else null. */
  static int[] trailingLengths(boolean[] flags, int n, int l) {
    int[] lengths = new int[n];
    for (int i = 0; i < n; i++) {
      int t = 0;
      while (t < l && flags[i * l + t]) {
        t++;
      }
      lengths[i] = t;
      for (int rest = t; rest < l; rest++) {
        if (flags[i * l + rest]) {
          return null;
        }
      }
    }
    return lengths;
  }

  /**
   * A packed batch: tokens {@code [T, d]}, rows delimited by {@code offsets [N+1]}; {@code flags}, a mask {@code [T]}'s
   * as {@link #validTokens} checked them, or null.
   */
  private static TokenBatch packed(String what, NdArray emb, TokenType type, NdArray offsets, boolean[] flags) {
    int[] starts = offsets(what, offsets, emb.dim(0));
    int d = type.dim();
    requireDim(what, emb, d);
    TokenBatch b = named(what, emb, () -> {
      if (type.dtype().isQuantized()) {
        return emb.inSegment()
            ? TokenBatch.packedFromMemorySegment(emb.segment(), type.dtype(), type.scales(), starts, d)
            : TokenBatch.packedBytes(type.dtype(), emb.bytes(), type.scales(), starts, d);
      } else if (emb.inSegment()) {
        return TokenBatch.packedFromMemorySegment(emb.segment(), emb.dtype(), starts, d);
      }
      float[] floats = emb.floats();
      return floats != null ? TokenBatch.packedFloats(floats, starts, d)
          : TokenBatch.packedHalfs(emb.dtype(), emb.halfs(), starts, d);
    });
    requireNoNanBytes(what, emb, type, flags);
    return flags == null ? b : b.withMask(flags);
  }

  /**
   * The batch {@code make} builds of {@code emb}, a refusal of the library's (a shape past its limits) named by the
   * option and tensor it came from, as the checks here name them: on its own it would name neither.
   */
  private static TokenBatch named(String what, NdArray emb, Supplier<TokenBatch> make) {
    try {
      return make.get();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(what + " " + emb.source() + ": " + e.getMessage(), e);
    }
  }

  /** fp8 tokens hold no NaN byte where {@code valid} (null: everywhere); see {@link TokenType#requireNoNanBytes}. */
  private static void requireNoNanBytes(String what, NdArray emb, TokenType type, boolean[] valid) {
    if (type.dtype() == DType.FLOAT8_E4M3) {
      TokenType.requireNoNanBytes(what, emb, valid);
    }
  }

  /** The flags of a mask beside padded or packed embeddings, checked as {@link #padded} and {@link #packed} do. */
  private static boolean[] validTokens(String what, NdArray emb, boolean packed, NdArray mask) {
    if (packed) {
      requirePackedMask(what, emb, mask);
    } else {
      requireRank(what, emb); // before the mask's expected shape is taken from it
      requirePaddedMask(what, emb, mask);
    }
    return flags(what, mask);
  }

  private static void requirePaddedMask(String what, NdArray emb, NdArray mask) {
    if (!TokenType.fitsTokens(mask.shape(), emb, false)) {
      throw new IllegalArgumentException(what + " mask " + mask.source() + " has shape " + mask.shapeString()
          + "; expected " + TokenType.tokenShapes(emb, false) + " to match embeddings " + emb.shapeString());
    }
  }

  private static void requirePackedMask(String what, NdArray emb, NdArray mask) {
    long tokens = emb.shape()[0];
    if (mask.rank() != 1 || mask.shape()[0] != tokens) {
      throw new IllegalArgumentException(what + " mask " + mask.source() + " has shape " + mask.shapeString()
          + "; expected [" + tokens + "] (one flag per packed token of " + emb.source() + ")");
    }
  }

  /**
   * Checks a mask and offsets found beside {@code emb} as score will read them (either may be null), so a tool
   * that copies them (quantize) refuses what score would refuse: offsets only beside packed [T, d] embeddings and
   * running from 0 to T, a bool, uint8, int32 or int64 mask of one flag (0 or 1) per token slot.
   */
  static void requireCompanions(String what, NdArray emb, NdArray mask, NdArray offsets) {
    boolean packed = offsets != null;
    if (packed) {
      if (emb.rank() != 2) {
        throw new IllegalArgumentException(what + " " + emb.source() + " has shape " + emb.shapeString() + " beside"
            + " offsets " + offsets.source() + "; expected packed [T, d] embeddings beside offsets, or no offsets for"
            + " padded [N, L, d]");
      }
      offsets(what, offsets, emb.shape()[0]);
    }
    if (mask != null) {
      flags(what, mask);
      if (packed) {
        requirePackedMask(what, emb, mask);
      } else {
        requirePaddedMask(what, emb, mask);
      }
    }
  }

  /** Offsets as cu_seqlens: int32/int64 {@code [N+1]}, from 0, never decreasing, ending at T. */
  static int[] offsets(String what, NdArray offsets, long tokens) {
    String name = what + " offsets " + offsets.source();
    if (offsets.type() != NdArray.ElementType.I32 && offsets.type() != NdArray.ElementType.I64) {
      throw new IllegalArgumentException(name + " holds " + offsets.type() + "; expected int32 or int64 offsets");
    }
    // read as longs, kept as ints, and booked by the batch (a start, a length and a valid count): refused by name
    // here where they cannot fit the heap, rather than as a heap exhausted somewhere
    long perEntry = Long.BYTES + Integer.BYTES + 3L * Integer.BYTES;
    long heap = Runtime.getRuntime().maxMemory();
    if (offsets.rank() == 1 && offsets.elements() > heap / perEntry) {
      throw new IllegalArgumentException(name + " has " + offsets.elements() + " entries, whose reading and"
          + " bookkeeping take " + offsets.elements() * perEntry + " bytes, more than this JVM's whole heap (" + heap
          + " bytes, -Xmx); expected fewer rows per file, or a larger heap");
    }
    long[] v = offsets.integers();
    if (v == null) {
      throw new IllegalArgumentException(name + " holds " + offsets.type() + "; expected int32 or int64 offsets");
    }
    if (offsets.rank() != 1 || v.length == 0) {
      throw new IllegalArgumentException(name + " has shape " + offsets.shapeString() + "; expected [N+1] with N >= 0");
    }
    if (v[0] != 0) {
      throw new IllegalArgumentException(name + " start at " + v[0] + "; expected 0");
    }
    int[] out = new int[v.length];
    for (int i = 1; i < v.length; i++) {
      if (v[i] < v[i - 1]) {
        throw new IllegalArgumentException(name + " decrease at " + i + " (" + v[i - 1] + " -> " + v[i]
            + "); expected non-decreasing offsets");
      }
      if (v[i] > tokens) {
        throw new IllegalArgumentException(name + " reach " + v[i] + " at " + i + ", past the "
            + Counts.of(tokens, "token"));
      }
      out[i] = (int) v[i];
    }
    if (v[v.length - 1] != tokens) {
      throw new IllegalArgumentException(name + " end at " + v[v.length - 1] + "; expected " + tokens
          + " (the tokens of the embeddings)");
    }
    return out;
  }

  private static boolean[] flags(String what, NdArray mask) {
    if (mask.type() == NdArray.ElementType.I32 || mask.type() == NdArray.ElementType.I64) {
      return integerFlags(what, mask);
    }
    boolean[] flags = mask.flags();
    if (flags == null) {
      throw new IllegalArgumentException(what + " mask " + mask.source() + " holds " + mask.type()
          + "; expected bool, uint8, int32 or int64 flags");
    }
    // any other byte is no flag (token ids, a damaged bool array): read as "valid" it would score silently
    MemorySegment bytes = mask.segment();
    for (long i = 0; i < bytes.byteSize(); i++) {
      byte b = bytes.get(ValueLayout.JAVA_BYTE, i);
      if (b != 0 && b != 1) {
        throw new IllegalArgumentException(what + " mask " + mask.source() + " holds " + (b & 0xff) + " at "
            + TokenType.index(mask.shape(), i) + "; expected 0 or 1 (one flag per token)");
      }
    }
    return flags;
  }

  /** An int32 or int64 mask (a tokenizer's attention_mask, as Hugging Face's return it) as flags: 0 or 1 each. */
  private static boolean[] integerFlags(String what, NdArray mask) {
    long n = mask.elements();
    if (n > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException(what + " mask " + mask.source() + " has " + n + " elements "
          + mask.shapeString() + "; a Java array holds at most " + (Integer.MAX_VALUE - 8));
    }
    boolean[] flags = new boolean[(int) n];
    for (int i = 0; i < flags.length; i++) {
      long v = mask.integerAt(i);
      if (v != 0 && v != 1) {
        throw new IllegalArgumentException(what + " mask " + mask.source() + " holds " + v + " at "
            + TokenType.index(mask.shape(), i) + "; expected 0 or 1 (one flag per token)");
      }
      flags[i] = v == 1;
    }
    return flags;
  }
}
