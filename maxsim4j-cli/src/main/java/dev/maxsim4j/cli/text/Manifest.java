package dev.maxsim4j.cli.text;

import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.cli.text.TextIndex.Entry;
import dev.maxsim4j.cli.text.TextIndex.Span;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * The text index's list of files: a version line naming how the tokens are stored; the name of the tokens
 * file it goes with, its token count, the CRC-32C of its stored tokens and the CRC-32C of the file lines below
 * (so that a damaged tokens file or list of files is rebuilt, never scored: a file line says which tokens are
 * whose); then one line per file ({@code file}, bytes, modification time in ms, its identity
 * ({@link TextFiles#identity}), its passages as {@code line:tokens} separated by commas, and the path relative to
 * the folder, escaped by {@link Names}), and, for a file read in the tick of its modification time, the CRC-32C of
 * its text ({@link TextIndex.Entry#text()}: 8 hex digits, 9 from 1 once a later run has settled it).
 */
final class Manifest {
  // the version moves whenever the encoder may give some text other vectors or a file line gains a field, so that
  // older indexes are rebuilt (a value an older maxsim4j cannot parse, a settled checksum, makes it rebuild too)
  static final String HEADER = "# maxsim4j text index v5: all-MiniLM-L6-v2 token states, 384-d, bf16, passages";
  /** What an identity field holds: {@link TextFiles#identity}'s inode and nanoseconds, or nothing. */
  private static final Pattern IDENTITY = Pattern.compile("(-?[0-9]{1,19}:-?[0-9]{1,19})?");
  /** What a text field holds: a CRC-32C, settled ({@link TextIndex.Entry#SETTLED}: 9 digits, the first 1) or not. */
  private static final Pattern TEXT = Pattern.compile("1?[0-9a-f]{8}");

  /** The version line of an index of {@code store} tokens (bf16's is the one indexes had before other stores). */
  static String header(Store store) {
    return HEADER.replace(", bf16, ", ", " + store + ", ");
  }
  private static final String TOKENS_NAME = "tokens-[0-9a-f]{1,32}\\.safetensors";
  /** The longest first or second line: the version line, or "tokens", a tokens file's name and two numbers. */
  private static final int HEAD_CHARS = 256;
  /**
   * The longest file line without its passages: "file", two numbers, a checksum and a path, each of its characters
   * escaped in at most 6; room for the 32,767 characters of the longest paths any system takes.
   */
  private static final long FILE_LINE_CHARS = 1 << 20;
  /** The longest passage of a file line: "line:tokens," of two ints. */
  private static final long PASSAGE_CHARS = 22;

  /** What a manifest says: the tokens file beside it, its token count and checksum, and the files in order. */
  record Contents(Store store, String tokensFile, long tokens, long checksum, List<Entry> entries) {}

  private Manifest() {}

  /**
   * Parses a manifest; anything it does not expect is an IllegalArgumentException saying what and where. It is read
   * a line at a time, each line checked before the next is read and refused once longer than the index it describes
   * can need, so that a damaged file (NUL bytes, a line without end) is refused before it fills the heap.
   */
  static Contents read(Path file) throws IOException {
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      Lines lines = new Lines(in);
      Store store = storeOf(lines.next(HEAD_CHARS));
      if (store == null) {
        throw new IllegalArgumentException("it was written by another version of maxsim4j or is not an index");
      }
      String second = lines.next(HEAD_CHARS);
      String[] head = second != null ? second.split("\t", -1) : new String[0];
      if (head.length < 4 || head.length > 5 || !head[0].equals("tokens") || !head[1].matches(TOKENS_NAME)
          || !head[3].matches("[0-9a-f]{8}") || head.length == 5 && !head[4].matches("[0-9a-f]{8}")) {
        throw new IllegalArgumentException("line 2 does not name a tokens file and its checksum");
      }
      if (head.length == 4) {
        // nothing tells whether its file lines still say whose tokens are whose: trusting it could misname them
        throw new IllegalArgumentException("its manifest has no checksum of its list of files (an index written by an"
            + " earlier maxsim4j)");
      }
      long tokens = number(head[2], 2);
      if (tokens < 0 || tokens > TextIndex.MAX_TOKENS) {
        throw new IllegalArgumentException("line 2 counts " + tokens + " tokens; an index holds 0 to "
            + TextIndex.MAX_TOKENS);
      }
      List<Entry> entries = new ArrayList<>();
      Set<String> seen = new HashSet<>();
      CRC32C fileLines = new CRC32C();
      long sum = 0;
      // every passage holds a token: a line lists at most the tokens not yet counted as passages
      for (int n = 2; ; n++) {
        String line = lines.next(FILE_LINE_CHARS + PASSAGE_CHARS * (tokens - sum));
        if (line == null) {
          break;
        }
        fileLines.update((line + "\n").getBytes(StandardCharsets.UTF_8));
        Entry e = entry(line, n + 1, seen);
        sum += e.passages().stream().mapToLong(Span::tokens).sum();
        if (sum > tokens) {
          throw new IllegalArgumentException("its passages hold more tokens than its header's " + tokens
              + " by line " + (n + 1));
        }
        entries.add(e);
      }
      if (sum != tokens) {
        throw new IllegalArgumentException("its passages hold " + Counts.of(sum, "token") + ", its header says "
            + tokens);
      }
      if (fileLines.getValue() != Long.parseLong(head[4], 16)) {
        throw new IllegalArgumentException("its list of files does not match its checksum");
      }
      return new Contents(store, head[1], tokens, Long.parseLong(head[3], 16), List.copyOf(entries));
    } catch (LineTooLong e) {
      throw new IllegalArgumentException("line " + e.number + " is longer than " + e.max + " characters; expected"
          + (e.number <= 2 ? " a header line" : " a file line of the index its header describes"));
    }
  }

  /** The store a manifest's first line names; null when it names none (or cannot be read). */
  static Store storeNamed(Path file) {
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      return storeOf(new Lines(in).next(HEAD_CHARS));
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  private static Store storeOf(String first) {
    for (Store s : Store.values()) {
      if (header(s).equals(first)) {
        return s;
      }
    }
    return null;
  }

  /** One file line (number {@code n} of the manifest); {@code seen}: the paths of the lines before it. */
  private static Entry entry(String line, int n, Set<String> seen) {
    String[] f = line.split("\t", -1);
    if ((f.length != 6 && (f.length != 7 || !TEXT.matcher(f[6]).matches())) || !f[0].equals("file")
        || !IDENTITY.matcher(f[3]).matches()) {
      throw new IllegalArgumentException("line " + n + " is not a file line");
    }
    String path;
    try {
      path = Names.unescape(f[5]);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("line " + n + ": " + e.getMessage());
    }
    if (!isBelowTheFolder(path) || !seen.add(path)) {
      throw new IllegalArgumentException("line " + n + ": an empty, absolute, outside or repeated path");
    }
    List<Span> spans = new ArrayList<>();
    for (String s : f[4].isEmpty() ? new String[0] : f[4].split(",", -1)) {
      String[] p = s.split(":", -1);
      if (p.length != 2) {
        throw new IllegalArgumentException("line " + n + " has a passage that is not line:tokens");
      }
      long number = number(p[0], n);
      long count = number(p[1], n);
      if (number < 1 || number > Integer.MAX_VALUE || count < 1 || count > Integer.MAX_VALUE) {
        throw new IllegalArgumentException("line " + n + " has a passage out of range: " + s);
      }
      spans.add(new Span((int) number, (int) count));
    }
    long text = f.length == 7 ? Long.parseLong(f[6], 16) : -1;
    return new Entry(path, number(f[1], n), number(f[2], n), f[3], text, List.copyOf(spans));
  }

  /**
   * Whether {@code path} names a file below the index's folder: not empty, not absolute, no step out. A name that
   * this JVM's file-system encoding cannot hold (a non-ASCII name under the C locale) is judged on its text: it is
   * an entry like any other (the listing names files by their bytes read as UTF-8, TextFiles.keys), not damage that
   * would rebuild the whole index.
   */
  private static boolean isBelowTheFolder(String path) {
    if (path.isEmpty()) {
      return false;
    }
    try {
      Path rel = Path.of(path);
      return !rel.isAbsolute() && !rel.normalize().startsWith("..");
    } catch (InvalidPathException e) {
      String steps = Pattern.quote("/") + "|" + Pattern.quote(File.separator);
      return !path.startsWith("/") && !path.startsWith(File.separator)
          && Arrays.stream(path.split(steps)).noneMatch(".."::equals);
    }
  }

  private static long number(String s, int line) {
    if (!s.matches("-?[0-9]{1,18}")) {
      throw new IllegalArgumentException("line " + line + " has '" + s + "' where a number belongs");
    }
    return Long.parseLong(s);
  }

  static String format(Store store, String tokensFile, long tokens, long checksum, List<Entry> entries) {
    StringBuilder lines = new StringBuilder();
    for (Entry e : entries) {
      lines.append("file\t").append(e.bytes()).append('\t').append(e.modified()).append('\t').append(e.identity())
          .append('\t');
      for (int i = 0; i < e.passages().size(); i++) {
        Span s = e.passages().get(i);
        lines.append(i == 0 ? "" : ",").append(s.line()).append(':').append(s.tokens());
      }
      lines.append('\t').append(Names.escape(e.path()));
      // a settled checksum takes 9 digits, its first 1
      lines.append(e.text() < 0 ? "" : String.format(Locale.ROOT, "\t%08x", e.text())).append('\n');
    }
    CRC32C fileLines = new CRC32C();
    fileLines.update(lines.toString().getBytes(StandardCharsets.UTF_8));
    return header(store) + "\ntokens\t" + tokensFile + "\t" + tokens + "\t"
        + String.format(Locale.ROOT, "%08x\t%08x", checksum, fileLines.getValue()) + "\n" + lines;
  }

  /** Lines as {@link Files#readAllLines} splits them (at LF, CR or CR LF), each refused past a length. */
  private static final class Lines {
    private final BufferedReader in;
    private final char[] chunk = new char[8192];
    private int at;
    private int end;
    private int number;

    Lines(BufferedReader in) {
      this.in = in;
    }

    /** The next line, null at the end of the file; a {@link LineTooLong} once it passes {@code max} characters. */
    String next(long max) throws IOException {
      number++;
      StringBuilder line = new StringBuilder();
      while (true) {
        if (at == end) {
          end = in.read(chunk);
          at = 0;
          if (end < 0) {
            end = 0;
            return line.isEmpty() ? null : line.toString();
          }
        }
        int from = at;
        while (at < end && chunk[at] != '\n' && chunk[at] != '\r') {
          at++;
        }
        if (line.length() + (long) (at - from) > max) {
          throw new LineTooLong(number, max);
        }
        line.append(chunk, from, at - from);
        if (at < end) {
          if (chunk[at++] == '\r') {
            skipNewlineAfterReturn();
          }
          return line.toString();
        }
      }
    }

    private void skipNewlineAfterReturn() throws IOException {
      if (at == end) {
        end = in.read(chunk);
        at = 0;
        if (end < 0) {
          end = 0;
          return;
        }
      }
      if (chunk[at] == '\n') {
        at++;
      }
    }
  }

  /** A line longer than the manifest can hold there: damage, reported by its number. */
  private static final class LineTooLong extends IOException {
    private static final long serialVersionUID = 1L;
    final int number;
    final long max;

    LineTooLong(int number, long max) {
      super("line " + number + " is too long", null);
      this.number = number;
      this.max = max;
    }
  }
}
