package dev.maxsim4j.cli;

import static dev.maxsim4j.cli.CliRun.assertOneLineError;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.maxsim4j.cli.io.Npy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every input file option refuses a pipe or device in one line naming the option and the file: the inputs are read
 * whole, so a FIFO blocked until a writer came and /dev/zero was read until the heap ran out. Found by a hostile test.
 */
class NonRegularInputsTest {
  @TempDir Path dir;

  private Path fifo(String name) throws IOException, InterruptedException {
    Path fifo = dir.resolve(name);
    int status;
    try {
      status = new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor();
    } catch (IOException noMkfifo) {
      status = -1;
    }
    assumeTrue(status == 0, "mkfifo is not available here, so no FIFO can be made to test with");
    return fifo;
  }

  private static void refused(String fragment, String... args) {
    CliRun r = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> CliRun.of(args), "a pipe must not block");
    assertOneLineError(r, 1, fragment);
  }

  @Test
  void textInputsRefusePipesAndDevices() throws Exception {
    String pipe = fifo("texts.txt").toString();
    String notRegular = " is not a regular file (a pipe, device or socket); expected a text file";
    refused("--in " + pipe + notRegular, "encode", "--in", pipe, "--out", dir.resolve("e.safetensors").toString());
    refused("--candidates " + pipe + notRegular, "rerank", "--query", "q", "--candidates", pipe);
    Files.createDirectories(dir.resolve("corpus"));
    refused("--queries " + pipe + notRegular, "search", "--dir", dir.resolve("corpus").toString(), "--queries", pipe);
    if (Files.exists(Path.of("/dev/zero"))) {
      refused("--candidates /dev/zero" + notRegular, "rerank", "--query", "q", "--candidates", "/dev/zero");
      refused("--in /dev/zero" + notRegular, "encode", "--in", "/dev/zero", "--out",
          dir.resolve("e.safetensors").toString());
    }
    refused("--in " + dir.resolve("none.txt") + ": no such file", "encode", "--in", dir.resolve("none.txt").toString(),
        "--out", dir.resolve("e.safetensors").toString());
    refused(pipe + " is not a folder (a pipe, device or socket)", "search", "--dir", pipe, "--query", "q");
    try (var files = Files.list(dir)) {
      List<String> left = files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".tmp")).toList();
      assertTrue(left.isEmpty(), "no temporary file is left: " + left);
    }
  }

  @Test
  void arrayInputsRefusePipes() throws Exception {
    Npy.writeFloats(dir.resolve("q.npy"), new float[2 * 3 * 4], 2, 3, 4);
    String q = dir.resolve("q.npy").toString();
    String out = dir.resolve("s.npy").toString();
    String npy = fifo("pipe.npy").toString();
    String safetensors = fifo("pipe.safetensors").toString();
    refused("--queries " + npy + " is not a regular file", "score", "--queries", npy, "--docs", q, "--out", out);
    refused("--docs " + safetensors + " is not a regular file", "score", "--queries", q, "--docs", safetensors,
        "--out", out);
    refused("--doc-mask " + npy + " is not a regular file", "score", "--queries", q, "--docs", q, "--doc-mask", npy,
        "--out", out);
    refused("--in " + safetensors + " is not a regular file", "quantize", "--in", safetensors, "--to", "int8",
        "--out", dir.resolve("c.safetensors").toString());
  }
}
