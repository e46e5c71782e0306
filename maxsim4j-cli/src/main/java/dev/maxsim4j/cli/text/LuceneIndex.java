package dev.maxsim4j.cli.text;

import dev.maxsim4j.FixedDimensionalEncoder;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.Progress;
import dev.maxsim4j.cli.Sizes;
import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.cli.io.MappedFiles;
import dev.maxsim4j.langchain4j.MiniLmTokenEncoder;
import dev.maxsim4j.lucene.CompleteKnnFloatVectorQuery;
import dev.maxsim4j.lucene.MaxSimRescorer;
import dev.maxsim4j.lucene.QuantizedLateInteractionField;
import dev.maxsim4j.lucene.WideVectorsCodec;
import java.io.Closeable;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.lucene.codecs.Codec;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.CorruptIndexException;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.IndexableField;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.SegmentInfos;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.AlreadyClosedException;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.FilterDirectory;
import org.apache.lucene.store.LockObtainFailedException;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.BytesRef;

/**
 * The text index's passages in a Lucene index, {@code FOLDER/.maxsim4j/lucene/}, for candidate search: each
 * passage is a document holding its file's path, its passage number and line, its MUVERA encoding in a
 * {@link KnnFloatVectorField} (HNSW, maximum inner product) and its token vectors (a float
 * {@link LateInteractionField} for bf16, a {@link QuantizedLateInteractionField} for int8 / binary). The
 * {@link TextIndex} tokens file stays the source of truth: this index is brought in line with it on every run
 * (a changed file's passages replaced, a removed file's deleted, in one Lucene commit, which is atomic), and
 * rebuilt from it, with a warning, when it is damaged. When the tokens could not be saved, neither is this index
 * (it is built in memory for the one search).
 */
public final class LuceneIndex implements Closeable {
  public static final String FOLDER = "lucene";
  private static final String PATH = "path";
  /** A file's path, size and modification time: the passages of one version of one file. */
  private static final String VERSION = "version";
  private static final String PASSAGE = "passage";
  private static final String LINE = "line";
  private static final String FDE = "fde";
  private static final String TOKENS = "tokens";
  /** Passages encoded per call of the encoder (rows in parallel). */
  private static final int ROWS = 1024;
  /** The most tokens added at once: their fp32 copies (bf16 tokens are stored as floats) stay some 50 MB. */
  private static final long ROW_TOKENS = 16_384;
  /** Seed of the encodings' random draws; the commit records it, so another seed rebuilds the index. */
  private static final long SEED = 42;
  static final FixedDimensionalEncoder ENCODER = FixedDimensionalEncoder.builder(MiniLmTokenEncoder.DIM).seed(SEED)
      .build();
  /** The encoder's fingerprint, in every commit: encodings of another release's draws rebuild the index. */
  private static final String ENCODINGS = ENCODER.fingerprint();

  /** A reranked passage: its file, which passage of it (0 = first), the line it starts on, its MaxSim sum. */
  public record Hit(String path, int passage, int line, float score) {}

  /** Reranked candidates, best first, and the time of each stage. */
  public record Result(List<Hit> hits, int candidates, long candidatesNanos, long rerankNanos) {}

  private final Directory directory;
  private final DirectoryReader reader;
  private final Store store;
  private final int added;
  private final int removed;
  private final boolean saved;

  private LuceneIndex(Directory directory, DirectoryReader reader, Store store, int added, int removed,
      boolean saved) {
    this.directory = directory;
    this.reader = reader;
    this.store = store;
    this.added = added;
    this.removed = removed;
    this.saved = saved;
  }

  /** Passages (documents) added by the last {@link #sync}. */
  public int added() {
    return added;
  }

  /** Passages deleted by the last {@link #sync} (those of changed and removed files). */
  public int removed() {
    return removed;
  }

  /** Passages in the index. */
  public int passages() {
    return reader.numDocs();
  }

  /** Length of each passage's encoding. */
  public int encodingDimension() {
    return ENCODER.dimension();
  }

