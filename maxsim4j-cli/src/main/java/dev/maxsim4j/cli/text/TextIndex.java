package dev.maxsim4j.cli.text;

import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.Progress;
import dev.maxsim4j.cli.Sizes;
import dev.maxsim4j.cli.io.AtomicOutput;
import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.cli.io.SafeTensors;
import dev.maxsim4j.cli.io.TemporaryFiles;
import dev.maxsim4j.langchain4j.MiniLmTokenEncoder;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import java.util.zip.CRC32C;

/**
 * The token embeddings of a folder of text files, kept on disk in {@code FOLDER/.maxsim4j/} and reused: a
 * file whose size and modification time are unchanged is not read or encoded again. Each file is cut into
 * {@link Passages}; each passage is one row of {@link #documents()}.
 *
 * <p>Layout: {@code manifest.tsv} (see {@link Manifest}) and the tokens file it names,
 * {@code tokens-HEX.safetensors} (the passages' tokens in manifest order, as {@link StoredTokens} describes:
 * bf16, or int8 / 1-bit codes with per-token scales, the {@link Store} the manifest names). Both are
 * written under temporary names and moved into place, the manifest last, so that a run cut short leaves
 * the previous index whole. A damaged index is rebuilt, with a warning.
 */
public final class TextIndex {
  public static final String FOLDER = ".maxsim4j";
  private static final String MANIFEST = "manifest.tsv";
  private static final String TOKENS_FILES = "tokens*.safetensors";
  /** A temporary file this old is a killed run's, not one being written, where the update lock cannot be held. */
  private static final long STALE_TEMPORARY_MILLIS = 24L * 60 * 60 * 1000;
  /** The most tokens one index holds: it keeps its tokens in one Java array (the writer streams them). */
  static final long MAX_TOKENS = PackedRows.MAX_TOKENS;
  private static final int DIM = MiniLmTokenEncoder.DIM;
  /**
   * How close to its modification time a file read may be for a later write to keep that time: file system clocks
   * tick in 2 s on FAT, 1 s on HFS+ and some network file systems, a few ms on Linux.
   */
  static final long SAME_TICK_MILLIS = 3000;

  /** One passage of a file: the line it starts on and its number of tokens. */
  public record Span(int line, int tokens) {}

  /**
   * One indexed file and its passages, in order; {@code identity} is {@link TextFiles#identity}'s. {@code text} is -1
   * where the file's size, modification time and identity identify it; for a file read within {@link
   * #SAME_TICK_MILLIS} of its modification time, the CRC-32C of its text, to which {@link #SETTLED} is added once a
   * later run has read the same text past that tick (a write after that changes its time, so it is not read again).
   */
  public record Entry(String path, long bytes, long modified, String identity, long text, List<Span> passages) {
    /** Added to a checksum confirmed past the file's tick: kept, since the Lucene index's versions name it. */
    static final long SETTLED = 1L << 32;

    long tokens() {
      return passages.stream().mapToLong(Span::tokens).sum();
    }

    /** The CRC-32C of the file's text where one was kept, else -1. */
    long checksum() {
      return text < 0 ? -1 : text & 0xFFFFFFFFL;
    }

    /** Whether a run reads the file to tell it unchanged: it was read in its modification's tick, not since. */
    boolean readAgain() {
      return text >= 0 && (text & SETTLED) == 0;
    }

    /** This entry with its checksum settled (a -1 stays -1: nothing to settle). */
    Entry settled() {
      return new Entry(path, bytes, modified, identity, checksum() | SETTLED, passages);
    }
  }

  private final List<Entry> entries;
  private final PackedRows rows;
  private final int[] rowEntry;
  private final int[] rowPassage;
  private final int encoded;
  private final int skipped;
  private final long bytes;
  /** Each entry's file as listed by this run, by the entry's path (its {@link TextFiles#keys key}). */
  private final Map<String, Path> files;
  /** Each file's first row, passage count and entry by path, made when first asked for. */
  private Map<String, int[]> firstRows;

