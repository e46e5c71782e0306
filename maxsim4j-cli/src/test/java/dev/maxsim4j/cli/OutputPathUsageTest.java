package dev.maxsim4j.cli;

import static dev.maxsim4j.cli.CliRun.assertOneLineError;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.Npy;
import dev.maxsim4j.cli.io.SafeTensors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An output path that names a folder (ending in a separator, or an existing folder) is a mistake in the command
 * line: every command with an output option refuses it as a usage error (exit 2), before reading any input.
 * Found by a hostile test: these exited 1 where every other malformed option value exits 2.
 */
class OutputPathUsageTest {
  @TempDir Path dir;

  private String p(String name) {
    return dir.resolve(name).toString();
  }

  @Test
  void folderOutputsAreUsageErrorsForEveryCommand() throws IOException {
    Npy.writeFloats(dir.resolve("q.npy"), new float[2 * 3 * 4], 2, 3, 4);
    Files.createDirectories(dir.resolve("sub"));
    Files.writeString(dir.resolve("texts.txt"), "a text\n");
    for (String out : List.of(p("sub"), p("sub") + "/", p("new") + "/")) {
      for (String[] args : List.of(
          new String[] {"score", "--queries", p("q.npy"), "--docs", p("q.npy"), "--out", out},
          new String[] {"score", "--queries", p("q.npy"), "--docs", p("q.npy"), "--top-k", "1", "--out-run", out},
          new String[] {"score", "--queries", p("q.npy"), "--docs", p("sub"), "--out", out},
          new String[] {"quantize", "--in", p("e.safetensors"), "--to", "int8", "--out", out},
          new String[] {"encode", "--in", p("texts.txt"), "--out", out})) {
        CliRun r = CliRun.of(args);
        assertOneLineError(r, 2, out.endsWith("/") ? "names a folder (it ends in a separator)" : "is a directory");
      }
    }
    assertFalse(Files.exists(dir.resolve("new")), "nothing is created for a refused output");
    try (var files = Files.list(dir.resolve("sub"))) {
      assertFalse(files.findAny().isPresent(), "nothing is written into the folder named as an output");
    }
  }

  /**
   * An append-only folder (chattr +a) lets the output's temporary file be made but neither removed nor renamed: the
   * check before the work says so, naming the option, where it was the temporary file's name and "Operation not
   * permitted". Found by a hostile tester; skipped where chattr cannot set the flag (not root, or a file system
   * without it).
   */
  @Test
  void anAppendOnlyFolderIsNamedBeforeTheWork() throws Exception {
    Path folder = Files.createDirectories(dir.resolve("append-only"));
    Npy.writeFloats(dir.resolve("q.npy"), new float[2 * 3 * 4], 2, 3, 4);
    Process chattr = new ProcessBuilder("chattr", "+a", folder.toString()).redirectErrorStream(true).start();
    chattr.getInputStream().readAllBytes();
    Assumptions.assumeTrue(chattr.waitFor() == 0, "chattr +a does not apply here");
    try {
      String out = folder.resolve("run.tsv").toString();
      assertOneLineError(CliRun.of("score", "--queries", p("q.npy"), "--docs", p("q.npy"), "--top-k", "1",
          "--out-run", out), 1, "--out-run " + out + ": files can be made in " + folder + " but not removed");
      // encode and quantize too, before their work (they did it all, then failed to replace the output)
      Files.writeString(dir.resolve("texts.txt"), "a text\n");
      String encoded = folder.resolve("e.safetensors").toString();
      assertOneLineError(CliRun.of("encode", "--in", p("texts.txt"), "--out", encoded), 1,
          "--out " + encoded + ": files can be made in " + folder + " but not removed");
      SafeTensors.write(dir.resolve("e.safetensors"), Map.of("embeddings", NdArray.ofFloats("e",
          new long[] {1, 2, 4}, new float[8])));
      String quantized = folder.resolve("q.safetensors").toString();
      assertOneLineError(CliRun.of("quantize", "--in", p("e.safetensors"), "--to", "int8", "--out", quantized), 1,
          "--out " + quantized + ": files can be made in " + folder + " but not removed");
    } finally {
      new ProcessBuilder("chattr", "-a", folder.toString()).start().waitFor();
    }
  }

  /**
   * The command line is checked before any file: an output name the command cannot write is a usage error (exit 2)
   * even when the input is missing too, not the input's "no such file" (exit 1).
   */
  @Test
  void outputNamesAreCheckedBeforeInputs() {
    assertOneLineError(CliRun.of("encode", "--in", p("missing.txt"), "--out", p("e.npy")), 2,
        "does not end in .safetensors");
    assertOneLineError(CliRun.of("quantize", "--in", p("missing.safetensors"), "--to", "int8", "--out", p("c.npy")), 2,
        "does not end in .safetensors");
  }
}
