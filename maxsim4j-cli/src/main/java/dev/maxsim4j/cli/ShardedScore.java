package dev.maxsim4j.cli;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.TopK;
import dev.maxsim4j.cli.io.AtomicOutput;
import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.cli.io.GivenFiles;
import dev.maxsim4j.cli.io.Npy;
import dev.maxsim4j.cli.io.PathArgument;
import dev.maxsim4j.cli.io.Printable;
import dev.maxsim4j.cli.io.RunMemory;
import dev.maxsim4j.cli.text.Names;
import dev.maxsim4j.cli.text.Warnings;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code score --docs FOLDER}: the documents are the concatenation of the folder's .safetensors shards in
 * name order. Each shard is memory-mapped and scored on its own (quantized tokens stay in their stored bytes),
 * read once to be checked and again to be scored, so the heap holds only the queries, one shard's offsets, mask
 * and scales at a time, and the results: a corpus far larger than the heap is scored exactly, its top k merged
 * across shards.
 */
final class ShardedScore {
  /** Options that name one file for the whole corpus, which a folder of shards cannot share. */
  private static final List<String> WHOLE_CORPUS_FILES = List.of("--doc-mask", "--doc-offsets", "--doc-scales");

  /**
   * One shard as checked: its file, the index of its first document, its documents' count, token dimension and
   * type, and whether its quantized tokens came with scales. Its tokens are read again when it is scored.
   */
  record Shard(Path file, long first, int size, int dim, DType dtype, boolean scaled) {}

  private ShardedScore() {}

  /** Whether {@code --docs} names a folder of shards rather than one file. */
  static boolean applies(Args a) {
    return a.get("--docs") != null && Files.isDirectory(PathArgument.of("--docs", a.get("--docs")));
  }

  /** Refuses options a folder of shards cannot take: mistakes in the command line, found before any work. */
  static void checkOptions(Args a) {
    for (String option : WHOLE_CORPUS_FILES) {
      if (a.get(option) != null) {
        throw new UsageException("score: " + option + " names one file for the whole corpus, but --docs "
            + a.get("--docs") + " is a folder of shards; write each shard's " + option.substring(6)
            + " into the shard (as encode and quantize do)");
      }
    }
    if (a.has("--pairwise")) {
      throw new UsageException("score: --pairwise needs one --docs file, not a folder of shards");
    }
  }

