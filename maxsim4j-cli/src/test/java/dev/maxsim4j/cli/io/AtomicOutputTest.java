package dev.maxsim4j.cli.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The one way outputs reach their place: complete, on disk, in one step, and nothing left beside them. */
class AtomicOutputTest {
  @TempDir Path dir;

  @Test
  void aCommittedOutputReplacesTheOldFileWithItsPermissionsAndLeavesNoTemporaryFile() throws IOException {
    Path target = Files.writeString(dir.resolve("out.txt"), "old");
    Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-r-----"));
    try (AtomicOutput output = AtomicOutput.create("--out", target, List.of())) {
      output.write(file -> Files.writeString(file, "new"));
      output.commit();
    }
    assertEquals("new", Files.readString(target));
    assertEquals("rw-r-----", PosixFilePermissions.toString(Files.getPosixFilePermissions(target)));
    try (var left = Files.list(dir)) {
      assertEquals(List.of(target), left.toList());
    }
  }

  /**
   * The temporary file is its owner's alone while it is written (it was readable by all while a private target's new
   * content was written), the output has the permissions and group of the file it replaces (a shared group lost its
   * own file when another member replaced it; where the group cannot be kept, its permissions go), and a new target
   * those of a new file here.
   */
  @Test
  void theTemporaryFileIsPrivateAndTheOutputKeepsItsPermissionsAndGroup() throws IOException {
    Path target = Files.writeString(dir.resolve("shared.txt"), "old");
    Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-r-----"));
    java.nio.file.attribute.GroupPrincipal other = null;
    for (String name : new String[] {"daemon", "nogroup", "users", "bin"}) {
      try {
        other = dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByGroupName(name);
        Files.getFileAttributeView(target, java.nio.file.attribute.PosixFileAttributeView.class).setGroup(other);
        break;
      } catch (IOException notHere) {
        other = null;
      }
    }
    try (AtomicOutput output = AtomicOutput.create("--out", target, List.of())) {
      output.write(file -> {
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        Files.writeString(file, "new");
      });
      output.commit();
    }
    assertEquals("new", Files.readString(target));
    assertEquals("rw-r-----", PosixFilePermissions.toString(Files.getPosixFilePermissions(target)));
    if (other != null) {
      assertEquals(other, Files.readAttributes(target, java.nio.file.attribute.PosixFileAttributes.class).group());
    }
    Path fresh = dir.resolve("fresh.txt");
    Path plain = Files.createFile(dir.resolve("plain.txt"));
    try (AtomicOutput output = AtomicOutput.create("--out", fresh, List.of())) {
      output.write(file -> Files.writeString(file, "new"));
      output.commit();
    }
    assertEquals(Files.getPosixFilePermissions(plain), Files.getPosixFilePermissions(fresh));
  }