  private TextIndex(List<Entry> entries, PackedRows rows, int encoded, int skipped, long bytes,
      Map<String, Path> files) {
    this.entries = entries;
    this.files = files;
    this.rows = rows;
    this.encoded = encoded;
    this.skipped = skipped;
    this.bytes = bytes;
    this.rowEntry = new int[rows.size()];
    this.rowPassage = new int[rows.size()];
    for (int e = 0, row = 0; e < entries.size(); e++) {
      for (int p = 0; p < entries.get(e).passages().size(); p++, row++) {
        rowEntry[row] = e;
        rowPassage[row] = p;
      }
    }
  }

  public List<Entry> entries() {
    return entries;
  }

  /**
   * The text of the entry {@code path}'s file, read again, where it is still the text indexed (its size, time and
   * identity, and its checksum where one was kept); empty where the file went or changed since, so that a passage
   * is never shown from another text than the one its score is of.
   */
  public Optional<String> indexedText(String path) {
    int[] at = located(path);
    Path file = files.get(path);
    if (at == null || file == null) {
      return Optional.empty();
    }
    Entry e = entries.get(at[2]);
    // the attributes before and after the read: a write between the two changes its time, its size or both
    Optional<String> text = indexes(e, file) ? TextFiles.tryRead(file) : Optional.empty();
    return indexes(e, file) ? text.filter(t -> e.checksum() < 0 || checksum(t) == e.checksum()) : Optional.empty();
  }

  private static boolean indexes(Entry e, Path file) {
    try {
      BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
      return a.size() == e.bytes() && a.lastModifiedTime().toMillis() == e.modified()
          && TextFiles.identity(file).equals(e.identity());
    } catch (IOException | RuntimeException ex) {
      return false;
    }
  }

  /** One packed row per passage, the files' passages in order, in the index's store type. */
  public TokenBatch documents() {
    return rows.slice(0, rows.size());
  }

  PackedRows rows() {
    return rows;
  }

  /** The index in {@link #entries()} of the file a row of {@link #documents()} belongs to. */
  public int entryOf(int row) {
    return rowEntry[row];
  }

  /** The row of passage {@code passage} of the file at {@code path}; -1 when the index holds no such passage. */
  public int rowOf(String path, int passage) {
    int[] rows = located(path);
    return rows == null || passage < 0 || passage >= rows[1] ? -1 : rows[0] + passage;
  }

  /** The first row, passage count and entry of the file at {@code path}; null where the index has no such file. */
  private int[] located(String path) {
    if (firstRows == null) {
      Map<String, int[]> first = new HashMap<>();
      for (int e = 0, row = 0; e < entries.size(); row += entries.get(e).passages().size(), e++) {
        first.put(entries.get(e).path(), new int[] {row, entries.get(e).passages().size(), e});
      }
      firstRows = first;
    }
    return firstRows.get(path);
  }

  /** Which passage of its file a row is (0 = first). */
  public int passageOf(int row) {
    return rowPassage[row];
  }

  /** How many files the last {@link #update} had to read and encode (the rest came from disk). */
  public int encoded() {
    return encoded;
  }

  /** How many .txt/.md files, or folders that could not be listed, were skipped (each named in a warning). */
  public int skipped() {
    return skipped;
  }

  /** How the tokens are stored. */
  public Store store() {
    return rows.tokens().store();
  }

  /** Bytes of the index on disk (its tokens file and manifest); 0 when it could not be saved. */
  public long bytes() {
    return bytes;
  }

  /** {@link #bytes()} for people. */
  public String size() {
    return bytes == 0 ? "not saved" : Sizes.of(bytes);
  }

