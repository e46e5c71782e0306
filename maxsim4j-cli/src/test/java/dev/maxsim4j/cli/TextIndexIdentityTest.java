package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file is told apart by more than its size and modification time, which a swap by rename or a link pointed
 * elsewhere both keep; and an index folder that is a link, through which an update would delete another folder's
 * files, is neither written (index refuses) nor read (search goes on from the files).
 */
class TextIndexIdentityTest {
  @TempDir Path dir;

  private static final FileTime SAME = FileTime.fromMillis(1_704_067_200_000L);

  /** Two texts of one size, written with one modification time. */
  private static Path volcanoes(Path file) throws IOException {
    return Files.setLastModifiedTime(Files.writeString(file, "Volcanoes erupt hot lava and ash.\n"), SAME);
  }

  private static Path pianos(Path file) throws IOException {
    return Files.setLastModifiedTime(Files.writeString(file, "Pianos have black and white keys.\n"), SAME);
  }

  private static String topFile(Path folder, String query) {
    CliRun search = CliRun.of("search", "--dir", folder.toString(), "--query", query, "--k", "1", "--exact");
    assertEquals(0, search.status(), search.err());
    return search.out();
  }

  @Test
  void filesSwappedByRenameAreEncodedAgain() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("swap"));
    Path a = volcanoes(folder.resolve("a.txt"));
    Path b = pianos(folder.resolve("b.txt"));
    assertEquals(0, CliRun.of("index", "--dir", folder.toString()).status());
    assertTrue(topFile(folder, "lava volcano").contains("a.txt:1"));
    Path t = folder.resolve("t");
    Files.move(a, t);
    Files.move(b, a);
    Files.move(t, b);
    assertEquals(List.of(SAME, SAME), List.of(Files.getLastModifiedTime(a), Files.getLastModifiedTime(b)));
    CliRun again = CliRun.of("index", "--dir", folder.toString());
    assertEquals(0, again.status(), again.err());
    String top = topFile(folder, "lava volcano");
    assertTrue(top.contains("b.txt:1") && top.contains("Volcanoes"), top);
  }

  @Test
  void aLinkPointedAtAnotherFileIsEncodedAgain() throws IOException {
    Path texts = Files.createDirectories(dir.resolve("texts"));
    Path v1 = pianos(texts.resolve("v1.md"));
    Path v2 = volcanoes(texts.resolve("v2.md"));
    Path folder = Files.createDirectories(dir.resolve("linked"));
    Path current = Files.createSymbolicLink(folder.resolve("current.txt"), v1);
    Files.writeString(folder.resolve("other.txt"), "Rivers flow into the sea.\n");
    assertEquals(0, CliRun.of("index", "--dir", folder.toString()).status());
    Path next = folder.resolve("next.tmp");
    Files.createSymbolicLink(next, v2);
    Files.move(next, current, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    String top = topFile(folder, "volcano lava");
    assertTrue(top.contains("current.txt:1") && top.contains("Volcanoes"), top);
  }

  @Test
  void anIndexFolderThatIsALinkIsRefusedAndItsTargetKept() throws IOException {
    Path shared = Files.createDirectories(dir.resolve("shared"));
    Path mine = Files.writeString(shared.resolve("tokens.safetensors"), "a user's own file");
    Path old = Files.writeString(shared.resolve("tokens-old.tmp"), "keep");
    Files.setLastModifiedTime(old, FileTime.fromMillis(0));
    Files.createDirectories(shared.resolve("lucene"));
    Path notes = Files.writeString(shared.resolve("lucene").resolve("README.md"), "my notes");
    Path folder = Files.createDirectories(dir.resolve("docs"));
    Files.writeString(folder.resolve("a.txt"), "Rivers flow into the sea.\n");
    Path link = Files.createSymbolicLink(folder.resolve(".maxsim4j"), shared);
    CliRun.assertOneLineError(CliRun.of("index", "--dir", folder.toString()), 1,
        "cannot write the index in " + link + ": it is a symbolic link");
    CliRun search = CliRun.of("search", "--dir", folder.toString(), "--query", "rivers", "--k", "1");
    assertEquals(0, search.status(), search.err());
    assertTrue(search.err().contains("cannot save the index in " + link + " (it is a symbolic link"), search.err());
    assertTrue(search.out().contains("a.txt:1"), search.out());
    for (Path p : List.of(mine, old, notes)) {
      assertTrue(Files.exists(p), p + " was deleted through the link");
    }
  }
}
