package dev.maxsim4j.cli.text;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.Engine;
import dev.maxsim4j.cli.io.Counts;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Set;

/** {@code index}: encodes a folder of text files into its {@code .maxsim4j/} index (only what changed). */
public final class IndexCommand {
  public static final String USAGE = """
      index --dir FOLDER [--store bf16|int8|binary] [--backend NAME] [--verbose]
        Token embeddings of every .txt/.md file under FOLDER, stored in FOLDER/.maxsim4j/ and reused:
        only new or changed files are encoded again. Each file is cut into passages of at most 160 words
        (and 1,200 characters), each repeating the last 32 words of the one before; each passage is scored
        on its own. Files that are not UTF-8 text (invalid bytes, NUL bytes) or cannot be read are skipped
        and named on stderr, as is a file larger than 1/32 of the maximum heap (with its size and that
        bound; JAVA_OPTS=-Xmx... raises it): a file is read whole, and its passages kept in memory until
        encoded. A damaged index is rebuilt, with a warning. A folder with no .txt or .md
        file is an error. --store: how the token vectors are kept: bf16 (2 bytes per dimension, the default
        for a new index), int8 (1 byte per dimension + a scale per token) or binary (1 bit per dimension + a
        scale per token); without it an index keeps its store; another store rebuilds the index.
        Beside the tokens, FOLDER/.maxsim4j/lucene/ holds a Lucene index of the passages for search's
        candidates: each passage's MUVERA encoding (HNSW) and its token vectors (as stored), kept in line
        with the tokens (only changed files' passages are replaced; a damaged one is rebuilt from them).
        The MUVERA encodings are computed on the backend (--backend, default auto: the GPU where there is
        one); they are the same on every backend.""";

  private IndexCommand() {}

  public static int run(String[] argv, PrintStream out, PrintStream err) throws IOException {
    Args a = new Args("index", argv, 1, Set.of("--dir", "--store", "--backend"), Set.of("--verbose"));
    Store store = Store.parse("index", a.get("--store"));
    Path folder = TextFiles.folder("--dir", a.require("--dir"));
    Warnings warnings = new Warnings(err);
    try (LazyEncoder encoder = new LazyEncoder();
        MaxSim maxSim = Engine.open(a);
        UpdateLock lock = new UpdateLock(err)) {
      TextIndex index = TextIndex.update(folder, encoder, true, warnings, err, store, lock);
      long t0 = System.nanoTime();
      try (LuceneIndex lucene = LuceneIndex.sync(folder, index, maxSim, true, warnings, err)) {
        double seconds = (System.nanoTime() - t0) / 1e9;
        warnings.finish();
        int files = index.entries().size();
        out.printf(Locale.ROOT, "indexed %s (%d encoded, %d reused, %d skipped), %s, %s, in %s (%s, %s tokens)%n",
            Counts.of(files, "file"), index.encoded(), files - index.encoded(), index.skipped(),
            Counts.of(index.rows().size(), "passage"), Counts.of(index.rows().offsets()[index.rows().size()], "token"),
            TextFiles.shown(folder.resolve(TextIndex.FOLDER)), index.size(), index.store());
        out.printf(Locale.ROOT, "Lucene index: %s (%d added, %d removed) with %d-d encodings, %s, updated in"
            + " %.1f s%n", Counts.of(lucene.passages(), "passage"), lucene.added(), lucene.removed(),
            lucene.encodingDimension(),
            lucene.size(), seconds);
      }
    }
    return 0;
  }
}
