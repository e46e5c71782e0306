package dev.maxsim4j.cli;

import static dev.maxsim4j.cli.CliRun.assertOneLineError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.maxsim4j.cli.io.Npy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file name longer than the file system takes: as an output it failed only at the end of the work, naming the
 * temporary file (".maxsim4j-...tmp: File name too long"); as an input it was "no such file". Both now name the
 * option and the reason, the output before any work. Found by a hostile test.
 */
class LongNamesTest {
  @TempDir Path dir;

  @Test
  void namesTooLongForTheFileSystemAreNamedAsSuch() throws IOException {
    String name = "n".repeat(300) + ".npy";
    try {
      Files.createFile(dir.resolve(name));
      assumeTrue(false, "this file system takes names of 300 bytes, so none is too long here");
    } catch (IOException tooLong) {
      // the case under test
    }
    Npy.writeFloats(dir.resolve("q.npy"), new float[2 * 3 * 4], 2, 3, 4);
    String q = dir.resolve("q.npy").toString();
    String longNpy = dir.resolve(name).toString();
    String longSafetensors = dir.resolve("n".repeat(300) + ".safetensors").toString();
    Files.writeString(dir.resolve("texts.txt"), "a text\n");
    // the output is refused before the inputs are read: the damaged documents would have been named first
    Files.writeString(dir.resolve("damaged.npy"), "not an array");
    assertOneLineError(CliRun.of("score", "--queries", q, "--docs", dir.resolve("damaged.npy").toString(), "--out",
        longNpy), 1, "--out " + longNpy + ": file name too long; expected a file name this file system takes");
    assertOneLineError(CliRun.of("score", "--queries", q, "--docs", q, "--top-k", "1", "--out-run", longNpy + ".tsv"),
        1, "--out-run " + longNpy + ".tsv: file name too long");
    assertOneLineError(CliRun.of("encode", "--in", dir.resolve("texts.txt").toString(), "--out", longSafetensors), 1,
        "--out " + longSafetensors + ": file name too long");
    assertOneLineError(CliRun.of("score", "--queries", longNpy, "--docs", q, "--out", dir.resolve("s.npy").toString()),
        1, "--queries " + longNpy + ": file name too long");
    assertOneLineError(CliRun.of("rerank", "--query", "q", "--candidates", longNpy), 1,
        "--candidates " + longNpy + ": file name too long");
    try (var files = Files.list(dir)) {
      assertEquals(List.of("damaged.npy", "q.npy", "texts.txt"),
          files.map(f -> f.getFileName().toString()).sorted().toList(), "nothing is left beside the outputs");
    }
  }
}
