package dev.maxsim4j.cli;

import static dev.maxsim4j.cli.CliRun.assertOneLineError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.cli.io.GivenFiles;
import dev.maxsim4j.cli.io.Npy;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An input that passes the checks but then cannot be read (no permission, gone since it was checked) is refused as
 * every other bad input is: by the option that named it, what went wrong and what the input must be.
 */
class UnreadableInputTest {
  @TempDir Path dir;

  /** The runner names the options that named a file a failed read reports, and no option for any other file. */
  @Test
  void aFailedReadOfAnInputNamesTheOptionThatGaveIt() throws Exception {
    Path queries = dir.resolve("q.npy");
    Npy.writeFloats(queries, new float[2 * 3 * 4], 2, 3, 4); // the checks before the read pass
    Path shard = dir.resolve("shards").resolve("b.safetensors");
    String[] seen = {
        failing(() -> {
          Inputs.input("--queries", queries.toString());
          throw new AccessDeniedException(queries.toString());
        }),
        failing(() -> {
          Inputs.input("--queries", queries.toString());
          throw new UncheckedIOException(new NoSuchFileException(queries.toString()));
        }),
        failing(() -> {
          GivenFiles.given("--docs", shard);
          throw new AccessDeniedException(shard.toString());
        }),
        failing(() -> {
          Inputs.input("--queries", queries.toString());
          Inputs.input("--docs", queries.toString()); // one file for both sides, its tensors named apart
          throw new AccessDeniedException(queries.toString());
        }),
        failing(() -> {
          GivenFiles.given("--docs", shard);
          throw new AccessDeniedException(shard.resolveSibling(".maxsim4j-run.tmp").toString()); // beside a shard
        }),
        failing(() -> {
          throw new AccessDeniedException(dir.resolve("other.npy").toString()); // named by no option
        })};
    assertEquals("maxsim4j: error: --queries " + queries + ": permission denied; expected an input this user can"
        + " read", seen[0]);
    assertTrue(seen[1].startsWith("maxsim4j: error: --queries " + queries + ": no such file"), seen[1]);
    assertTrue(seen[2].startsWith("maxsim4j: error: --docs " + shard + ": permission denied"), seen[2]);
    assertTrue(seen[3].startsWith("maxsim4j: error: --queries and --docs " + queries + ": permission denied"),
        seen[3]);
    assertEquals("maxsim4j: error: permission denied: " + shard.resolveSibling(".maxsim4j-run.tmp"), seen[4]);
    assertEquals("maxsim4j: error: permission denied: " + dir.resolve("other.npy"), seen[5]);
  }

  /** The same through the command line, where the file system refuses this user (never as root). */
  @Test
  void anUnreadableQueriesFileIsRefusedByItsOption() throws Exception {
    Path queries = dir.resolve("q.npy");
    Npy.writeFloats(queries, new float[2 * 3 * 4], 2, 3, 4);
    Npy.writeFloats(dir.resolve("d.npy"), new float[2 * 3 * 4], 2, 3, 4);
    Files.setPosixFilePermissions(queries, PosixFilePermissions.fromString("---------"));
    Assumptions.assumeFalse(Files.isReadable(queries), "this user reads files whatever their modes (root)");
    CliRun r = CliRun.of("score", "--queries", queries.toString(), "--docs", dir.resolve("d.npy").toString(),
        "--out", dir.resolve("s.npy").toString());
    assertOneLineError(r, 1, "--queries " + queries + ": permission denied; expected an input this user can read");
  }

  /**
   * A folder an option named that cannot be listed is named by that option too (it read "permission denied: D").
   * Found by a hostile test.
   */
  @Test
  void aFolderThatCannotBeListedIsNamedByItsOption() throws Exception {
    Path texts = Files.createDirectory(dir.resolve("texts"));
    String seen = failing(() -> {
      dev.maxsim4j.cli.text.TextFiles.folder("--dir", texts.toString());
      throw new AccessDeniedException(texts.toString());
    });
    assertEquals("maxsim4j: error: --dir " + texts + ": permission denied; expected an input this user can read",
        seen);
    Path shards = Files.createDirectory(dir.resolve("shards"));
    Npy.writeFloats(dir.resolve("q.npy"), new float[2 * 3 * 4], 2, 3, 4);
    Files.setPosixFilePermissions(shards, PosixFilePermissions.fromString("-wx-wx-wx"));
    try {
      Assumptions.assumeFalse(Files.isReadable(shards), "this user lists folders whatever their modes (root)");
      assertOneLineError(CliRun.of("score", "--queries", dir.resolve("q.npy").toString(), "--docs",
          shards.toString(), "--out", dir.resolve("s.npy").toString()), 1, "--docs " + shards + ": permission denied");
      assertOneLineError(CliRun.of("encode", "--in", shards.toString(), "--out", dir.resolve("e.safetensors")
          .toString()), 1, "--in " + shards + ": permission denied");
    } finally {
      Files.setPosixFilePermissions(shards, PosixFilePermissions.fromString("rwxrwxrwx"));
    }
  }

  private static String failing(CommandRunner.Command command) {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = CommandRunner.run("maxsim4j", System.out, new PrintStream(err, true, StandardCharsets.UTF_8),
        command);
    assertEquals(1, status, err.toString(StandardCharsets.UTF_8));
    return err.toString(StandardCharsets.UTF_8).strip();
  }
}