  /** Scores the shards with {@code maxSim}, its options checked ({@link #checkOptions}). */
  static int run(Args a, PrintStream out, PrintStream err, MaxSim maxSim) throws IOException {
    boolean topK = a.get("--top-k") != null;
    int k = a.intValue("--top-k", 10, 1);
    long start = System.nanoTime();
    Inputs.Loaded queries = Inputs.load(a, Inputs.QUERIES);
    if (queries.note() != null) {
      new Warnings(err).warn("score " + queries.note());
    }
    List<Shard> shards = load(a, PathArgument.of("--docs", a.get("--docs")), queries, err);
    long documents = shards.getLast().first() + shards.getLast().size();
    TokenBatch q = a.has("--normalize") ? queries.batch().l2Normalized() : queries.batch();
    if (!topK) {
      ScoreCommand.requireMatrixFits(q.size(), documents);
    }
    List<Path> inputs = new ArrayList<>(queries.files());
    shards.forEach(s -> inputs.add(s.file()));
    String option = topK ? "--out-run" : "--out";
    Path target = AtomicOutput.target(option, a.get(option));
    long read = System.nanoTime();
    String what;
    try (AtomicOutput output = AtomicOutput.create(option, target, inputs)) {
      if (topK) {
        TopK top = topK(a, maxSim, q, shards, k, err);
        output.write(file -> ScoreCommand.writeRun(file, top));
        what = "top-" + k + " of " + Counts.of(documents, "document") + " in " + Counts.of(shards.size(), "shard")
            + " for " + Counts.of(q.size(), "query", "queries") + " -> " + target;
      } else {
        scores(a, maxSim, q, shards, output, documents, err);
        what = "[" + q.size() + ", " + documents + "] scores of " + Counts.of(shards.size(), "shard") + " -> " + target;
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
   * The .safetensors files of {@code folder}, sorted by name, hidden ones (a name starting with '.') aside. Its
   * .npy files, hidden .safetensors files and subfolders that hold .safetensors files are named on {@code err}:
   * documents, maybe, which a folder's shards never are.
   */
  static List<Path> files(Path folder, PrintStream err) throws IOException {
    List<Path> files = new ArrayList<>();
    List<String> arrays = new ArrayList<>();
    List<String> folders = new ArrayList<>();
    List<String> hidden = new ArrayList<>();
    try (DirectoryStream<Path> all = Files.newDirectoryStream(folder)) {
      for (Path p : all) {
        String name = p.getFileName().toString().toLowerCase(Locale.ROOT);
        if (name.startsWith(".") && name.endsWith(".safetensors")) {
          // a copy's metadata (macOS's "._shard.safetensors") or a file put aside: scored, it would come first and
          // renumber every document
          hidden.add(p.getFileName().toString());
          continue;
        }
        if (name.endsWith(".npy")) {
          arrays.add(p.getFileName().toString());
        }
        if (!name.endsWith(".safetensors") && Files.isDirectory(p) && holdsShards(p)) {
          folders.add(p.getFileName().toString());
        }
        if (!name.endsWith(".safetensors")) {
          continue;
        }
        if (!Files.isRegularFile(p)) { // skipping it would renumber every later shard's documents
          String what = Files.isDirectory(p) ? "a directory" : Inputs.isLinkLoop(p) ? "a loop of symbolic links"
              : Files.isSymbolicLink(p) && !Files.exists(p) ? "a link to a missing file" : "not a regular file";
          throw new IllegalArgumentException("--docs " + folder + ": " + p.getFileName() + " is " + what
              + "; expected every .safetensors entry of the folder to be a shard file");
        }
        files.add(p);
      }
    }
    if (files.isEmpty()) {
      throw new IllegalArgumentException("--docs " + folder + " holds no .safetensors files" + (hidden.isEmpty() ? ""
          : " but " + count(hidden, "hidden one", "") + ", left out") + "; expected a folder of shards as encode or"
          + " quantize write them");
    }
    // by the names as the file system holds them (UTF-8 bytes: code point order), the same under every locale: as
    // strings, names the locale cannot decode read alike in part ("caf??-b", "caf??-a") and would be ordered otherwise
    files.sort(Comparator.comparing(Path::getFileName));
    if (!arrays.isEmpty()) {
      new Warnings(err).warn("score --docs " + folder + ": left out " + count(arrays, ".npy file", "")
          + "; a folder's shards are .safetensors files");
    }
    if (!hidden.isEmpty()) {
      new Warnings(err).warn("score --docs " + folder + ": left out " + count(hidden, "hidden .safetensors file", "")
          + "; a folder's shards are its files whose names do not start with '.'");
    }
    if (!folders.isEmpty()) {
      // shards a sharded job wrote into subfolders: left out without a word, part of a corpus passes for all of it
      new Warnings(err).warn("score --docs " + folder + ": left out " + count(folders, "folder",
          " holding .safetensors files") + "; a folder's shards are its own files, not its subfolders'");
    }
    return files;
  }

  /** "2 things that ... (a, b)": the count and the first three names, sorted. */
  private static String count(List<String> names, String thing, String that) {
    names.sort(null);
    return Counts.of(names.size(), thing) + that + " (" + String.join(", ",
        names.subList(0, Math.min(3, names.size()))) + (names.size() > 3 ? ", ..." : "") + ")";
  }

  /** Whether a subfolder holds .safetensors files of its own; one that cannot be listed is taken to hold none. */
  private static boolean holdsShards(Path dir) {
    try (DirectoryStream<Path> all = Files.newDirectoryStream(dir,
        p -> p.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".safetensors"))) {
      return all.iterator().hasNext();
    } catch (IOException | RuntimeException unreadable) {
      return false;
    }
  }

  /**
   * Every shard, mapped (never copied onto the heap) and checked against the first before any is scored: all
   * hold tokens of one dimension and one stored type, all with scales or none, so that their scores rank together;
   * none is a file read already (a queries file, or an earlier shard through a link), whose rows would be ranked
   * as extra documents.
   */
  static List<Shard> load(Args a, Path folder, Inputs.Loaded queries, PrintStream err) throws IOException {
    List<Path> queryFiles = queries.files();
    List<Shard> shards = new ArrayList<>();
    Map<Object, Path> read = new HashMap<>(); // by file key: one look-up a shard, not a comparison with each
    for (Path q : queryFiles) {
      read.put(fileKey(q), q);
    }
    long first = 0;
    GivenFiles.given("--docs", folder); // a folder that cannot be listed is named by its option too
    for (Path file : files(folder, err)) {
      GivenFiles.given("--docs", file);
      Path earlier = read.putIfAbsent(fileKey(file), file);
      if (earlier != null) {
        throw new IllegalArgumentException("docs shard " + file + (queryFiles.contains(earlier)
            ? " is also the queries input " + earlier + "; expected the --docs folder to hold only document shards"
            : " is the same file as shard " + earlier + "; expected each shard once (its documents would be ranked"
                + " twice)"));
      }
      long at = first;
      // its mapping and its batch are dropped once checked: one shard's mask and scales are held at a time
      Shard shard = RunMemory.freedAfter(() -> checked(a, file, at, queries, shards, err));
      shards.add(shard);
      first += shard.size();
    }
    if (first > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("--docs " + folder + " holds " + first + " documents; at most 2^31-1 are"
          + " supported (document indices are ints)");
    }
    return shards;
  }

  /** The shard in {@code file}, its documents numbered from {@code first}, checked against the shards before it. */
  private static Shard checked(Args a, Path file, long first, Inputs.Loaded queries, List<Shard> shards,
      PrintStream err) throws IOException {
    Inputs.Loaded loaded = Inputs.load(a, Inputs.DOCS, file);
    if (loaded.note() != null && shards.isEmpty()) { // the shards are alike: the first one's note stands for all
      new Warnings(err).warn("score " + loaded.note());
    }
    if (loaded.embeddings().rank() == 4) {
      throw new IllegalArgumentException("docs shard " + file + " has shape " + loaded.embeddings().shapeString()
          + "; expected documents [N, L, d] or packed [T, d] (candidates [B, K, L, d] need one --docs file)");
    }
    TokenBatch b = loaded.batch();
    Shard shard = new Shard(file, first, b.size(), b.dim(), b.dtype(), loaded.scaled());
    if (shards.isEmpty()) { // every shard has its dimension
      ScoreCommand.requireSameDim(queries, "--docs shard " + file, loaded, "");
    } else {
      Shard head = shards.getFirst();
      if (b.dim() != head.dim() || b.dtype() != head.dtype()) {
        throw new IllegalArgumentException("docs shard " + file + " holds " + describe(shard) + "; expected "
            + describe(head) + " like " + head.file().getFileName() + " (every shard of one corpus)");
      }
      if (loaded.scaled() != head.scaled()) {
        // a quantized shard without scales reads as scale 1: its scores would not rank with scaled ones
        throw new IllegalArgumentException("docs shard " + file + " holds " + describe(shard) + (loaded.scaled()
            ? " with" : " without") + " scales; expected them " + (head.scaled() ? "with" : "without")
            + " scales like " + head.file().getFileName() + " (every shard of one corpus)");
      }
    }
    return shard;
  }

  /**
   * What identifies a file whatever the path to it (its device and inode where the file system has them, else its
   * real path), so that a link to a file read already is caught.
   */
  private static Object fileKey(Path file) throws IOException {
    Object key = Files.readAttributes(file, BasicFileAttributes.class).fileKey();
    return key != null ? key : file.toRealPath();
  }

  private static String describe(Shard s) {
    return typeName(s.dtype()) + " tokens of d = " + s.dim();
  }

  /** A token type in the words the file readers use (numpy's names; e4m3 is the OCP "fn" variant). */
  private static String typeName(DType dtype) {
    return dtype == DType.FLOAT8_E4M3 ? "float8_e4m3fn" : dtype.name().toLowerCase(Locale.ROOT);
  }

  /** The exact top k over all shards: each shard's top k, merged as it comes (indices in the whole corpus). */
  private static TopK topK(Args a, MaxSim maxSim, TokenBatch q, List<Shard> shards, int k, PrintStream err)
      throws IOException {
    TopK merged = null;
    for (int s = 0; s < shards.size(); s++) {
      Shard shard = shards.get(s);
      long t0 = System.nanoTime();
      TopK part = RunMemory.freedAfter(() -> maxSim.topK(q, docs(a, shard), k)); // unmapped once scored
      merged = merged == null
          ? TopK.merge(k, List.of(part), new int[] {(int) shard.first()})
          : TopK.merge(k, List.of(merged, part), new int[] {0, (int) shard.first()});
      progress(err, s, shards, t0);
    }
    return merged;
  }

  /**
   * All scores {@code [Nq, N]} into {@code output}'s .npy, each shard's columns written once scored: the heap holds
   * one shard's scores at a time, never the whole matrix.
   */
  private static void scores(Args a, MaxSim maxSim, TokenBatch q, List<Shard> shards, AtomicOutput output,
      long documents, PrintStream err) throws IOException {
    output.write(file -> Npy.createFloats(file, q.size(), documents));
    for (int s = 0; s < shards.size(); s++) {
      Shard shard = shards.get(s);
      long t0 = System.nanoTime();
      float[][] part = RunMemory.freedAfter(() -> ScoreCommand.allPairs(maxSim, q, docs(a, shard), "split "
          + shard.file() + " into smaller shards"));
      output.write(file -> Npy.writeFloatColumns(file, part, shard.first()));
      progress(err, s, shards, t0);
    }
  }

  /**
   * A shard's documents, read again as checked (a shard that changed since is refused by name); normalising
   * builds float copies, one shard at a time.
   */
  private static TokenBatch docs(Args a, Shard shard) throws IOException {
    Inputs.Loaded loaded = Inputs.load(a, Inputs.DOCS, shard.file());
    TokenBatch b = loaded.batch();
    if (b.size() != shard.size() || b.dim() != shard.dim() || b.dtype() != shard.dtype()
        || loaded.scaled() != shard.scaled()) {
      throw new IllegalArgumentException("docs shard " + shard.file() + " changed while the folder was read: it"
          + " holds " + Counts.of(b.size(), "document") + " of " + typeName(b.dtype()) + " tokens of d = " + b.dim()
          + (loaded.scaled() ? " with" : " without") + " scales; expected " + shard.size() + " of " + describe(shard)
          + (shard.scaled() ? " with" : " without") + " scales as checked");
    }
    return a.has("--normalize") ? b.l2Normalized() : b;
  }

  private static void progress(PrintStream err, int s, List<Shard> shards, long t0) {
    Shard shard = shards.get(s);
    err.printf(Locale.ROOT, "score: shard %d of %d, %s: %s in %.1f ms%n", s + 1, shards.size(),
        Names.escape(shard.file().getFileName().toString()), Counts.of(shard.size(), "document"),
        (System.nanoTime() - t0) / 1e6);
  }
}
