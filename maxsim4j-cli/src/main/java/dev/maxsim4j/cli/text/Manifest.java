package dev.maxsim4j.cli.text;

import dev.maxsim4j.cli.text.TextIndex.Entry;
import dev.maxsim4j.cli.text.TextIndex.Span;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The text index's list of files: a version line naming how the tokens are stored; the name of the tokens
 * file it goes with, its token count and the CRC-32C of its stored tokens (so that a damaged tokens file is
 * rebuilt, never scored); then one line per file ({@code file}, bytes, modification time in ms, its passages as
 * {@code line:tokens} separated by commas, and the path relative to the folder, escaped by {@link Names}), and, for
 * a file read in the tick of its modification time, the CRC-32C of its text ({@link TextIndex.Entry#text()}).
 */
final class Manifest {
  // the version moves whenever the encoder may give some text other vectors, so that older indexes are rebuilt
  static final String HEADER = "# maxsim4j text index v3: all-MiniLM-L6-v2 token states, 384-d, bf16, passages";

  /** The version line of an index of {@code store} tokens (bf16's is the one indexes had before other stores). */
  static String header(Store store) {
    return HEADER.replace(", bf16, ", ", " + store + ", ");
  }
  private static final String TOKENS_NAME = "tokens-[0-9a-f]{1,32}\\.safetensors";

  /** What a manifest says: the tokens file beside it, its token count and checksum, and the files in order. */
  record Contents(Store store, String tokensFile, long tokens, long checksum, List<Entry> entries) {}

  private Manifest() {}

  /** Parses a manifest; anything it does not expect is an IllegalArgumentException saying what and where. */
  static Contents read(Path file) throws IOException {
    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    Store store = null;
    for (Store s : Store.values()) {
      if (!lines.isEmpty() && lines.get(0).equals(header(s))) {
        store = s;
      }
    }
    if (store == null) {
      throw new IllegalArgumentException("it was written by another version of maxsim4j or is not an index");
    }
    String[] head = lines.size() > 1 ? lines.get(1).split("\t", -1) : new String[0];
    if (head.length != 4 || !head[0].equals("tokens") || !head[1].matches(TOKENS_NAME)
        || !head[3].matches("[0-9a-f]{8}")) {
      throw new IllegalArgumentException("line 2 does not name a tokens file and its checksum");
    }
    long tokens = number(head[2], 2);
    List<Entry> entries = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    long sum = 0;
    for (int n = 2; n < lines.size(); n++) {
      String[] f = lines.get(n).split("\t", -1);
      if ((f.length != 5 && (f.length != 6 || !f[5].matches("[0-9a-f]{8}"))) || !f[0].equals("file")) {
        throw new IllegalArgumentException("line " + (n + 1) + " is not a file line");
      }
      String path;
      try {
        path = Names.unescape(f[4]);
        Path rel = Path.of(path);
        if (path.isEmpty() || rel.isAbsolute() || rel.normalize().startsWith("..") || !seen.add(path)) {
          throw new IllegalArgumentException("an empty, absolute, outside or repeated path");
        }
      } catch (InvalidPathException e) {
        throw new IllegalArgumentException("line " + (n + 1) + " holds an invalid path");
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("line " + (n + 1) + ": " + e.getMessage());
      }
      List<Span> spans = new ArrayList<>();
      for (String s : f[3].isEmpty() ? new String[0] : f[3].split(",", -1)) {
        String[] p = s.split(":", -1);
        if (p.length != 2) {
          throw new IllegalArgumentException("line " + (n + 1) + " has a passage that is not line:tokens");
        }
        long line = number(p[0], n + 1);
        long count = number(p[1], n + 1);
        if (line < 1 || line > Integer.MAX_VALUE || count < 1 || count > Integer.MAX_VALUE) {
          throw new IllegalArgumentException("line " + (n + 1) + " has a passage out of range: " + s);
        }
        spans.add(new Span((int) line, (int) count));
        sum += count;
      }
      long text = f.length == 6 ? Long.parseLong(f[5], 16) : -1;
      entries.add(new Entry(path, number(f[1], n + 1), number(f[2], n + 1), text, List.copyOf(spans)));
    }
    if (sum != tokens) {
      throw new IllegalArgumentException("its passages hold " + sum + " tokens, its header says " + tokens);
    }
    return new Contents(store, head[1], tokens, Long.parseLong(head[3], 16), List.copyOf(entries));
  }

  private static long number(String s, int line) {
    if (!s.matches("-?[0-9]{1,18}")) {
      throw new IllegalArgumentException("line " + line + " has '" + s + "' where a number belongs");
    }
    return Long.parseLong(s);
  }

  static String format(Store store, String tokensFile, long tokens, long checksum, List<Entry> entries) {
    StringBuilder out = new StringBuilder(header(store)).append('\n');
    out.append("tokens\t").append(tokensFile).append('\t').append(tokens).append('\t')
        .append(String.format(Locale.ROOT, "%08x", checksum)).append('\n');
    for (Entry e : entries) {
      out.append("file\t").append(e.bytes()).append('\t').append(e.modified()).append('\t');
      for (int i = 0; i < e.passages().size(); i++) {
        Span s = e.passages().get(i);
        out.append(i == 0 ? "" : ",").append(s.line()).append(':').append(s.tokens());
      }
      out.append('\t').append(Names.escape(e.path()));
      out.append(e.text() < 0 ? "" : String.format(Locale.ROOT, "\t%08x", e.text())).append('\n');
    }
    return out.toString();
  }
}