  /** Bytes of the index on disk; 0 when it is kept in memory only. */
  public long bytes() throws IOException {
    if (!saved) {
      return 0;
    }
    long sum = 0;
    for (String f : directory.listAll()) {
      sum += directory.fileLength(f);
    }
    return sum;
  }

  /** {@link #bytes()} for people. */
  public String size() throws IOException {
    return saved ? Sizes.of(bytes()) : "not saved";
  }

  /**
   * Brings the Lucene index of {@code folder} in line with {@code index} and opens it, encoding added passages on
   * {@code maxSim}'s backend (on a GPU, device kernels; the encodings are the same on every backend). With
   * {@code mustSave}, an index that cannot be written is an error; without, a warning, and the index is built in
   * memory.
   */
  public static LuceneIndex sync(Path folder, TextIndex index, MaxSim maxSim, boolean mustSave, Warnings warnings,
      PrintStream err) throws IOException {
    return sync(folder, index, batch -> maxSim.encodeDocuments(ENCODER, batch), mustSave, warnings, err);
  }

  /** {@link #sync} with the passages' encodings computed by {@code maxSim}. */
  static LuceneIndex sync(Path folder, TextIndex index, Function<TokenBatch, float[][]> maxSim, boolean mustSave,
      Warnings warnings, PrintStream err) throws IOException {
    Path dir = folder.resolve(TextIndex.FOLDER).resolve(FOLDER);
    String shown = TextFiles.shown(dir);
    if (index.bytes() == 0) {
      // tokens that could not be saved (already warned about) leave nothing on disk for this index to match
      return inMemory(index, maxSim, err);
    }
    Directory fs;
    try {
      if (Files.isSymbolicLink(dir)) {
        // its rebuild clears the folder it finds: through a link, that would be another folder's files
        warnings.warn("the Lucene index in " + shown + " is a link; rebuilding it in a folder of its own");
        Files.delete(dir);
      }
      Files.createDirectories(dir);
      fs = FSDirectory.open(dir);
    } catch (IOException e) {
      return inMemory(shown, TextFiles.reason(e), index, maxSim, mustSave, warnings, err);
    }
    List<Path> odd = notRegular(dir);
    if (!odd.isEmpty()) {
      // removed here, the lock file too, which the rebuild's clearing keeps (a link, not what it names)
      warnings.warn("the Lucene index in " + shown + " cannot be used (its file "
          + TextFiles.shown(odd.getFirst().getFileName()) + " is not a regular file); rebuilding it");
      try {
        for (Path p : odd) {
          Files.deleteIfExists(p);
        }
      } catch (IOException e) {
        fs.close();
        return inMemory(shown, TextFiles.reason(e), index, maxSim, mustSave, warnings, err);
      }
    }
    boolean existed = odd.isEmpty() && existed(fs);
    try {
      if (odd.isEmpty()) {
        return write(fs, index, maxSim, false, true, err);
      }
    } catch (LockObtainFailedException e) {
      fs.close();
      // maxsim4j runs take turns (UpdateLock), so the writer holding it is another program's
      return inMemory(shown, "another program holds its write lock (" + IndexWriter.WRITE_LOCK_NAME + ")", index,
          maxSim, mustSave, warnings, err);
    } catch (EncodingFailed e) {
      // the encoder failed, not the index (which the failed write left as it was): report that failure itself
      fs.close();
      throw e.getCause();
    } catch (IOException | RuntimeException e) {
      // a writer closed by a failure (a merge's full disk) names that failure only as its cause
      Exception real = e instanceof AlreadyClosedException && e.getCause() instanceof Exception c ? c : e;
      if (real instanceof IOException io && (!existed || intact(fs))) {
        // no index was there, or it reads whole, so writing failed (a full disk, a read-only folder), not the
        // index: rebuilding would only delete it and fail alike
        discardUncommitted(fs);
        fs.close();
        return inMemory(shown, TextFiles.reason(io), index, maxSim, mustSave, warnings, err);
      }
      if (!existed) {
        discardUncommitted(fs);
        fs.close();
        throw e;
      }
      String why = real.getMessage() == null || real.getMessage().isBlank() ? real.getClass().getSimpleName()
          : real.getMessage().lines().findFirst().orElseThrow();
      warnings.warn("the Lucene index in " + shown + " cannot be used (" + why + "); rebuilding it");
    }
    try {
      clear(fs);
      return write(fs, index, maxSim, true, true, err);
    } catch (EncodingFailed e) {
      fs.close();
      throw e.getCause();
    } catch (IOException e) {
      discardUncommitted(fs);
      fs.close();
      return inMemory(shown, TextFiles.reason(e), index, maxSim, mustSave, warnings, err);
    }
  }

