package dev.maxsim4j.bench.retrieval;

import dev.maxsim4j.bench.retrieval.KnownItems.Item;
import dev.maxsim4j.bench.retrieval.KnownItems.Pin;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.UsageException;
import dev.maxsim4j.cli.io.Absent;
import dev.maxsim4j.cli.io.AtomicOutput;
import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.cli.io.PathArgument;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * {@code retrieval}: known-item retrieval on Debian's package descriptions (one-line description as the query,
 * long description as the document to find) with exact MaxSim, MUVERA candidates + exact rerank and a
 * mean-pooled single vector + exact rerank, and the time per query of each; {@code --synthetic} times FDE +
 * rerank against exact search on clustered synthetic corpora of growing size.
 */
public final class RetrievalCommand {
  public static final String USAGE = """
      retrieval [--translations FILE] [--cache DIR] [--docs N] [--queries N] [--fde LIST] [--candidates LIST]
                [--lucene LIST|first|none] [--lucene-exact N] [--exact-timed N] [--index-dir DIR] [--threads N]
                [--json FILE]
      retrieval --prepare FILE [--translations FILE] [--packages FILE]
      retrieval --encode N [--translations FILE] [--cache DIR]
      retrieval --synthetic SIZES [--queries N] [--candidates N] [--fde SET] [--exact-only] [--index-dir DIR]
                [--threads N] [--json FILE]
        Debian known-item retrieval with all-MiniLM-L6-v2 tokens: the first --docs (default 10000) packages of
        the pinned list as documents, --queries (default 500) of them spread evenly as queries. Reports
        Recall@1/@10, MRR@10 and overlap with exact MaxSim's top 10 for exact MaxSim (in memory; --exact-timed
        queries timed, default 50), a brute-force scan of each --fde set (bits:repetitions:projection[:final],
        default 4:8:8) and of mean-pooled vectors, alone and + exact rerank of --candidates (default
        100,500,2000); then, per --lucene set (default the first --fde set), an on-disk index under
        --index-dir (default: index in the --cache folder): FDE HNSW alone, FDE and mean-pooled HNSW + exact
        rerank, and --lucene-exact queries (default 5) of brute force through the index, each timed per query.
        Token embeddings are cached as bf16 under --cache (default ~/.cache/maxsim4j/eval, in $XDG_CACHE_HOME
        where set); --encode N encodes the first N packages into it (resumable). --prepare writes the filtered
        list the lists give. FILE defaults: apt's bookworm main Translation-en and binary-amd64 Packages under
        /var/lib/apt/lists (apt-get -o Acquire::Languages=en update). --synthetic: comma-separated sizes of a clustered
        synthetic corpus, exact MaxSim against FDE (default 3:8:8) HNSW + rerank of --candidates (200);
        --exact-only times exact MaxSim alone (every size in one run, no index to build). Each form takes only
        the options shown with it: another is refused rather than ignored.""";


  static final String PINNED = "debian-known-items.txt.gz";
  static final Path APT_LISTS = Path.of("/var/lib/apt/lists");

  /**
   * The folder --cache names by default: maxsim4j/eval in the user's cache folder (XDG_CACHE_HOME where it is an
   * absolute path, as the XDG rules have it, else ~/.cache), beside the encoder's own cache.
   */
  static Path defaultCache() {
    String xdg = System.getenv("XDG_CACHE_HOME");
    Path root = xdg != null && !xdg.isEmpty() && Path.of(xdg).isAbsolute() ? Path.of(xdg)
        : Path.of(System.getProperty("user.home", "")).resolve(".cache");
    if (!root.isAbsolute()) {
      throw new UsageException("retrieval: no home folder to keep the cache in; expected --cache DIR");
    }
    return root.resolve("maxsim4j").resolve("eval");
  }

  private RetrievalCommand() {}