  /** A folder past the system's path length is named as such: it read "does not exist", though it might. */
  @Test
  void aFolderPastThePathLimitIsNamedSo() {
    Path deep = dir;
    for (int i = 0; i < 25; i++) {
      deep = deep.resolve("d".repeat(200));
    }
    Path target = deep.resolve("s.npy");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> AtomicOutput.create("--out", target, List.of()));
    assertTrue(e.getMessage().endsWith(" cannot be reached (file name too long); expected a file in an existing"
        + " folder"), e.getMessage());
  }

  /**
   * A temporary file replaced by a link while the run works (by a user who may write the folder) is neither written
   * through nor moved into place, and what the link names keeps its content, owner and permissions: the writers
   * reopened the file by name and wrote through the link (as root, over any file), and its owner and permissions were
   * set through it.
   */
  @Test
  void aTemporaryFileReplacedByALinkIsRefusedAndWhatItNamesUntouched() throws IOException {
    Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self/fd")), "a /proc to write through the descriptor");
    Path target = Files.writeString(dir.resolve("out.txt"), "old");
    Path victim = Files.writeString(dir.resolve("victim.txt"), "secret");
    Files.setPosixFilePermissions(victim, PosixFilePermissions.fromString("rw-------"));
    Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-rw-rw-"));
    try (AtomicOutput output = AtomicOutput.create("--out", target, List.of())) {
      Files.delete(output.temp());
      Files.createSymbolicLink(output.temp(), victim);
      output.write(file -> Files.writeString(file, "new"));
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, output::commit);
      assertTrue(e.getMessage().contains("was replaced during the run"), e.getMessage());
    }
    assertEquals("old", Files.readString(target));
    assertEquals("secret", Files.readString(victim));
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(victim)));
  }

  /**
   * A link to another file planted under an output's name, in a folder every user may write with its sticky bit (as
   * /tmp), by another user, is not followed, as the system itself would not: a run (as root, say) replaced the file
   * it named.
   */
  @Test
  void anotherUsersLinkInAStickyFolderIsNotFollowed() throws Exception {
    Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "root, to give a link to another user");
    Path sticky = Files.createDirectory(dir.resolve("sticky"));
    Files.setPosixFilePermissions(sticky, PosixFilePermissions.fromString("rwxrwxrwx"));
    Files.setAttribute(sticky, "unix:mode", 01777);
    Path victim = Files.writeString(dir.resolve("victim.txt"), "secret");
    Path link = Files.createSymbolicLink(sticky.resolve("out.txt"), victim);
    var nobody = dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
    Files.getFileAttributeView(link, java.nio.file.attribute.PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
        .setOwner(nobody);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> AtomicOutput.create("--out", link, List.of()));
    assertTrue(e.getMessage().contains("is another user's link"), e.getMessage());
    assertEquals("secret", Files.readString(victim));
  }

  /** A writer's refusal names the output, not the descriptor it was given to write through. */
  @Test
  void aWritersRefusalNamesTheOutput() throws IOException {
    Path target = dir.resolve("out.npy");
    try (AtomicOutput output = AtomicOutput.create("--out", target, List.of())) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> output.write(file -> {
        throw new IllegalArgumentException(file + " holds 3 values; expected 4");
      }));
      assertEquals("--out " + target + " holds 3 values; expected 4", e.getMessage());
    }
  }

  /** A move into place that fails names the target and keeps the old file: it named the temporary file alone. */
  @Test
  void aFailedMoveIntoPlaceNamesTheTarget() throws IOException {
    Path target = Files.writeString(dir.resolve("out.txt"), "old");
    Path moved = dir.resolve("moved.txt");
    try (AtomicOutput output = AtomicOutput.create("--out", target, List.of())) {
      output.write(file -> {
        Files.writeString(file, "new");
        // the target turned into a folder that is not empty while the run worked: no file replaces it
        Files.move(target, moved);
        Files.createDirectories(target.resolve("inside"));
      });
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, output::commit);
      assertTrue(e.getMessage().startsWith("--out " + target + " cannot be replaced (")
          && e.getMessage().endsWith("); the previous file, if any, is kept"), e.getMessage());
    }
    try (var left = Files.list(dir)) {
      assertEquals(Set.of(target, moved), Set.copyOf(left.toList()), "no temporary file left");
    }
  }

  /**
   * A process's open file named through /proc (as /dev/stdout names a redirected stdout) is refused and kept: moving
   * a new file onto the name replaced what the process had written there, and dropped what it wrote next.
   */
  @Test
  void aFileAProcessHoldsOpenNamedThroughProcIsRefusedAndKept() throws IOException {
    Path file = dir.resolve("stdout.txt");
    Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self/fd")), "no /proc/self/fd");
    try (var held = Files.newOutputStream(file)) {
      held.write("the table".getBytes(StandardCharsets.UTF_8));
      held.flush();
      Path descriptor = null;
      try (var fds = Files.list(Path.of("/proc/self/fd"))) {
        for (Path fd : fds.toList()) {
          try {
            if (Files.readSymbolicLink(fd).equals(file.toRealPath())) {
              descriptor = fd;
            }
          } catch (IOException gone) {
            // the listing's own descriptor, closed by now
          }
        }
      }
      Assumptions.assumeTrue(descriptor != null, "the open file's descriptor not found");
      Path link = Files.createSymbolicLink(dir.resolve("out.json"), descriptor);
      Path fdFolder = Files.createSymbolicLink(dir.resolve("fd"), descriptor.getParent());
      List<Path> targets =
          new java.util.ArrayList<>(List.of(descriptor, link, fdFolder.resolve(descriptor.getFileName())));
      if (Files.isDirectory(Path.of("/dev/fd"))) {
        targets.add(Path.of("/dev/fd").resolve(descriptor.getFileName()));
      }
      for (Path target : targets) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> AtomicOutput.writeString("--json", target, List.of(), "{}"));
        assertTrue(e.getMessage().startsWith("--json " + target + " is a file a process holds open"), e.getMessage());
      }
    }
    assertEquals("the table", Files.readString(file));
  }

  @Test
  void aReadOnlyTargetThisUserMayWriteIsReplacedAndStaysReadOnly() throws IOException {
    // root may write it; the temporary file is forced before it takes the read-only permissions (a force after
    // them could not open it for writing where the mode is enforced)
    Path target = Files.writeString(dir.resolve("ro.txt"), "old");
    Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("r--r--r--"));
    Assumptions.assumeTrue(Files.isWritable(target), "only root may write a read-only file");
    try (AtomicOutput output = AtomicOutput.create("--out", target, List.of())) {
      output.write(file -> Files.writeString(file, "new"));
      output.commit();
    }
    assertEquals("new", Files.readString(target));
    assertEquals("r--r--r--", PosixFilePermissions.toString(Files.getPosixFilePermissions(target)));
  }

  @Test
  void aTargetThisUserMayNotWriteIsRefusedAndKept() throws IOException {
    // a move into place needs only the folder's permission: it would replace a file its owner write-protected
    Path target = Files.writeString(dir.resolve("protected.txt"), "old");
    Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("r--r--r--"));
    Assumptions.assumeFalse(Files.isWritable(target), "root may write a read-only file");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> AtomicOutput.create("--out", target, List.of()));
    assertTrue(e.getMessage().contains("--out " + target + " is read-only for this user"), e.getMessage());
    assertEquals("old", Files.readString(target));
  }

  @Test
  void aFailedMoveKeepsTheTargetAndTheCloseRemovesTheTemporaryFile() throws IOException {
    Path target = Files.createDirectories(dir.resolve("busy"));
    Files.writeString(target.resolve("inside"), "kept");
    Path temp;
    try (AtomicOutput output = AtomicOutput.create("--out", dir.resolve("other"), List.of())) {
      temp = output.temp();
      Files.writeString(temp, "new");
      // a folder that is not empty cannot be replaced: the move fails after the force, and nothing is lost
      assertThrows(IOException.class, () -> AtomicOutput.moveIntoPlace(temp, target));
    }
    assertFalse(Files.exists(temp), "the temporary file is removed");
    assertEquals("kept", Files.readString(target.resolve("inside")));
  }

  /**
   * kill -9 during a write left {@code .maxsim4j-*.tmp} files beside the output for good (found by a hostile test).
   * The next write of the same output removes a killed run's temporary and lock files, and nothing else: not those
   * a live process holds the lock of (here another JVM), not another output's, not a lock file made a moment ago
   * (its owner may not have locked it yet), not names of another pattern.
   */
  @Test
  void theTemporaryFilesOfKilledRunsAreRemovedAndNoLiveOnes() throws Exception {
    Path target = dir.resolve("out.npy");
    String tag = AtomicOutput.tag("out.npy");
    String other = AtomicOutput.tag("other.npy");
    List<String> dead = List.of(".maxsim4j-" + tag + "-0123456789abcdef.tmp",
        ".maxsim4j-" + tag + "-0123456789abcdef.lock", ".maxsim4j-" + tag + "-1111111111111111.tmp",
        ".maxsim4j-" + tag + "-2222222222222222.lock");
    List<String> kept = List.of(".maxsim4j-" + tag + "-3333333333333333.lock", ".maxsim4j-" + other
        + "-4444444444444444.tmp", ".maxsim4j-5555555555555555.tmp", ".maxsim4j-" + tag + "-6666666666666666.tmp",
        ".maxsim4j-" + tag + "-6666666666666666.lock", ".maxsim4j-" + tag + "-777.tmp", "notes.tmp");
    for (String name : dead) {
      Files.writeString(dir.resolve(name), "partial");
    }
    for (String name : kept) {
      Files.writeString(dir.resolve(name), "partial");
    }
    // a lock file without its temporary file is a dead run's only once it is old
    Files.setLastModifiedTime(dir.resolve(dead.get(3)), FileTime.from(Instant.now().minusSeconds(3600)));
    Process holder = holdLock(dir.resolve(".maxsim4j-" + tag + "-6666666666666666.lock"));
    try {
      try (AtomicOutput output = AtomicOutput.create("--out", target, List.of())) {
        output.write(file -> Files.writeString(file, "new"));
        output.commit();
      }
    } finally {
      holder.getOutputStream().close();
      holder.waitFor();
    }
    Set<String> expected = new TreeSet<>(kept);
    expected.add("out.npy");
    expected.add("Hold.java");
    try (var left = Files.list(dir)) {
      assertEquals(expected, new TreeSet<>(left.map(p -> p.getFileName().toString()).toList()));
    }
    // once its holder is gone, the live run's pair is a dead one too
    AtomicOutput.create("--out", target, List.of()).close();
    assertFalse(Files.exists(dir.resolve(".maxsim4j-" + tag + "-6666666666666666.tmp")));
    assertFalse(Files.exists(dir.resolve(".maxsim4j-" + tag + "-6666666666666666.lock")));
  }

  /**
   * A pipe or a link under a lock file's name is no lock of ours: the sweep leaves it unopened (a pipe blocked every
   * write into its folder, a link led the open out of the folder, creating its target). Found by a reviewer.
   */
  @Test
  void aPipeOrALinkNamedAsALockIsLeftUnopened() throws Exception {
    Path target = dir.resolve("out.npy");
    String tag = AtomicOutput.tag("out.npy");
    Path pipe = dir.resolve(".maxsim4j-" + tag + "-0123456789abcdef.lock");
    Path link = dir.resolve(".maxsim4j-" + tag + "-1111111111111111.lock");
    Path outside = dir.resolve("elsewhere").resolve("made");
    Files.createDirectories(outside.getParent());
    assertEquals(0, new ProcessBuilder("mkfifo", pipe.toString()).start().waitFor());
    Files.createSymbolicLink(link, outside);
    for (Path lock : List.of(pipe, link)) {
      Files.writeString(Path.of(lock.toString().replace(".lock", ".tmp")), "partial");
    }
    assertTimeoutPreemptively(Duration.ofMinutes(1), () -> {
      try (AtomicOutput output = AtomicOutput.create("--out", target, List.of())) {
        output.write(file -> Files.writeString(file, "new"));
        output.commit();
      }
    });
    assertEquals("new", Files.readString(target));
    assertTrue(Files.exists(pipe, LinkOption.NOFOLLOW_LINKS) && Files.isSymbolicLink(link));
    assertFalse(Files.exists(outside), "no file made through the link");
  }

  /** Two outputs of the same file open at once in one JVM: neither sweeps the other's files. */
  @Test
  void outputsOfThisJvmAreNotSwept() throws IOException {
    Path target = dir.resolve("same.txt");
    try (AtomicOutput first = AtomicOutput.create("--out", target, List.of())) {
      try (AtomicOutput second = AtomicOutput.create("--out", dir.resolve("./same.txt"), List.of())) {
        assertTrue(Files.exists(first.temp()), "the first output's temporary file is kept");
        second.write(file -> Files.writeString(file, "second"));
        second.commit();
      }
      first.write(file -> Files.writeString(file, "first"));
      first.commit();
    }
    assertEquals("first", Files.readString(target));
    try (var left = Files.list(dir)) {
      assertEquals(List.of(target), left.toList());
    }
  }

  /** Another JVM that holds the operating system's lock on {@code file} until its standard input closes. */
  private Process holdLock(Path file) throws IOException {
    Path source = Files.writeString(dir.resolve("Hold.java"), """
        import java.nio.channels.FileChannel;
        import java.nio.file.Path;
        import java.nio.file.StandardOpenOption;
        public class Hold {
          public static void main(String[] args) throws Exception {
            try (FileChannel c = FileChannel.open(Path.of(args[0]), StandardOpenOption.WRITE); var lock = c.lock()) {
              System.out.println("locked");
              System.out.flush();
              System.in.read();
            }
          }
        }
        """);
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        source.toString(), file.toString()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
    assertEquals("locked", line, "the lock holder started");
    return p;
  }
}