  /**
   * Brings the index of {@code folder} up to date (encoding new and changed files) and loads it. With
   * {@code mustSave}, an index that cannot be written is an error; without, a warning (the search goes on).
   * {@code store} null keeps the index's store (bf16 for a new one); another store than the index's rebuilds it.
   * {@code lock} is taken before the index is read; the caller releases it once done with the index folder.
   * {@code encoder} is asked for only when there are passages to encode.
   */
  public static TextIndex update(Path folder, Supplier<TextModel> encoder, boolean mustSave,
      Warnings warnings, PrintStream err, Store store, UpdateLock lock) throws IOException {
    TextFiles.Listing listing = TextFiles.under(folder);
    listing.warnSkipped(warnings);
    List<Path> files = listing.files();
    if (files.isEmpty()) {
      warnings.finish();
      throw new IllegalArgumentException("--dir " + TextFiles.shown(folder) + " holds no "
          + (listing.skipped() > 0 ? "readable " : "") + ".txt or .md file (its subfolders searched too"
          + (listing.skipped() > 0 ? "; " + listing.skipped() + " skipped, named in the warnings above" : "")
          + "); expected a folder of text files");
    }
    Path dir = folder.resolve(FOLDER);
    // an update deletes the tokens and Lucene files it finds there: through a link, another folder's files, so a
    // linked index folder is neither read nor written (a search goes on from the files, an index run is refused)
    boolean linked = Files.isSymbolicLink(dir);
    if (linked) {
      String why = "it is a symbolic link, through which an update would delete another folder's files; expected the"
          + " index's own folder (remove the link: the index is rebuilt from the files)";
      if (mustSave) {
        throw new IllegalArgumentException("cannot write the index in " + TextFiles.shown(dir) + ": " + why);
      }
      warnings.warn("cannot save the index in " + TextFiles.shown(dir) + " (" + why + "); going on without saving it");
    }
    if (!linked && Files.exists(dir) && !Files.isDirectory(dir)) {
      throw new IllegalArgumentException(TextFiles.shown(dir) + (Files.isRegularFile(dir) ? " is a file"
          : " is not a folder (a pipe, socket or device)") + ", where the index folder belongs; remove or rename it");
    }
    // refused before any work where the index must be saved: it would encode the whole folder, then fail to save it
    if (mustSave && Files.isDirectory(dir.resolve(MANIFEST), LinkOption.NOFOLLOW_LINKS)) {
      throw new IllegalArgumentException(TextFiles.shown(dir.resolve(MANIFEST)) + " is a folder, where the index's"
          + " manifest file belongs; remove it (the index is rebuilt from the files)");
    }
    // an index folder not there yet is made (and locked) only to be written, so that a run that fails first leaves
    // none behind
    if (!linked && Files.isDirectory(dir)) {
      lock.hold(dir);
    }
    boolean heldWhenRead = lock.held();
    Store requested = store;
    Stored old = linked ? Stored.NONE : Stored.load(dir, warnings, store);
    if (!linked) {
      sweep(dir, lock.held() ? old.tokensFile : null, stale(lock));
    }
    if (store == null) {
      store = old.store == null ? Store.BF16 : old.store;
    } else if (old.tokens != null && old.store != store) {
      warnings.warn("the index in " + TextFiles.shown(dir) + " stores " + old.store + " tokens; rebuilding"
          + " it with " + store + " tokens (--store " + store + ")");
      old = Stored.NONE;
    }

    List<Entry> entries = new ArrayList<>();
    Map<String, Path> listed = new HashMap<>();
    List<String> keys = TextFiles.keys(folder, files, (f, why) -> warnings.warn("skipped " + TextFiles.shown(f)
        + ": " + why));
    List<Integer> freshEntries = new ArrayList<>();
    List<String> texts = new ArrayList<>();
    List<Passages.Passage> fresh = new ArrayList<>();
    int skipped = listing.skipped();
    boolean settling = false; // a checksum settled: the manifest changes, the tokens do not
    Progress reading = new Progress(err, "reading " + Counts.of(files.size(), "file"));
    for (int i = 0; i < files.size(); reading.update(++i, files.size())) {
      Path f = files.get(i);
      String rel = keys.get(i);
      String shown = TextFiles.shown(f);
      if (rel == null) {
        skipped++;
        continue;
      }
      listed.put(rel, f);
      BasicFileAttributes attrs;
      try {
        attrs = Files.readAttributes(f, BasicFileAttributes.class);
      } catch (IOException e) {
        warnings.warn("skipped " + shown + ": " + TextFiles.reason(e));
        skipped++;
        continue;
      }
      Entry previous = old.entries.get(rel);
      long modified = attrs.lastModifiedTime().toMillis();
      // size and time alone keep a file swapped for another of both (renamed over it, a link pointed elsewhere)
      String identity = TextFiles.identity(f);
      boolean same = previous != null && previous.bytes() == attrs.size() && previous.modified() == modified
          && previous.identity().equals(identity);
      if (same && !previous.readAgain()) {
        entries.add(previous);
        continue;
      }
      // the clock before the read: a read that began in the tick and ended past it is still one in the tick
      boolean inItsTick = Math.abs(System.currentTimeMillis() - modified) < SAME_TICK_MILLIS;
      var text = TextFiles.readOrWarn(f, shown, warnings);
      if (text.isEmpty()) {
        skipped++;
        continue;
      }
      // read in the tick of its modification time, a file written again in that tick keeps its size and time: its
      // text's checksum tells the two apart
      long checksum = checksum(text.get());
      if (same && previous.checksum() == checksum) {
        // read past its tick now, the same text: a later write changes its time, so it need not be read again
        entries.add(inItsTick ? previous : previous.settled());
        settling |= !inItsTick;
        continue;
      }
      long sameTick = inItsTick ? checksum : -1;
      List<Passages.Passage> passages = Passages.of(text.get());
      freshEntries.add(entries.size());
      entries.add(new Entry(rel, attrs.size(), modified, identity, sameTick,
          passages.stream().map(p -> new Span(p.line(), 0)).toList()));
      fresh.addAll(passages);
      passages.forEach(p -> texts.add(p.text()));
    }
    reading.done();
    if (entries.isEmpty()) {
      throw new IllegalArgumentException("no readable .txt or .md files under " + folder + " (" + skipped
          + " skipped, named in the warnings above)");
    }
    if (entries.stream().allMatch(e -> e.passages().isEmpty())) {
      throw new IllegalArgumentException("the .txt and .md files under " + folder + " hold no text");
    }
    long reused = entries.stream().mapToLong(Entry::tokens).sum();
    checkSize(folder, reused + fresh.stream().mapToLong(p -> p.words() + 2L).sum());
    // the tokenizer's exact counts, before the index folder is made and the model runs (the count above takes a token
    // a word, and a run of punctuation takes one a character): a folder refused for them leaves no index folder
    TextModel model = texts.isEmpty() ? null : encoder.get();
    int[] counts = model == null ? new int[0] : texts.stream().mapToInt(model::tokenCount).toArray();
    checkSize(folder, reused + Arrays.stream(counts).asLongStream().sum());
    // passages of [CLS] and [SEP] alone are never ranked: every search would rank nothing, as for files of blanks
    if (entries.stream().flatMap(e -> e.passages().stream()).noneMatch(p -> MiniLmTokenEncoder.hasWordPiece(
        p.tokens())) && Arrays.stream(counts).noneMatch(MiniLmTokenEncoder::hasWordPiece)) {
      throw new IllegalArgumentException("the .txt and .md files under " + folder + " hold no word the encoder"
          + " reads (only format, control or lone combining characters, or only what the model's vocabulary"
          + " lacks: emoji, scripts such as Thai)");
    }
    boolean changed = !texts.isEmpty() || !freshEntries.isEmpty() || !old.matches(entries);
    Path tmp = changed && !linked ? openTemporary(dir, mustSave, warnings, lock) : null;
    if (tmp != null && !heldWhenRead && Files.exists(dir.resolve(MANIFEST), LinkOption.NOFOLLOW_LINKS)) {
      // another run wrote the first index while this one read the files without the lock (no index folder yet): read
      // again, holding it now, so that its store and tokens are kept rather than rebuilt
      deleteQuietly(tmp);
      return update(folder, encoder, mustSave, warnings, err, requested, lock);
    }

    try {
      PackedRows encoded = null;
      if (!texts.isEmpty()) {
        Progress progress = new Progress(err, "encoding " + Counts.of(texts.size(), "passage") + " of "
            + Counts.of(freshEntries.size(), "new or changed file"));
        encoded = PackedRows.encode(model, texts, counts, progress, store);
        progress.done();
      }
      // fill in the fresh entries' token counts, then assemble the rows in file order
      for (int i = 0, row = 0; i < freshEntries.size(); i++) {
        Entry e = entries.get(freshEntries.get(i));
        List<Span> spans = new ArrayList<>();
        for (Span s : e.passages()) {
          spans.add(new Span(s.line(), encoded.length(row++)));
        }
        entries.set(freshEntries.get(i), new Entry(e.path(), e.bytes(), e.modified(), e.identity(), e.text(),
            List.copyOf(spans)));
        // such a file is indexed and never listed: said once, when it is encoded, not silently
        if (!spans.isEmpty() && spans.stream().noneMatch(s -> MiniLmTokenEncoder.hasWordPiece(s.tokens()))) {
          warnings.warn(e.path() + " under " + TextFiles.shown(folder) + " holds no word the encoder reads (only"
              + " format, control or lone combining characters, or only what the model's vocabulary lacks: emoji,"
              + " scripts such as Thai): search never lists it");
        }
      }
      long total = entries.stream().mapToLong(Entry::tokens).sum();
      checkSize(folder, total); // as counted above: the encoder's rows are the counts it gave
      int rows = entries.stream().mapToInt(e -> e.passages().size()).sum();
      int[] offsets = new int[rows + 1];
      // unchanged, with its rows in this order: the mapped tokens file is searched as it is, not copied onto the heap
      boolean inPlace = !changed;
      for (int e = 0, at = 0; inPlace && e < entries.size(); at += (int) entries.get(e++).tokens()) {
        Integer start = old.start.get(entries.get(e).path());
        inPlace = start != null && start == at;
      }
      // every file new (a first build, a rebuild): the encoded rows are the index's, in its order, and are not copied
      boolean allFresh = encoded != null && freshEntries.size() == entries.size();
      StoredTokens tokens = inPlace ? old.tokens : allFresh ? encoded.tokens()
          : StoredTokens.allocate(store, (int) total, DIM);
      for (int e = 0, row = 0, freshRow = 0, next = 0; e < entries.size(); e++) {
        Entry entry = entries.get(e);
        boolean isFresh = next < freshEntries.size() && freshEntries.get(next) == e;
        int at = entry.passages().isEmpty() ? 0 : isFresh ? encoded.offsets()[freshRow] : old.start.get(entry.path());
        StoredTokens from = !isFresh ? old.tokens : encoded == null ? null : encoded.tokens(); // null: no passages
        for (Span s : entry.passages()) {
          offsets[row + 1] = offsets[row] + s.tokens();
          if (!inPlace && !allFresh) {
            from.copyTo(at, tokens, offsets[row], s.tokens());
          }
          at += s.tokens();
          row++;
        }
        if (isFresh) {
          freshRow += entry.passages().size();
          next++;
        }
      }
      List<Entry> list = List.copyOf(entries);
      long bytes = changed ? 0 : old.bytes;
      if (tmp != null) {
        try {
          bytes = write(dir, tmp, list, total, tokens, lock.held(), stale(lock));
        } catch (IOException e) {
          cannotSave(dir, e, mustSave, warnings);
        }
      } else if (!changed && settling && !linked && lock.held()) {
        try {
          bytes = Files.size(dir.resolve(old.tokensFile)) + writeManifest(dir, old.store, old.tokensFile, total,
              old.tokensChecksum, list);
        } catch (IOException e) {
          // only saves later runs a read: unwritten, the index on disk is whole, and the next run reads the file again
        }
      }
      return new TextIndex(list, new PackedRows(tokens, offsets), freshEntries.size(), skipped, bytes, listed);
    } catch (RuntimeException | Error e) {
      deleteQuietly(tmp); // a failed run leaves no temporary file behind
      throw e;
    }
  }

