package dev.maxsim4j.cli.text;

import dev.maxsim4j.cli.io.Absent;
import dev.maxsim4j.cli.io.GivenFiles;
import dev.maxsim4j.cli.io.PathArgument;
import dev.maxsim4j.cli.io.Printable;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.FileSystems;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * Where the text commands find their texts: one per line of a file, or one per file of a folder. Only UTF-8
 * text is read: a file (or line) that is not, or holds a NUL byte, or cannot be read, is skipped with a
 * warning that names it, so that one bad file never stops the work on the others.
 */
public final class TextFiles {
  /**
   * The largest file read, in bytes: 1/32 of the heap the JVM may grow to (reading a file whole and cutting it into
   * passages takes up to some 20 times its size: its bytes, its text, each word's place, its passages), and never
   * past a Java array's limit.
   */
  static long maxBytes() {
    return Math.min(Integer.MAX_VALUE - 8L, Runtime.getRuntime().maxMemory() / 32);
  }

  /** One non-blank line of a file, stripped, with its number (1 = first line of the file). */
  public record Line(int number, String text) {}

  private TextFiles() {}

  /**
   * The folder {@code option} names, checked before any work: one that is missing, a file or not a folder is refused
   * in one line naming the option (not just "no such file: notes").
   */
  public static Path folder(String option, String path) {
    Path p = PathArgument.of(option, path);
    if (Files.isRegularFile(p)) {
      throw new IllegalArgumentException(option + " " + shown(p) + " is a file; expected a folder of .txt/.md files");
    }
    if (!Files.exists(p)) {
      String why = Absent.why(p);
      throw new IllegalArgumentException(option + " " + shown(p) + ": " + (why.equals("no such file") ? "no such folder"
          : why) + "; expected a folder of .txt/.md files");
    }
    GivenFiles.given(option, p); // a folder that cannot be listed is named by its option too
    return p;
  }

  /** An entry a listing could not take: {@code what} names it as a warning would ("F", "the rest of D"). */
  public record Skip(Path path, String what, String reason) {}

  /**
   * The .txt and .md files found under a folder, sorted by path; the text-named entries that are no readable file;
   * and the entries (folders mostly) that could not be read, under which files may be missing.
   */
  public record Listing(List<Path> files, List<Skip> skippedFiles, List<Skip> unlisted) {
    /** How many entries the listing skipped, files and folders. */
    public int skipped() {
      return skippedFiles.size() + unlisted.size();
    }

    /** Names each skipped entry in a warning, as {@code skipped WHAT: REASON}. */
    public void warnSkipped(Warnings warnings) {
      List<Skip> all = new ArrayList<>(skippedFiles);
      all.addAll(unlisted);
      all.sort(Comparator.comparing(Skip::path));
      all.forEach(k -> warnings.warn("skipped " + k.what() + ": " + k.reason()));
    }
  }