  private static LuceneIndex inMemory(String shown, String why, TextIndex index,
      Function<TokenBatch, float[][]> maxSim, boolean mustSave, Warnings warnings, PrintStream err)
      throws IOException {
    if (mustSave) {
      throw new IllegalArgumentException("cannot write the Lucene index in " + shown + ": " + why);
    }
    warnings.warn("cannot save the Lucene index in " + shown + " (" + why + "); building it in memory");
    return inMemory(index, maxSim, err);
  }

  private static LuceneIndex inMemory(TextIndex index, Function<TokenBatch, float[][]> maxSim, PrintStream err)
      throws IOException {
    try {
      return write(new ByteBuffersDirectory(), index, maxSim, true, false, err);
    } catch (EncodingFailed e) {
      throw e.getCause();
    }
  }

  /** A failure of the encoder while writing, told apart from the index's own so that it is not taken for damage. */
  private static final class EncodingFailed extends RuntimeException {
    EncodingFailed(RuntimeException cause) {
      super(cause);
    }

    @Override
    public synchronized RuntimeException getCause() {
      return (RuntimeException) super.getCause();
    }
  }

  /** Whether the folder holds a commit of an index (true where it cannot be told, which a rebuild then settles). */
  private static boolean existed(Directory d) {
    try {
      return DirectoryReader.indexExists(d);
    } catch (IOException | RuntimeException e) {
      return true;
    }
  }

