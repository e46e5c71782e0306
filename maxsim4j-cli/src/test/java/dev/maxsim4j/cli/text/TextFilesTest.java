package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reading texts: strict UTF-8, line numbers as editors count them, bad lines named and skipped. */
class TextFilesTest {
  @TempDir Path dir;

  /**
   * A listing's snippet of a passage of emoji was cut through a surrogate pair: the lone half printed as '?'. It is
   * cut between whole characters, as every other quoted text is.
   */
  @Test
  void snippetsAreCutBetweenWholeCharacters() {
    String emoji = "\uD83D\uDE00";
    for (int lead = 0; lead < 4; lead++) {
      for (int max : new int[] {40, 70, 90}) {
        String text = "x".repeat(lead) + emoji.repeat(100);
        String shown = TextFiles.snippet(text, max);
        assertTrue(shown.endsWith("...") && shown.length() <= max, shown);
        String kept = shown.substring(0, shown.length() - 3);
        assertTrue(text.startsWith(kept) && !Character.isHighSurrogate(kept.charAt(kept.length() - 1)),
            "lead " + lead + ", max " + max + ": a lone surrogate was left in " + shown);
      }
    }
  }

  @Test
  void linesAreNumberedAcrossAllLineEndings() throws IOException {
    Path file = dir.resolve("lines.txt");
    byte[] bad = {'b', 'a', 'd', (byte) 0xc3, '\n'};
    byte[] head = "\uFEFFone\r\ntwo\rthree\n\n".getBytes(StandardCharsets.UTF_8);
    byte[] tail = "  six  \n".getBytes(StandardCharsets.UTF_8);
    byte[] all = new byte[head.length + bad.length + tail.length];
    System.arraycopy(head, 0, all, 0, head.length);
    System.arraycopy(bad, 0, all, head.length, bad.length);
    System.arraycopy(tail, 0, all, head.length + bad.length, tail.length);
    Files.write(file, all);
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    List<TextFiles.Line> lines = TextFiles.lines("--in", file,
        new Warnings(new PrintStream(err, true, StandardCharsets.UTF_8)));
    assertEquals(List.of(new TextFiles.Line(1, "one"), new TextFiles.Line(2, "two"), new TextFiles.Line(3, "three"),
        new TextFiles.Line(6, "six")), lines);
    String warning = err.toString(StandardCharsets.UTF_8);
    assertTrue(warning.startsWith("maxsim4j: warning: skipped line 5 of " + file + ": not UTF-8 text"), warning);
  }

