package dev.maxsim4j.cli.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
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

  @Test
  void aReadOnlyTargetIsReplacedAndStaysReadOnly() throws IOException {
    // the temporary file is forced before it takes the read-only permissions (for a user other than root, a
    // force after them could not open it for writing)
    Path target = Files.writeString(dir.resolve("ro.txt"), "old");
    Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("r--r--r--"));
    try (AtomicOutput output = AtomicOutput.create("--out", target, List.of())) {
      output.write(file -> Files.writeString(file, "new"));
      output.commit();
    }
    assertEquals("new", Files.readString(target));
    assertEquals("r--r--r--", PosixFilePermissions.toString(Files.getPosixFilePermissions(target)));
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
}