  /**
   * The .txt and .md files under {@code folder} (recursively, not the index folder nor links into it, not following
   * links to folders below it; {@code folder} itself may be one), sorted by path. What cannot be taken is returned
   * beside them, for the caller to name.
   */
  public static Listing under(Path folder) throws IOException {
    if (Files.isRegularFile(folder)) {
      throw new IllegalArgumentException(folder + " is a file; expected a folder of .txt/.md files");
    }
    if (!Files.isDirectory(folder)) {
      if (Files.exists(folder)) {
        throw new IllegalArgumentException(shown(folder) + " is not a folder (a pipe, device or socket); expected a"
            + " folder of .txt/.md files");
      }
      throw new NoSuchFileException(folder.toString());
    }
    // a link given as the folder is followed (the walk would visit the link alone); its files keep the link's name
    Path root = Files.isSymbolicLink(folder) ? folder.toRealPath() : folder;
    UnaryOperator<Path> named = file -> root == folder ? file : folder.resolve(root.relativize(file));
    Path index = root.resolve(TextIndex.FOLDER);
    Path indexTarget = Files.isDirectory(index) ? index.toRealPath() : null;
    List<Path> out = new ArrayList<>();
    List<Skip> skippedFiles = new ArrayList<>();
    List<Skip> unlisted = new ArrayList<>();
    Files.walkFileTree(root, new SimpleFileVisitor<>() {
      @Override
      public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
        return dir.equals(index) ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
      }

      @Override
      public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
        // a link to a file counts as the file; a link to a folder is not followed, so links cannot loop
        if (isTextName(file)) {
          if (attrs.isSymbolicLink() && indexTarget != null && linksInto(file, indexTarget)) {
            // the index's own files would be indexed, and every update would change what it indexes
            skippedFiles.add(new Skip(named.apply(file), shown(named.apply(file)), "a link into the index folder "
                + TextIndex.FOLDER));
          } else if (attrs.isRegularFile() || attrs.isSymbolicLink() && Files.isRegularFile(file)) {
            out.add(named.apply(file));
          } else if (!attrs.isDirectory() && !(attrs.isSymbolicLink() && Files.isDirectory(file))) {
            // a pipe or device would block or never end, a broken or looping link has nothing to read (a link to a
            // folder is not followed, by design, whatever its name)
            skippedFiles.add(new Skip(named.apply(file), shown(named.apply(file)), attrs.isSymbolicLink()
                ? "a link to no readable file" : "not a regular file"));
          }
        }
        return FileVisitResult.CONTINUE;
      }

      @Override
      public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
        if (file.equals(root)) {
          throw e;
        }
        if (file.equals(index)) {
          return FileVisitResult.CONTINUE; // the index folder is never listed, readable or not
        }
        // a folder that cannot be opened comes here, whatever its name: files under it are missing; a text file
        // that cannot be looked at is one file skipped
        boolean folderOrUnknown = Files.isDirectory(file, LinkOption.NOFOLLOW_LINKS) || !isTextName(file);
        (folderOrUnknown ? unlisted : skippedFiles).add(new Skip(named.apply(file), shown(named.apply(file)),
            reason(e)));
        return FileVisitResult.CONTINUE;
      }