  /** CRC-32C of a file's text as UTF-8. */
  static long checksum(String text) {
    CRC32C crc = new CRC32C();
    crc.update(text.getBytes(StandardCharsets.UTF_8));
    return crc.getValue();
  }

  /** Refuses an index past {@link #MAX_TOKENS}; {@code total} may be a lower bound known before encoding. */
  private static void checkSize(Path folder, long total) {
    if (total > MAX_TOKENS) {
      throw new IllegalArgumentException(TextFiles.shown(folder) + " holds at least " + total
          + " tokens; one index holds at most " + MAX_TOKENS + "; index fewer or smaller files");
    }
  }

  /** A temporary file in the index folder, made before the slow encoding so an unwritable folder shows first. */
  private static Path openTemporary(Path dir, boolean mustSave, Warnings warnings, UpdateLock lock)
      throws IOException {
    try {
      Files.createDirectories(dir);
      lock.hold(dir);
      return temporary(dir, "tokens-");
    } catch (IOException e) {
      cannotSave(dir, e, mustSave, warnings);
      return null;
    }
  }

  /**
   * A new empty file {@code PREFIX-HEX.tmp} in {@code dir}, tracked, made with the permissions the umask gives
   * (a temporary file's own are its owner's alone, which the index files would keep once moved into place).
   */
  private static Path temporary(Path dir, String prefix) throws IOException {
    String name = prefix + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong()) + ".tmp";
    return TemporaryFiles.track(Files.createFile(dir.resolve(name)));
  }

  private static void cannotSave(Path dir, IOException e, boolean mustSave, Warnings warnings) {
    // a move onto a folder fails as "Is a directory" naming its source, a temporary file: the folder is named instead
    String file = e instanceof FileSystemException f && f.getOtherFile() != null
        && Files.isDirectory(Path.of(f.getOtherFile()), LinkOption.NOFOLLOW_LINKS)
        ? TextFiles.shown(Path.of(f.getOtherFile())) + ": " : "";
    if (mustSave) {
      throw new IllegalArgumentException("cannot write the index in " + TextFiles.shown(dir) + ": " + file
          + TextFiles.reason(e));
    }
    warnings.warn("cannot save the index in " + TextFiles.shown(dir) + " (" + file + TextFiles.reason(e)
        + "); going on without saving it");
  }

  /** Writes the tokens file and then the manifest; returns their bytes together. */
  private static long write(Path dir, Path tmp, List<Entry> entries, long total, StoredTokens tokens, boolean locked,
      long stale) throws IOException {
    String name = "tokens-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong()) + ".safetensors";
    long bytes;
    try {
      SafeTensors.write(tmp, tokens.tensors());
      AtomicOutput.moveIntoPlace(tmp, dir.resolve(name));
      TemporaryFiles.done(tmp);
      bytes = Files.size(dir.resolve(name)) + writeManifest(dir, tokens.store(), name, total, tokens.checksum(),
          entries);
    } catch (IOException | RuntimeException e) {
      deleteQuietly(tmp);
      deleteQuietly(dir.resolve(name));
      throw e;
    }
    // the manifest names the new tokens file; every other tokens file in the folder is unused. A run without
    // the lock (its lock file could not be made) leaves them, as another run may be reading one: a later run sweeps
    sweep(dir, locked ? name : null, stale);
    return bytes;
  }

  /** Writes the manifest under a temporary name and moves it into place; returns its bytes. */
  private static long writeManifest(Path dir, Store store, String tokensFile, long total, long checksum,
      List<Entry> entries) throws IOException {
    Path tmp = temporary(dir, "manifest-");
    try {
      Files.writeString(tmp, Manifest.format(store, tokensFile, total, checksum, entries));
      long bytes = Files.size(tmp);
      AtomicOutput.moveIntoPlace(tmp, dir.resolve(MANIFEST));
      TemporaryFiles.done(tmp);
      return bytes;
    } catch (IOException | RuntimeException e) {
      deleteQuietly(tmp);
      throw e;
    }
  }

  /**
   * The time before which a temporary file of ours is a killed run's: with the lock held no other run writes here, so
   * every one made before it was taken.
   */
  private static long stale(UpdateLock lock) {
    return lock.held() ? lock.since() : System.currentTimeMillis() - STALE_TEMPORARY_MILLIS;
  }

  /**
   * Deletes the tokens files other than {@code keep} (none when it is null) and the temporary files of ours last
   * modified before {@code before} (those of runs killed outright, whose shutdown hook did not run). Best effort:
   * a file the sweep cannot read or delete stays until a later one.
   */
  private static void sweep(Path dir, String keep, long before) {
    String ours = "{" + TOKENS_FILES + ",tokens-*.tmp,manifest-*.tmp}";
    try (DirectoryStream<Path> found = Files.newDirectoryStream(dir, ours)) {
      for (Path p : found) {
        String file = p.getFileName().toString();
        if (file.endsWith(".safetensors") ? keep != null && !file.equals(keep)
            : Files.getLastModifiedTime(p).toMillis() < before) {
          deleteQuietly(p);
        }
      }
    } catch (IOException | RuntimeException leftover) {
      // the index is read or saved already; what stays is swept by a later run
    }
  }

  private static void deleteQuietly(Path p) {
    TemporaryFiles.done(p);
    if (p != null) {
      try {
        Files.deleteIfExists(p);
      } catch (IOException ignored) {
        // a leftover temporary file is harmless; the next successful write replaces what matters
      }
    }
  }

  /**
   * The index as found on disk: nothing when it is absent, and nothing (with a warning) when it is unusable,
   * except its store when its manifest's first line names one, or else its tokens files' type, so that a rebuilt
   * index keeps it.
   */
  private record Stored(Map<String, Entry> entries, Map<String, Integer> start, StoredTokens tokens,
      String tokensFile, long tokensChecksum, long bytes, Store store) {
    static final Stored NONE = new Stored(Map.of(), Map.of(), null, null, 0, 0, null);

    /** {@code requested}: the store the run asks for (null: the index's own), named if a rebuild is warned of. */
    static Stored load(Path dir, Warnings warnings, Store requested) {
      Path manifest = dir.resolve(MANIFEST);
      if (!Files.exists(manifest)) {
        return NONE;
      }
      Store store = null;
      try {
        if (!Files.isRegularFile(manifest)) {
          // a pipe would block the read forever, a device never end it
          throw new IllegalArgumentException("its manifest is not a regular file");
        }
        Manifest.Contents c = Manifest.read(manifest);
        store = c.store();
        Path tokensFile = dir.resolve(c.tokensFile());
        if (!Files.isRegularFile(tokensFile)) {
          throw new IllegalArgumentException("its tokens file " + c.tokensFile()
              + (Files.exists(tokensFile) ? " is not a regular file" : " is missing"));
        }
        StoredTokens tokens = StoredTokens.read(tokensFile, c.store(), c.tokens(), DIM);
        if (tokens.checksum() != c.checksum()) {
          throw new IllegalArgumentException("its tokens do not match their checksum");
        }
        Map<String, Entry> entries = new HashMap<>();
        Map<String, Integer> start = new HashMap<>();
        int at = 0;
        for (Entry e : c.entries()) {
          entries.put(e.path(), e);
          start.put(e.path(), at);
          at += (int) e.tokens();
        }
        return new Stored(entries, start, tokens, c.tokensFile(), c.checksum(),
            Files.size(tokensFile) + Files.size(manifest), store);
      } catch (IOException | RuntimeException e) {
        String why = e instanceof IOException io ? TextFiles.reason(io) : e.getMessage();
        if (store == null && Files.isRegularFile(manifest)) {
          store = Manifest.storeNamed(manifest);
        }
        if (store == null) { // a first line damaged too: the store its tokens are in
          store = StoredTokens.storeOfFiles(dir, TOKENS_FILES);
        }
        Store rebuilt = requested != null ? requested : store;
        warnings.warn("the index in " + TextFiles.shown(dir) + " cannot be used (" + why + "); rebuilding it"
            + (rebuilt == null ? "" : " with " + rebuilt + " tokens" + (requested == null ? ", as it stored them"
            : " (--store " + requested + ")")));
        return new Stored(Map.of(), Map.of(), null, null, 0, 0, store);
      }
    }

    /**
     * Whether this index lists exactly these entries in this order (its tokens file's), so that its tokens need not
     * be written again and a manifest written for them names its rows.
     */
    boolean matches(List<Entry> current) {
      if (tokensFile == null || current.size() != entries.size()) {
        return false;
      }
      long at = 0;
      for (Entry e : current) {
        Integer first = start.get(e.path());
        Entry listed = entries.get(e.path());
        // the same entry, or one whose checksum this run settled (its manifest line alone changes)
        if (listed == null || listed != e && !e.equals(listed.settled()) || first == null || first != at) {
          return false;
        }
        at += e.tokens();
      }
      return true;
    }
  }
}