  /** Whether the index's last commit opens and its files match their checksums. */
  private static boolean intact(Directory d) {
    try (DirectoryReader r = DirectoryReader.open(d)) {
      for (LeafReaderContext leaf : r.leaves()) {
        leaf.reader().checkIntegrity();
      }
      return true;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /**
   * Deletes the files a failed write left behind (a full disk keeps them otherwise): a new writer's first act is
   * to delete every file no commit references, and this one closes without committing. Best effort.
   */
  private static void discardUncommitted(Directory d) {
    IndexWriterConfig config = new IndexWriterConfig().setOpenMode(IndexWriterConfig.OpenMode.CREATE_OR_APPEND)
        .setCommitOnClose(false);
    try (IndexWriter cleaner = new IndexWriter(d, config)) {
      cleaner.rollback();
    } catch (IOException | RuntimeException ignored) {
      // what stays is deleted by the next run that opens a writer
    }
  }

  /**
   * The entries of {@code dir} that are links, or neither regular files nor folders, sorted: Lucene makes none of
   * them, and reading one would lead out of the folder, wait forever (a pipe) or never end (a device).
   */
  private static List<Path> notRegular(Path dir) {
    try (Stream<Path> entries = Files.list(dir)) {
      return entries.filter(LuceneIndex::isOdd).sorted().toList();
    } catch (IOException | RuntimeException unlisted) {
      return List.of(); // what cannot be listed fails the index's own reads, which say so
    }
  }

  /** Whether {@code p} is a link, or neither a regular file nor a folder; false for one gone meanwhile. */
  private static boolean isOdd(Path p) {
    try {
      BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      return a.isSymbolicLink() || a.isOther();
    } catch (IOException gone) {
      return false;
    }
  }

  /** Removes every file of a damaged index (only this folder's, which holds nothing else). */
  private static void clear(Directory d) throws IOException {
    for (String f : d.listAll()) {
      if (!f.equals(IndexWriter.WRITE_LOCK_NAME)) {
        d.deleteFile(f);
      }
    }
  }

  /**
   * What a commit records: the passages' store, encoder, its encodings' fingerprint and the version line of the tokens
   * they were copied from; an index of other ones is rebuilt (a new version line means the token encoder may give
   * other vectors, and a new fingerprint other encodings for the same parameters, which the file versions this index
   * is kept in line by would not show).
   */
  private static Map<String, String> commitData(Store store) {
    return Map.of("maxsim4j", "text passages v1", "store", store.toString(), "encoder", ENCODER.toString(),
        "encodings", ENCODINGS, "tokens", Manifest.header(store));
  }

  private static LuceneIndex write(Directory d, TextIndex index, Function<TokenBatch, float[][]> maxSim,
      boolean create, boolean saved, PrintStream err) throws IOException {
    Map<String, String> data = commitData(index.store());
    boolean rebuild = create || !DirectoryReader.indexExists(d)
        || !SegmentInfos.readLatestCommit(d).getUserData().equals(data);
    if (!rebuild) {
      // an index already in line is only read: no writer, no lock, so a read-only folder serves as well; its
      // files' checksums are verified first (opening checks only headers and footers, and a flipped byte in the
      // token doc values would otherwise score), as the tokens file's are
      DirectoryReader current = DirectoryReader.open(d);
      try {
        for (LeafReaderContext leaf : current.leaves()) {
          leaf.reader().checkIntegrity();
        }
      } catch (IOException | RuntimeException e) {
        current.close();
        throw e;
      }
      Set<String> wanted = new HashSet<>();
      index.entries().stream().filter(e -> !e.passages().isEmpty()).forEach(e -> wanted.add(version(e)));
      if (liveVersions(current).equals(wanted)) {
        recordFiles(d, current);
        return new LuceneIndex(d, current, index.store(), 0, 0, saved);
      }
      current.close();
    }
    Codec codec = WideVectorsCodec.forDimensions(ENCODER.dimension());
    // a quarter of the heap left at most: the tokens just encoded may hold most of a small one
    Runtime rt = Runtime.getRuntime();
    long left = rt.maxMemory() - (rt.totalMemory() - rt.freeMemory());
    double bufferMb = Math.max(16, Math.min(256, left / 4 / (1 << 20)));
    IndexWriterConfig config = new IndexWriterConfig().setCodec(codec).setRAMBufferSizeMB(bufferMb)
        .setOpenMode(rebuild ? IndexWriterConfig.OpenMode.CREATE : IndexWriterConfig.OpenMode.APPEND);
    int[] counts;
    IndexWriter writer = new IndexWriter(d, config);
    try {
      counts = update(writer, index, maxSim, rebuild, data, err);
      writer.close();
    } catch (IOException | RuntimeException | Error e) {
      // closing would commit the passages added so far, and a file with some of its passages would then pass for
      // indexed; rolling back keeps the last commit, whole. A writer that met a tragic event (an out-of-memory error
      // inside Lucene, say) has rolled itself back, and a second rollback then could wait for it forever
      if (writer.getTragicException() == null) {
        try {
          writer.rollback();
        } catch (Throwable suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      throw e;
    }
    DirectoryReader reader = DirectoryReader.open(d);
    recordFiles(d, reader);
    int removed = counts[0] + counts[1] - reader.numDocs();
    return new LuceneIndex(d, reader, index.store(), counts[1], removed, saved);
  }

  /**
   * Records the files of {@code reader}'s commit with the run's mapped inputs (Lucene maps them itself): a search that
   * faults on one cut short names it, as it names the tokens file.
   */
  private static void recordFiles(Directory d, DirectoryReader reader) throws IOException {
    if (FilterDirectory.unwrap(d) instanceof FSDirectory fs) {
      for (String name : reader.getIndexCommit().getFileNames()) {
        MappedFiles.record(fs.getDirectory().resolve(name));
      }
    }
  }

  /**
   * Deletes the passages of files no longer in {@code index}, adds those not yet in {@code writer}'s index and
   * commits; returns the passages before and the passages added.
   */
  private static int[] update(IndexWriter writer, TextIndex index, Function<TokenBatch, float[][]> maxSim,
      boolean rebuild, Map<String, String> data, PrintStream err) throws IOException {
    int before = 0;
    List<TextIndex.Entry> entries = index.entries();
    Set<String> wanted = new HashSet<>();
    entries.forEach(e -> wanted.add(version(e)));
    Set<String> present = new HashSet<>();
    if (!rebuild) {
      try (DirectoryReader r = DirectoryReader.open(writer)) {
        before = r.numDocs();
        for (String v : liveVersions(r)) {
          if (wanted.contains(v)) {
            present.add(v);
          } else {
            writer.deleteDocuments(new Term(VERSION, v));
          }
        }
      }
    }
    List<Integer> rows = new ArrayList<>();
    for (int e = 0, row = 0; e < entries.size(); row += entries.get(e).passages().size(), e++) {
      if (!present.contains(version(entries.get(e)))) {
        for (int p = 0; p < entries.get(e).passages().size(); p++) {
          rows.add(row + p);
        }
      }
    }
    int added = rows.size();
    Progress progress = new Progress(err, "adding " + Counts.of(added, "passage") + " to the Lucene index");
    for (int from = 0; from < rows.size(); ) {
      int to = from + 1;
      long tokens = index.rows().length(rows.get(from));
      while (to < rows.size() && to - from < ROWS && rows.get(to) == rows.get(to - 1) + 1
          && tokens + index.rows().length(rows.get(to)) <= ROW_TOKENS) {
        tokens += index.rows().length(rows.get(to));
        to++;
      }
      addRows(writer, index, maxSim, rows.get(from), rows.get(to - 1) + 1);
      from = to;
      progress.update(from, rows.size());
    }
    if (rebuild || writer.hasUncommittedChanges()) {
      writer.setLiveCommitData(data.entrySet());
      writer.commit();
    }
    progress.done();
    return new int[] {before, added};
  }

  /** The file versions of {@link #VERSION} with at least one live passage. */
  private static Set<String> liveVersions(DirectoryReader r) throws IOException {
    Set<String> live = new HashSet<>();
    for (LeafReaderContext leaf : r.leaves()) {
      Terms terms = leaf.reader().terms(VERSION);
      if (terms == null) {
        continue;
      }
      Bits liveDocs = leaf.reader().getLiveDocs();
      TermsEnum te = terms.iterator();
      PostingsEnum postings = null;
      for (BytesRef t = te.next(); t != null; t = te.next()) {
        postings = te.postings(postings, PostingsEnum.NONE);
        for (int doc = postings.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = postings.nextDoc()) {
          if (liveDocs == null || liveDocs.get(doc)) {
            live.add(t.utf8ToString());
            break;
          }
        }
      }
    }
    return live;
  }

  private static String version(TextIndex.Entry e) {
    // a file read in the tick of its modification time is told apart from a rewrite in that tick by its text
    return e.path() + "\u0000" + e.bytes() + "\u0000" + e.modified() + "\u0000" + e.identity()
        + (e.checksum() < 0 ? "" : "\u0000" + e.checksum());
  }

  /** Adds rows {@code from} to {@code to} of the index (committed with the rest, so a file's rows may be split). */
  private static void addRows(IndexWriter writer, TextIndex index, Function<TokenBatch, float[][]> maxSim, int from,
      int to) throws IOException {
    TokenBatch batch = index.rows().slice(from, to);
    float[][] encodings;
    try {
      encodings = maxSim.apply(batch);
    } catch (RuntimeException e) {
      throw new EncodingFailed(e);
    }
    float[] floats = index.store() == Store.BF16 ? batch.toFloatArray() : null;
    int[] offsets = batch.offsets();
    int d = batch.dim();
    List<Document> docs = new ArrayList<>();
    for (int row = from; row < to; row++) {
      TextIndex.Entry entry = index.entries().get(index.entryOf(row));
      int passage = index.passageOf(row);
      Document doc = new Document();
      doc.add(new StringField(PATH, entry.path(), Field.Store.YES));
      doc.add(new StringField(VERSION, version(entry), Field.Store.NO));
      doc.add(new StoredField(PASSAGE, passage));
      doc.add(new StoredField(LINE, entry.passages().get(passage).line()));
      doc.add(new KnnFloatVectorField(FDE, encodings[row - from], VectorSimilarityFunction.MAXIMUM_INNER_PRODUCT));
      if (floats != null) {
        int start = offsets[row - from];
        float[][] tokens = new float[offsets[row - from + 1] - start][];
        for (int t = 0; t < tokens.length; t++) {
          tokens[t] = Arrays.copyOfRange(floats, (start + t) * d, (start + t + 1) * d);
        }
        doc.add(new LateInteractionField(TOKENS, tokens));
      } else {
        doc.add(new QuantizedLateInteractionField(TOKENS, index.rows().slice(row, row + 1)));
      }
      docs.add(doc);
    }
    writer.addDocuments(docs);
  }

  /**
   * The passages among the {@code candidates} whose encodings are nearest the query's, reranked by exact MaxSim
   * ({@code query}: one row of float tokens).
   */
  public Result search(MaxSim maxSim, TokenBatch query, int candidates) throws IOException {
    IndexSearcher searcher = new IndexSearcher(reader);
    long t0 = System.nanoTime();
    TopDocs first = nearest(searcher, query, candidates);
    long t1 = System.nanoTime();
    float[][] vectors = new float[query.length(0)][query.dim()];
    for (int t = 0; t < vectors.length; t++) {
      for (int k = 0; k < vectors[t].length; k++) {
        vectors[t][k] = query.get(0, t, k);
      }
    }
    MaxSimRescorer rescorer = store == Store.BF16
        ? MaxSimRescorer.create(TOKENS, vectors, VectorSimilarityFunction.DOT_PRODUCT, MaxSimRescorer.Scale.RAW, maxSim)
        : MaxSimRescorer.createQuantized(TOKENS, vectors, MaxSimRescorer.Scale.RAW, maxSim);
    TopDocs top = first.scoreDocs.length == 0 ? first : rescorer.rescore(searcher, first, first.scoreDocs.length);
    long t2 = System.nanoTime();
    return new Result(hits(searcher, top), first.scoreDocs.length, t1 - t0, t2 - t1);
  }

  /**
   * The {@code candidates} passages whose encodings are nearest the query's, nearest first, their scores the
   * encodings' similarity (for a rerank elsewhere).
   */
  public List<Hit> candidates(TokenBatch query, int candidates) throws IOException {
    IndexSearcher searcher = new IndexSearcher(reader);
    return hits(searcher, nearest(searcher, query, candidates));
  }

  private static TopDocs nearest(IndexSearcher searcher, TokenBatch query, int candidates) throws IOException {
    float[] encoding = ENCODER.encodeQueries(query)[0];
    // more candidates than passages would only size Lucene's queues past them (and past what it allows)
    int n = Math.min(candidates, Math.max(1, searcher.getIndexReader().maxDoc()));
    return searcher.search(new CompleteKnnFloatVectorQuery(FDE, encoding, n), n);
  }

  private List<Hit> hits(IndexSearcher searcher, TopDocs top) throws IOException {
    StoredFields stored = searcher.storedFields();
    String where = directory instanceof FSDirectory fs ? TextFiles.shown(fs.getDirectory()) : "the in-memory index";
    List<Hit> hits = new ArrayList<>();
    for (ScoreDoc h : top.scoreDocs) {
      hits.add(hit(stored.document(h.doc), h.doc, h.score, where));
    }
    return hits;
  }

  /**
   * The hit of Lucene document {@code id}, or, where it lacks a stored field this class writes (an index written by
   * something else), an error naming the index {@code where} and the document.
   */
  static Hit hit(Document doc, int id, float score, String where) throws CorruptIndexException {
    String path = doc.get(PATH);
    Number passage = number(doc, PASSAGE);
    Number line = number(doc, LINE);
    if (path == null || passage == null || line == null) {
      String missing = path == null ? "path" : passage == null ? "passage number" : "line";
      throw new CorruptIndexException("Lucene document " + id + " has no stored " + missing + " (the index was "
          + "changed by another program); delete the folder and the next run rebuilds it", where);
    }
    return new Hit(path, passage.intValue(), line.intValue(), score);
  }

  private static Number number(Document doc, String field) {
    IndexableField f = doc.getField(field);
    return f == null ? null : f.numericValue();
  }

  @Override
  public void close() throws IOException {
    reader.close();
    directory.close();
  }
}