  /** The options each mode reads: any other given is refused, as it would be ignored. */
  private static final Map<String, Set<String>> MODES = Map.of(
      "--synthetic", Set.of("--synthetic", "--queries", "--candidates", "--fde", "--exact-only", "--index-dir",
          "--threads", "--json"),
      "--prepare", Set.of("--prepare", "--translations", "--packages"),
      "--encode", Set.of("--encode", "--translations", "--cache"),
      "", Set.of("--translations", "--cache", "--docs", "--queries", "--fde", "--candidates", "--lucene",
          "--lucene-exact", "--exact-timed", "--index-dir", "--threads", "--json"));
  private static final Set<String> VALUES = Set.of("--translations", "--packages", "--cache", "--docs", "--queries",
      "--fde", "--candidates", "--index-dir", "--threads", "--json", "--prepare", "--encode", "--synthetic", "--lucene",
      "--lucene-exact", "--exact-timed");

  public static int run(String[] argv, PrintStream out) throws IOException {
    Args a = new Args("maxsim4j bench", "retrieval", argv, 1, VALUES, Set.of("--exact-only"));
    checkMode(a);
    for (String option : List.of("--cache", "--index-dir")) {
      // checked here but made only by the work, so that a run refused for another option leaves no folder
      if (a.get(option) != null) {
        checkFolder(option, PathArgument.of(option, a.get(option)));
      }
    }
    for (String option : List.of("--docs", "--queries", "--encode")) {
      // a bad count is named before the lists are looked for: --docs 0 reported a missing list instead
      a.intValue(option, 1, 1);
    }
    if (a.get("--synthetic") != null) {
      if (a.get("--json") != null) {
        AtomicOutput.check("--json", AtomicOutput.target("--json", a.get("--json")), List.of());
      }
      return SyntheticScaling.run(a, out);
    }
    Path translations = list(a, "--translations", "_main_i18n_Translation-en");
    List<Path> inputs = a.get("--prepare") == null ? List.of(translations)
        : List.of(translations, list(a, "--packages", "_main_binary-amd64_Packages"));
    for (String option : List.of("--json", "--prepare")) {
      // checked against the lists read: --prepare onto its own Translation-en would replace the list it reads
      if (a.get(option) != null) {
        AtomicOutput.check(option, AtomicOutput.target(option, a.get(option)), inputs);
      }
    }
    if (a.get("--prepare") != null) {
      List<Item> items = KnownItems.build(translations, inputs.get(1));
      if (items.isEmpty()) {
        // an empty pin list, written with exit 0, read later as an evaluation set of no package
        throw new IllegalArgumentException("retrieval: --translations " + translations + " and --packages "
            + inputs.get(1) + " give no usable package; expected Debian bookworm's main lists (nothing written)");
      }
      String text = KnownItems.pinText(items);
      AtomicOutput.writeString("--prepare", AtomicOutput.target("--prepare", a.get("--prepare")), inputs, text);
      out.printf(Locale.ROOT, "%s (set %s) written to %s%n", Counts.of(items.size(), "package"), hash(text),
          a.get("--prepare"));
      return 0;
    }
    String pinText = pinned();
    List<Pin> pins;
    try (InputStream in = new java.io.ByteArrayInputStream(pinText.getBytes(StandardCharsets.UTF_8))) {
      pins = KnownItems.readPins(in);
    }
    if (pins.isEmpty()) {
      throw new IllegalStateException(PINNED + " in the bench jar is empty; expected the pinned packages");
    }
    List<Item> items = KnownItems.select(translations, pins);
    TokenCache cache = new TokenCache(
        a.get("--cache") != null ? PathArgument.of("--cache", a.get("--cache")) : defaultCache(),
        hash(pinText));
    if (a.get("--encode") != null) {
      int n = Math.min(items.size(), a.intValue("--encode", items.size(), 1));
      cache.encode(items, n, out);
      // the cache holds whole chunks: the last one asked for is encoded to its end
      int covered = Math.min(items.size(), cache.chunks(n) * cache.chunkSize());
      out.printf(Locale.ROOT, "%s encoded in %s%n", Counts.of(covered, "package"), cache.dir());
      return 0;
    }
    return KnownItemEvaluation.run(a, items, cache, out);
  }

