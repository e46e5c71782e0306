package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file's key, the name indexes keep it by, is its bytes read as UTF-8: in a UTF-8 JVM the name as Java spells it,
 * whatever characters a URI escapes; a name whose bytes are not UTF-8 with \\x escapes; on a zip file system,
 * the name's text.
 */
class TextFilesKeyTest {
  @TempDir Path dir;

  @Test
  void aKeyIsTheNameUnderTheFolderAsJavaSpellsItInAUtf8Jvm() throws IOException {
    Assumptions.assumeTrue("UTF-8".equalsIgnoreCase(System.getProperty("sun.jnu.encoding")));
    Path folder = Files.createDirectories(dir.resolve("a folder%20 #x"));
    for (String name : new String[] {"a b%c#d?e.txt", "sub/na\u00efve \u20ac.md", "[x];=&+$,'~.txt",
        "deep/er/\ud83e\udda6 %25.txt"}) {
      Path file = folder.resolve(name);
      Files.createDirectories(file.getParent());
      Files.writeString(file, "otters");
      assertEquals(List.of(name), TextFiles.keys(folder, List.of(file), TextFilesKeyTest::none));
      assertEquals(List.of(name), TextFiles.keys(dir.relativize(folder), List.of(dir.relativize(file)),
          TextFilesKeyTest::none), "relative paths");
    }
  }

  /**
   * A name whose bytes are not UTF-8 is written as Python's backslashreplace writes it, in any JVM; where that is
   * another file's UTF-8 name (a backslash in it), the UTF-8 file keeps the name and the other has none.
   */
  @Test
  void aNameThatIsNotUtf8IsWrittenWithEscapes() throws IOException {
    // a path made from a URI holds its bytes as they are: 0xE9 alone is no UTF-8
    Path file = Path.of(URI.create(dir.toUri() + "caf%E9.txt"));
    Files.writeString(file, "bees");
    assertEquals(List.of("caf\\xe9.txt"), TextFiles.keys(dir, List.of(file), TextFilesKeyTest::none));
    Path twin = Files.writeString(dir.resolve("caf\\xe9.txt"), "moles");
    List<String> why = new ArrayList<>();
    assertEquals(Arrays.asList(null, "caf\\xe9.txt"), TextFiles.keys(dir, List.of(file, twin),
        (f, reason) -> why.add(f.getFileName() + ": " + reason)));
    assertEquals(1, why.size(), why.toString());
    assertTrue(why.get(0).contains("written with \\x escapes as caf\\xe9.txt, is another file's"), why.get(0));
  }

  /** On another file system than the default one (a zip file), a name is the path's own text. */
  @Test
  void aZipFileSystemsNamesAreTheirText() throws IOException {
    try (FileSystem zip = FileSystems.newFileSystem(dir.resolve("z.zip"), Map.of("create", "true"))) {
      Path folder = Files.createDirectories(zip.getPath("/notes"));
      Path file = Files.writeString(folder.resolve("na\u00efve.txt"), "otters");
      assertEquals(List.of("na\u00efve.txt"), TextFiles.keys(folder, List.of(file), TextFilesKeyTest::none));
    }
  }

  private static void none(Path file, String why) {
    throw new AssertionError(file + ": " + why);
  }
}
