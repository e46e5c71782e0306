package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file's key, the name indexes keep it by, is its bytes read as UTF-8: in a UTF-8 JVM the name as Java spells it,
 * whatever characters a URI escapes; a name whose bytes are not UTF-8 has none there.
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
      assertEquals(name, TextFiles.key(folder, file));
      assertEquals(name, TextFiles.key(dir.relativize(folder), dir.relativize(file)), "relative paths");
    }
  }

  @Test
  void aNameThatIsNotUtf8HasNoKeyInAUtf8Jvm() throws IOException {
    Assumptions.assumeTrue("UTF-8".equalsIgnoreCase(System.getProperty("sun.jnu.encoding")));
    // a path made from a URI holds its bytes as they are: 0xE9 alone is no UTF-8
    Path file = Path.of(URI.create(dir.toUri() + "caf%E9.txt"));
    Files.writeString(file, "bees");
    assertNull(TextFiles.key(dir, file));
  }
}