  /**
   * Refuses two modes at once, and an option the chosen mode does not read: ignored, --docs with --synthetic or
   * --exact-only without it would run something other than what was asked for.
   */
  private static void checkMode(Args a) {
    List<String> modes = Stream.of("--synthetic", "--prepare", "--encode").filter(m -> a.get(m) != null).toList();
    if (modes.size() > 1) {
      throw new UsageException("retrieval: " + String.join(" and ", modes) + " are given together; expected one of"
          + " them at most");
    }
    String mode = modes.isEmpty() ? "" : modes.get(0);
    for (String option : Stream.concat(VALUES.stream(), Stream.of("--exact-only")).sorted().toList()) {
      boolean given = option.equals("--exact-only") ? a.has(option) : a.get(option) != null;
      if (given && !MODES.get(mode).contains(option)) {
        throw new UsageException("retrieval: " + option + " is not read " + (mode.isEmpty()
            ? "by the known-item evaluation (no --synthetic, --prepare or --encode)" : "with " + mode)
            + "; expected only " + MODES.get(mode).stream().filter(o -> !o.equals(mode)).sorted()
            .collect(Collectors.joining(", ")));
      }
    }
  }

  /**
   * Refuses a folder {@code option} names that this run could not make or write, without making it, so that a run
   * refused later leaves no folder behind (the work makes it where missing).
   */
  static void checkFolder(String option, Path folder) {
    String expected = "; expected a folder this run can write (made where missing)";
    if (Files.exists(folder) && !Files.isDirectory(folder)) {
      throw new UsageException("retrieval: " + option + " " + folder + " is not a folder" + expected);
    }
    Path existing = folder.toAbsolutePath();
    while (!Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
      String why = Absent.why(existing);
      if (!why.equals("no such file") && !why.equals("not a directory")) {
        // such as "file name too long": no folder up the path would help
        throw new UsageException("retrieval: " + option + " " + folder + " cannot be made (" + why + ")" + expected);
      }
      existing = existing.getParent();
    }
    if (!Files.isDirectory(existing)) {
      throw new UsageException("retrieval: " + option + " " + folder + " cannot be made: " + existing
          + (Files.exists(existing) ? " is not a folder" : " is a link to no folder") + expected);
    }
    if (!Files.isWritable(existing)) {
      throw new UsageException("retrieval: " + option + " " + folder + (existing.equals(folder.toAbsolutePath())
          ? " cannot be written" : " cannot be made: " + existing + " cannot be written") + expected);
    }
  }

  /** The pinned list shipped with the bench. */
  static String pinned() throws IOException {
    try (InputStream in = RetrievalCommand.class.getResourceAsStream(PINNED)) {
      if (in == null) {
        throw new IllegalStateException(PINNED + " is missing from the bench jar");
      }
      // gzipped: the list travels with every copy of the tree, which the GPU host limits in size
      return new String(new java.util.zip.GZIPInputStream(in).readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /** The first 12 hex digits of the SHA-256 of {@code text}: the cache key of an evaluation set. */
  static String hash(String text) {
    try {
      byte[] h = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(h).substring(0, 12);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** {@code option}'s file, else the largest bookworm list under apt's lists whose name contains {@code part}. */
  private static Path list(Args a, String option, String part) throws IOException {
    if (a.get(option) != null) {
      return PathArgument.of(option, a.get(option));
    }
    if (Files.isDirectory(APT_LISTS)) {
      try (Stream<Path> files = Files.list(APT_LISTS)) {
        Path found = files.filter(p -> p.getFileName().toString().contains("dists_bookworm" + part))
            .max((x, y) -> Long.compare(x.toFile().length(), y.toFile().length())).orElse(null);
        if (found != null) {
          return found;
        }
      }
    }
    throw new UsageException("no " + option + " and no *dists_bookworm" + part + "* under " + APT_LISTS
        + "; expected the list apt-get -o Acquire::Languages=en update writes");
  }
}
