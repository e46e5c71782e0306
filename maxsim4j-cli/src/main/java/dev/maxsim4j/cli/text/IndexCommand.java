package dev.maxsim4j.cli.text;

import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.Progress;
import dev.maxsim4j.langchain4j.MiniLmTokenEncoder;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Set;

/** {@code index}: encodes a folder of text files into its {@code .maxsim4j/} index (only what changed). */
public final class IndexCommand {
  public static final String USAGE = """
      index --dir FOLDER
        Token embeddings of every .txt/.md file under FOLDER, stored in FOLDER/.maxsim4j/ and reused:
        only new or changed files are encoded again.""";

  private IndexCommand() {}

  public static int run(String[] argv, PrintStream out, PrintStream err) throws IOException {
    Args a = new Args("index", argv, 1, Set.of("--dir"), Set.of());
    Path folder = Path.of(a.require("--dir"));
    try (MiniLmTokenEncoder encoder = MiniLmTokenEncoder.load()) {
      Progress progress = new Progress(err, "encoding new and changed files");
      TextIndex index = TextIndex.update(folder, encoder, progress::update);
      progress.done();
      out.printf(Locale.ROOT, "indexed %d files (%d encoded, %d reused), %d tokens, in %s%n", index.entries().size(),
          index.encoded(), index.entries().size() - index.encoded(), index.documents().offsets()[index.entries().size()],
          folder.resolve(TextIndex.FOLDER));
    }
    return 0;
  }
}