  /**
   * A line of only white space as Python's str.isspace has it (no-break spaces, NEL) is blank, as for
   * {@code [l for l in f if l.strip()]}: row i is then the i-th line that Python keeps, stripped as Python strips it.
   * Found by a tester of Python interop: Java's isBlank kept such a line as a row of no token.
   */
  @Test
  void blankLinesAreThoseThatPythonStrips() throws IOException {
    Path file = Files.writeString(dir.resolve("nbsp.txt"), "alpha\n\u00a0\n\u2007\u202f\n\u0085\n \t\n\u00a0beta\u202f\n");
    List<TextFiles.Line> lines = TextFiles.lines("--in", file,
        new Warnings(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)));
    assertEquals(List.of(new TextFiles.Line(1, "alpha"), new TextFiles.Line(6, "beta")), lines);
  }

  /**
   * Entries with a text name that are no regular file (a pipe, a link to nothing) are skipped and named; a link to a
   * folder is not followed, without a word, whatever its name.
   */
  @Test
  void entriesThatAreNoRegularFileAreNamed() throws Exception {
    Files.writeString(dir.resolve("a.txt"), "text");
    Path pipe = dir.resolve("pipe.txt");
    Path loop = dir.resolve("loop.md");
    Path broken = dir.resolve("broken.txt");
    Files.createSymbolicLink(loop, loop);
    Files.createSymbolicLink(broken, dir.resolve("missing"));
    Path folderLink = dir.resolve("folder.txt");
    Files.createSymbolicLink(folderLink, Files.createDirectory(dir.resolve("sub")));
    boolean pipes = new ProcessBuilder("mkfifo", pipe.toString()).start().waitFor() == 0;
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    Warnings warnings = new Warnings(new PrintStream(err, true, StandardCharsets.UTF_8));
    TextFiles.Listing listing = TextFiles.under(dir);
    listing.warnSkipped(warnings);
    assertEquals(List.of(dir.resolve("a.txt")), listing.files());
    // each named one counted, so that index's summary of skipped files agrees with its warnings
    assertEquals(pipes ? 3 : 2, listing.skipped());
    String text = err.toString(StandardCharsets.UTF_8);
    assertTrue(text.contains("skipped " + loop + ": a link to no readable file"), text);
    assertTrue(text.contains("skipped " + broken + ": a link to no readable file"), text);
    assertTrue(!pipes || text.contains("skipped " + pipe + ": not a regular file"), text);
    assertTrue(!text.contains(folderLink.toString()), "a link to a folder is not followed, silently: " + text);
  }

  /** A file gone or replaced between its listing and its reading is named once, with why. */
  @Test
  void aFileGoneOrReplacedSinceItsListingIsNamedOnceWithWhy() throws IOException, InterruptedException {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    Warnings warnings = new Warnings(new PrintStream(err, true, StandardCharsets.UTF_8));
    assertTrue(TextFiles.readOrNoToken(dir.resolve("gone.txt"), "gone.txt", warnings).isEmpty());
    assertEquals("maxsim4j: warning: gone.txt: it no longer exists; " + TextFiles.NO_TOKEN + "\n",
        err.toString(StandardCharsets.UTF_8));
    Path pipe = dir.resolve("pipe.txt");
    if (new ProcessBuilder("mkfifo", pipe.toString()).start().waitFor() == 0) {
      err.reset();
      assertTrue(TextFiles.readOrNoToken(pipe, "pipe.txt", warnings).isEmpty());
      assertEquals("maxsim4j: warning: pipe.txt: it is not a regular file (a pipe, device or socket); "
          + TextFiles.NO_TOKEN + "\n", err.toString(StandardCharsets.UTF_8));
    }
  }

  @Test
  void manyWarningsAreCounted() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    Warnings warnings = new Warnings(new PrintStream(err, true, StandardCharsets.UTF_8));
    for (int i = 0; i < 50; i++) {
      warnings.warn("w" + i);
    }
    warnings.finish();
    String text = err.toString(StandardCharsets.UTF_8);
    assertEquals(21, text.lines().count(), text);
    assertTrue(text.endsWith("maxsim4j: warning: 30 more warnings not shown\n"), text);
    err.reset();
    Warnings one = new Warnings(new PrintStream(err, true, StandardCharsets.UTF_8));
    for (int i = 0; i < 21; i++) {
      one.warn("w" + i);
    }
    one.finish();
    assertTrue(err.toString(StandardCharsets.UTF_8).endsWith("maxsim4j: warning: 1 more warning not shown\n"));
    // the next stage (texts of no word piece, after the reading's) names its own first ones
    err.reset();
    one.warn("line 3 holds no word piece");
    one.finish();
    assertEquals("maxsim4j: warning: line 3 holds no word piece\n", err.toString(StandardCharsets.UTF_8));
  }

  /**
   * A folder given as a symbolic link (notes kept behind one) is listed: the walk visited the link alone and found
   * "no .txt or .md file". Its files keep the link's name; links to folders below it are still not followed.
   */
  @Test
  void aFolderGivenAsALinkIsListedUnderTheLinksName() throws IOException {
    Path notes = Files.createDirectories(dir.resolve("notes"));
    Files.writeString(notes.resolve("a.txt"), "a");
    Files.createDirectories(notes.resolve("sub"));
    Files.writeString(notes.resolve("sub").resolve("b.md"), "b");
    Files.createSymbolicLink(notes.resolve("back"), notes);
    Path link = Files.createSymbolicLink(dir.resolve("link"), notes);
    assertEquals(List.of(link.resolve("a.txt"), link.resolve("sub").resolve("b.md")), TextFiles.under(link).files());
    assertEquals(TextFiles.under(notes).files().size(), TextFiles.under(link).files().size());
  }

  /** A UTF-16 file is named as such, not as binary for the NUL bytes of its ASCII letters. */
  @Test
  void aUtf16FileIsNamedAsUtf16() throws IOException {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    Warnings warnings = new Warnings(new PrintStream(err, true, StandardCharsets.UTF_8));
    for (String charset : new String[] {"UTF-16LE", "UTF-16BE"}) {
      Path file = dir.resolve(charset + ".txt");
      Files.write(file, ("\ufeffhello").getBytes(java.nio.charset.Charset.forName(charset)));
      assertTrue(TextFiles.readOrWarn(file, file.toString(), warnings).isEmpty(), charset);
    }
    warnings.finish();
    String text = err.toString(StandardCharsets.UTF_8);
    assertTrue(text.contains("UTF-16LE.txt: UTF-16 text (it starts with UTF-16's byte-order mark); expected UTF-8"),
        text);
    assertTrue(text.contains("UTF-16BE.txt: UTF-16 text"), text);
  }
}
