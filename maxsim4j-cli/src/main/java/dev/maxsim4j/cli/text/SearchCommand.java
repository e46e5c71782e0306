package dev.maxsim4j.cli.text;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.TopK;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.Progress;
import dev.maxsim4j.langchain4j.MiniLmTokenEncoder;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Set;

/** {@code search}: the files of a folder that best match a query, by MaxSim over token embeddings. */
public final class SearchCommand {
  public static final String USAGE = """
      search --dir FOLDER --query TEXT [--k 5] [--backend NAME]
        Brings FOLDER's index up to date (see index), then ranks its files against the query. Score: the
        mean over query tokens of the best cosine with any token of the file.""";

  private SearchCommand() {}

  public static int run(String[] argv, PrintStream out, PrintStream err) throws IOException {
    Args a = new Args("search", argv, 1, Set.of("--dir", "--query", "--k", "--backend"), Set.of());
    Path folder = Path.of(a.require("--dir"));
    String query = a.require("--query");
    int k = a.intValue("--k", 5, 1);
    try (MiniLmTokenEncoder encoder = MiniLmTokenEncoder.load();
        MaxSim maxSim = MaxSim.builder().backend(a.getOr("--backend", "auto")).build()) {
      Progress progress = new Progress(err, "encoding new and changed files");
      TextIndex index = TextIndex.update(folder, encoder, progress::update);
      progress.done();
      if (index.entries().isEmpty()) {
        throw new IllegalArgumentException("search: " + folder + " holds no .txt or .md file");
      }
      TokenBatch q = encoder.encode(query);
      long t0 = System.nanoTime();
      TopK top = maxSim.topK(q, index.documents(), k);
      double ms = (System.nanoTime() - t0) / 1e6;
      out.printf(Locale.ROOT, "%d files (%d encoded now), query of %d tokens, scored in %.1f ms (%s, first call: JIT cold)%n",
          index.entries().size(), index.encoded(), q.length(0), ms, maxSim.backendName());
      out.printf(Locale.ROOT, "%4s  %6s  %s%n", "rank", "score", "file");
      for (int r = 0; r < top.indices()[0].length; r++) {
        TextIndex.Entry e = index.entries().get(top.indices()[0][r]);
        String text = TextFiles.read(folder.resolve(e.path()));
        out.printf(Locale.ROOT, "%4d  %6.3f  %s  %s%n", r + 1, top.scores()[0][r] / q.length(0), e.path(),
            TextFiles.snippet(text, 70));
      }
    }
    return 0;
  }
}