      @Override
      public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
        if (e != null) {
          if (dir.equals(root)) {
            throw e;
          }
          unlisted.add(new Skip(named.apply(dir), "the rest of " + shown(named.apply(dir)), reason(e)));
        }
        return FileVisitResult.CONTINUE;
      }
    });
    out.sort(null);
    skippedFiles.sort(Comparator.comparing(Skip::path));
    return new Listing(out, skippedFiles, unlisted);
  }

  private static boolean linksInto(Path link, Path folder) {
    try {
      return link.toRealPath().startsWith(folder);
    } catch (IOException | RuntimeException e) {
      return false; // a broken or looping link: the listing names it as such
    }
  }

  private static boolean isTextName(Path file) {
    String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
    return name.endsWith(".txt") || name.endsWith(".md");
  }

  /**
   * The non-blank lines of the text file given as {@code option}, stripped (see {@link #requireTextFile}). A line
   * that is not UTF-8 text is skipped with a warning naming the file and the line.
   */
  public static List<Line> lines(String option, Path file, Warnings warnings) throws IOException {
    return lines(option, file, warnings, false);
  }

  /**
   * As {@link #lines(String, Path, Warnings)}; where {@code keepUnreadable}, a line that is not UTF-8 text is kept
   * with a null text (so that rows keep following the non-blank lines), with a warning saying so.
   */
  public static List<Line> lines(String option, Path file, Warnings warnings, boolean keepUnreadable)
      throws IOException {
    requireTextFile(option, file);
    String tooLarge = tooLarge(Files.size(file));
    if (tooLarge != null) {
      throw new IllegalArgumentException(option + " " + shown(file) + " " + tooLarge);
    }
    byte[] bytes;
    try {
      bytes = readAll(file);
    } catch (IllegalArgumentException e) { // replaced since it was checked
      throw new IllegalArgumentException(option + " " + shown(file) + ": " + e.getMessage());
    }
    List<Line> out = new ArrayList<>();
    int number = 1;
    for (int start = 0; start < bytes.length; number++) {
      // lines end at \n, \r\n or a lone \r, as Java's readers count them
      int end = start;
      while (end < bytes.length && bytes[end] != '\n' && bytes[end] != '\r') {
        end++;
      }
      int next = end + (end + 1 < bytes.length && bytes[end] == '\r' && bytes[end + 1] == '\n' ? 2 : 1);
      try {
        String line = decode(bytes, start, end, number == 1);
        if (!blank(line)) {
          out.add(new Line(number, strip(line)));
        }
      } catch (NotText e) {
        if (keepUnreadable) {
          warnings.warn("line " + number + " of " + shown(file) + ": " + e.getMessage() + "; " + NO_TOKEN);
          out.add(new Line(number, null));
        } else {
          warnings.warn("skipped line " + number + " of " + shown(file) + ": " + e.getMessage());
        }
      }
      start = next;
    }
    return out;
  }

  /** The text of a file; a file that is not UTF-8 text or cannot be read is empty, with a warning naming it. */
  public static Optional<String> readOrWarn(Path file, String shownName, Warnings warnings) {
    return readOr(file, warnings, why -> "skipped " + shownName + ": " + why);
  }

  /** The text of a file, or empty with the warning {@code warning} makes of why it could not be read. */
  private static Optional<String> readOr(Path file, Warnings warnings, Function<String, String> warning) {
    try {
      return Optional.of(read(file));
    } catch (NotText e) {
      warnings.warn(warning.apply(e.getMessage()));
    } catch (IOException e) {
      warnings.warn(warning.apply(reason(e)));
    } catch (IllegalArgumentException e) {
      warnings.warn(warning.apply(e.getMessage()));
    }
    return Optional.empty();
  }

  /** What becomes of a text that cannot be read, or holds no word piece, where rows must follow the inputs. */
  public static final String NO_TOKEN = "written as a row of no token (as a document it scores -1e9)";

  /**
   * The text of a file; a file that is not UTF-8 text or cannot be read is empty, with a warning saying that it is
   * {@link #NO_TOKEN}.
   */
  public static Optional<String> readOrNoToken(Path file, String shownName, Warnings warnings) {
    return readOr(file, warnings, why -> shownName + ": " + why + "; " + NO_TOKEN);
  }

  /** The text of a file, or empty when it is not UTF-8 text or cannot be read (now). */
  public static Optional<String> tryRead(Path file) {
    try {
      return Optional.of(read(file));
    } catch (NotText | IOException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  private static String read(Path file) throws IOException, NotText {
    byte[] bytes = readAll(file);
    return decode(bytes, 0, bytes.length, true);
  }

  /**
   * Checks the text file given as {@code option}: it exists and is a regular file (or a link to one). A folder is
   * named as such; a pipe, device or socket is refused, since the file is read whole and such a one would block
   * until a writer comes or never end.
   */
  public static void requireTextFile(String option, Path file) {
    requireRegularFile(option, file, "a text file with one text per line");
    GivenFiles.given(option, file);
  }

  /**
   * Checks a file given as {@code option} that is read whole: it exists and is a regular file (or a link to one),
   * else a one-line refusal saying why ("no such file", "is a folder") and what was {@code expected}.
   */
  public static void requireRegularFile(String option, Path file, String what) {
    String expected = "; expected " + what;
    if (Files.isDirectory(file)) {
      throw new IllegalArgumentException(option + " " + shown(file) + " is a folder" + expected);
    }
    if (!Files.exists(file)) {
      throw new IllegalArgumentException(option + " " + shown(file) + (Files.isSymbolicLink(file)
          ? " is a link to no readable file" : ": " + Absent.why(file)) + expected);
    }
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException(option + " " + shown(file) + " is not a regular file (a pipe, device or"
          + " socket)" + expected);
    }
  }

  /** The file's bytes; why not, as "it ...", where it is no longer a regular file or is past the bound. */
  private static byte[] readAll(Path file) throws IOException {
    if (!Files.isRegularFile(file)) {
      if (!Files.exists(file)) {
        throw new NoSuchFileException(file.toString()); // deleted since it was listed
      }
      // a file listed as regular may have been replaced by a pipe or device since: it would block or never end
      throw new IllegalArgumentException("it is not a regular file (a pipe, device or socket)");
    }
    // a file past the bound is skipped (or, given as the one file, refused) by name, with its size and the bound,
    // rather than read whole and ending the run out of memory
    String tooLarge = tooLarge(Files.size(file));
    if (tooLarge != null) {
      throw new IllegalArgumentException("it " + tooLarge);
    }
    return Files.readAllBytes(file);
  }

  /** Why a file of {@code size} bytes is not read ("holds N bytes; expected at most ..."), or null if it is read. */
  private static String tooLarge(long size) {
    long max = maxBytes();
    return size <= max ? null : "holds " + size + " bytes; expected at most " + max + " bytes (1/32 of the maximum"
        + " heap; a larger heap, e.g. JAVA_OPTS=-Xmx8g, reads larger files)";
  }

  /** Strict UTF-8 (a leading byte-order mark dropped); a NUL byte or a malformed sequence is a NotText. */
  private static String decode(byte[] bytes, int from, int to, boolean atStart) throws NotText {
    int mark = atStart && to - from >= 2 ? (bytes[from] & 0xff) << 8 | bytes[from + 1] & 0xff : 0;
    if (mark == 0xfffe || mark == 0xfeff) { // UTF-16's byte-order mark, either way round: text, but not UTF-8
      throw new NotText("UTF-16 text (it starts with UTF-16's byte-order mark); expected UTF-8");
    }
    for (int i = from; i < to; i++) {
      if (bytes[i] == 0) {
        throw new NotText("binary, not text (a NUL byte at offset " + i + ")");
      }
    }
    CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
    ByteBuffer in = ByteBuffer.wrap(bytes, from, to - from);
    CharBuffer out = CharBuffer.allocate(to - from);
    CoderResult result = decoder.decode(in, out, true);
    if (!result.isUnderflow()) {
      throw new NotText("not UTF-8 text (an invalid byte sequence at offset " + in.position() + ")");
    }
    decoder.flush(out);
    out.flip();
    String text = out.toString();
    return atStart && text.startsWith("\uFEFF") ? text.substring(1) : text;
  }

  /**
   * What tells file {@code f} (its links followed) apart beyond its size and modification time: its inode and its
   * status-change time, which a rename over it, a link pointed at another file or a write that sets its time back
   * change (the time alone can be the same for files made in one clock tick), and which mounting the same files again
   * (a container restarted, a disk moved) keeps, where a device number may not. Empty where the file system does not
   * tell them.
   */
  static String identity(Path f) {
    try {
      long inode = ((Number) Files.getAttribute(f, "unix:ino")).longValue();
      long changed = ((FileTime) Files.getAttribute(f, "unix:ctime")).to(TimeUnit.NANOSECONDS);
      return inode + ":" + changed;
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException
        | SecurityException e) {
      return "";
    }
  }

  /** A file's name for a message, escaped so that it stays on one line. */
  public static String shown(Path file) {
    return Names.escape(file.toString());
  }

  /** Why an I/O operation failed, in a few words, without the exception's class name. */
  public static String reason(IOException e) {
    if (e instanceof AccessDeniedException) {
      return "permission denied";
    }
    if (e instanceof NoSuchFileException) {
      return "it no longer exists";
    }
    if (e instanceof FileAlreadyExistsException) {
      return "something that is not a folder is in the way";
    }
    if (e instanceof FileSystemException f && f.getReason() != null) {
      return f.getReason();
    }
    if (e instanceof CharacterCodingException) { // its own message is only "Input length = 1"
      return "it is not UTF-8 text";
    }
    return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
  }

  /** The first {@code max} characters of a text on one line, for listings. */
  public static String snippet(String text, int max) {
    // control, line-separator and direction characters could rewrite the terminal line; spaces are folded anyway
    String flat = Printable.oneLine(text.strip().replaceAll("\\s+", " "));
    return Printable.cut(flat, max);
  }

  /** A text that cannot be read as UTF-8 text; the message says why. */
  private static final class NotText extends Exception {
    NotText(String why) {
      super(why, null, false, false);
    }
  }

  /**
   * Whether {@code line} holds only white space as Python's {@code str.isspace} has it, no-break spaces and NEL
   * included (Java's isBlank keeps them), so that row i of a file's lines is the i-th line that Python's
   * {@code [l for l in f if l.strip()]} keeps.
   */
  public static boolean blank(String line) {
    return line.codePoints().allMatch(TextFiles::isSpace);
  }

  /** {@code line} without the white space {@link #blank} counts at either end, as Python's str.strip(). */
  static String strip(String line) {
    int start = 0;
    int end = line.length();
    while (start < end && isSpace(line.charAt(start))) {
      start++;
    }
    while (end > start && isSpace(line.charAt(end - 1))) {
      end--;
    }
    return line.substring(start, end);
  }

  private static boolean isSpace(int c) {
    return Character.isWhitespace(c) || Character.isSpaceChar(c) || c == 0x85;
  }

  /** Why a file that has no {@link #keys key} is skipped. */
  static final String NAME_NOT_ENCODED = "its name is neither UTF-8 nor valid in this locale's encoding ("
      + System.getProperty("sun.jnu.encoding") + "); rename it";

  /**
   * The names under {@code folder} that indexes and maps of files keep {@code files} by, in their order (null where a
   * file has none, which is given to {@code nameless} with the reason): where the file system names files by bytes
   * separated by '/' (the default one on Linux and macOS), a name's bytes read as UTF-8, whatever this locale's
   * encoding, and bytes that are not UTF-8 written as Python's backslashreplace writes them ({@code \xe9}), so that
   * runs under every locale (the C locale reads a non-ASCII name as U+FFFD, Latin-1 as other letters) keep one
   * index; elsewhere (a zip file system, Windows) the name as this JVM reads it. A name written so that equals
   * another file's UTF-8 name is left without one: the UTF-8 file keeps it.
   */
  static List<String> keys(Path folder, List<Path> files, BiConsumer<Path, String> nameless) {
    List<Name> names = new ArrayList<>(files.size());
    Set<String> utf8 = new HashSet<>();
    for (Path file : files) {
      Name name = byteName(folder, file);
      if (name == null) {
        String rel = folder.relativize(file).toString();
        name = roundTrips(folder, rel, file) ? new Name(rel, false) : null;
      }
      names.add(name);
      if (name == null) {
        nameless.accept(file, NAME_NOT_ENCODED);
      } else if (!name.escaped()) {
        utf8.add(name.text());
      }
    }
    List<String> keys = new ArrayList<>(files.size());
    for (int i = 0; i < files.size(); i++) {
      Name name = names.get(i);
      if (name != null && name.escaped() && utf8.contains(name.text())) {
        nameless.accept(files.get(i), "its name, which is not UTF-8, written with \\x escapes as " + name.text()
            + ", is another file's; rename it");
        name = null;
      }
      keys.add(name == null ? null : name.text());
    }
    return keys;
  }

  /** A file's name as text: its UTF-8 bytes read, or with {@code escaped} bytes that are not UTF-8 as \xNN. */
  private record Name(String text, boolean escaped) {}

  /**
   * {@code file}'s name under {@code folder} from its bytes: read as UTF-8, bytes that are not UTF-8 written as
   * {@code \xNN}; null where the bytes are not to be had. They come from the path's URI, which on the default file
   * system of a system that separates names by '/' escapes each byte that is not ASCII; elsewhere (a zip file
   * system, Windows) this gives null.
   */
  private static Name byteName(Path folder, Path file) {
    if (folder.getFileSystem() != FileSystems.getDefault() || File.separatorChar != '/') {
      return null;
    }
    String base = folder.toUri().getRawPath();
    String raw = file.toUri().getRawPath();
    if (base == null || raw == null) {
      return null;
    }
    if (!base.endsWith("/")) {
      base += "/";
    }
    if (raw.endsWith("/")) { // a folder's URI ends with one
      raw = raw.substring(0, raw.length() - 1);
    }
    if (!raw.startsWith(base)) {
      return null;
    }
    ByteBuffer bytes = ByteBuffer.allocate(raw.length() - base.length());
    for (int i = base.length(); i < raw.length(); i++) {
      char c = raw.charAt(i);
      if (c > 0x7f) {
        return null; // a URI that holds the name as characters, not escaped bytes
      }
      bytes.put(c == '%' ? (byte) Integer.parseInt(raw, i + 1, (i += 2) + 1, 16) : (byte) c);
    }
    bytes.flip();
    CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT);
    CharBuffer out = CharBuffer.allocate(4 * bytes.remaining() + 1);
    boolean escaped = false;
    while (true) {
      CoderResult r = utf8.decode(bytes, out, true);
      if (r.isError()) {
        for (int k = 0; k < r.length(); k++) {
          out.put(String.format(Locale.ROOT, "\\x%02x", bytes.get() & 0xff));
        }
        escaped = true;
      } else if (r.isUnderflow()) {
        break;
      }
    }
    utf8.flush(out);
    return new Name(out.flip().toString(), escaped);
  }

  /**
   * Whether {@code file} is found again from its name under {@code folder} as a string ({@code rel}): not so for bytes
   * invalid in the file system's encoding, whose string holds U+FFFD and names no file (two such names may even read
   * alike).
   */
  private static boolean roundTrips(Path folder, String rel, Path file) {
    try {
      return folder.resolve(rel).equals(file);
    } catch (InvalidPathException e) {
      return false;
    }
  }
}
