package dev.maxsim4j.cli;

import static dev.maxsim4j.cli.CliRun.assertOneLineError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** How Main words failures that no command reports itself. */
class MainErrorsTest {
  @Test
  void aLargerHeapIsSuggestedOnlyWhereItHelps() {
    assertTrue(CommandRunner.outOfMemory(new OutOfMemoryError("Java heap space")).contains("raise -Xmx"));
    String array = CommandRunner.outOfMemory(new OutOfMemoryError("Requested array size exceeds VM limit"));
    assertFalse(array.contains("raise -Xmx"), array);
    assertTrue(array.contains("2^31-1"), array);
    String direct = CommandRunner.outOfMemory(new OutOfMemoryError("Cannot reserve 8192 bytes of direct buffer memory"));
    assertTrue(direct.contains("MaxDirectMemorySize"), direct);
    String nativeMemory = CommandRunner.outOfMemory(new OutOfMemoryError("Unable to allocate 230400000 bytes"));
    assertTrue(nativeMemory.contains("out of native memory: Unable to allocate 230400000 bytes"), nativeMemory);
    assertTrue(nativeMemory.contains("ulimit -v"), nativeMemory);
    assertFalse(nativeMemory.contains("-Xmx"), nativeMemory);
    String threads = CommandRunner.outOfMemory(new OutOfMemoryError("unable to create native thread: possibly out of"
        + " memory or process/resource limits reached"));
    assertTrue(threads.startsWith("out of threads: ") && threads.contains("ulimit -u"), threads);
  }

  @Test
  void anEmptyOptionValueIsAUsageErrorRatherThanTheWorkingFolder() {
    // java.nio reads "" as the working folder: --docs "" scored the shards found there, --in "" encoded it
    String[][] bad = {
        {"score", "--queries", "q.npy", "--docs", "", "--out", "s.npy"},
        {"score", "--queries", "", "--docs", "d.npy", "--out", "s.npy"},
        {"score", "--queries", "q.npy", "--docs", "d.npy", "--doc-mask", "", "--out", "s.npy"},
        {"quantize", "--in", "", "--to", "int8", "--out", "c.safetensors"},
        {"encode", "--in", "", "--out", "e.safetensors"},
        {"rerank", "--query", "otters", "--candidates", ""},
    };
    for (String[] args : bad) {
      String option = args[java.util.Arrays.asList(args).indexOf("") - 1];
      assertOneLineError(CliRun.of(args), 2, option + " = ''; expected a non-empty value");
    }
  }

  @Test
  void theSyntheticDemoRefusesMoreDocumentsThanItsTokensCanHold() {
    // past about 90k documents the token count overflowed an int: "error: integer overflow", or a wrapped count
    assertOneLineError(CliRun.of("demo", "--synthetic", "--docs", "2000000"), 2,
        "demo: --docs = 2000000; expected 1 <= --docs <= " + DemoCommand.MAX_DOCS);
  }

  @Test
  void trainExampleRefusesABatchWhoseFeaturesOverflowAnArray() {
    // batch x 64 tokens x 384 features overflowed an int: an ArrayIndexOutOfBounds or NegativeArraySize "bug"
    for (String batch : new String[] {"100000000", "2147483647"}) {
      assertOneLineError(CliRun.of("train-example", "--batch", batch, "--steps", "1"), 2,
          "train-example: --batch = " + batch + "; expected 2 <= --batch <= " + TrainExample.MAX_BATCH);
    }
  }

  @Test
  void trainExampleRefusesALearningRateThatAFloatCannotHold() {
    // cast to float, 1e300 became infinity (the loss NaN from step 2) and 1e-320 became 0 (no training at all)
    for (String lr : new String[] {"1e300", "1e-320"}) {
      assertOneLineError(CliRun.of("train-example", "--lr", lr, "--steps", "1"), 2,
          "train-example: --lr = " + lr + "; expected a number from");
    }
  }

  /** A PrintStream only records a failed write: a full disk under stdout ended the run with status 0, silently. */
  @Test
  void aFailedWriteToStandardOutputIsAnError() {
    java.io.OutputStream full = new java.io.OutputStream() {
      @Override
      public void write(int b) throws java.io.IOException {
        throw new java.io.IOException("No space left on device");
      }
    };
    for (String[] args : new String[][] {{"help"}, {"score", "--help"}, {"rerank", "--help"}}) {
      java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
      int status = Main.run(args, new java.io.PrintStream(full), new java.io.PrintStream(err, true));
      assertTrue(status == 1 && err.toString().lines().count() == 1, String.join(" ", args) + ": " + err);
      assertTrue(err.toString().startsWith("maxsim4j: error: writing standard output failed"), err.toString());
    }
  }

  /** A usage error found by a check that several commands share is led by the command's name, as the others are. */
  @Test
  void aSharedChecksUsageErrorNamesTheCommand() throws Exception {
    java.nio.file.Path folder = java.nio.file.Files.createTempDirectory("out-folder");
    try {
      CliRun r = CliRun.of("score", "--queries", "q.npy", "--docs", "d.npy", "--out", folder.toString());
      assertOneLineError(r, 2, "is a directory");
      assertTrue(r.err().startsWith("maxsim4j: score: --out " + folder), r.err());
      CliRun own = CliRun.of("score", "--queries", "q.npy", "--docs", "d.npy");
      assertTrue(own.err().startsWith("maxsim4j: score: --out is required"), "not named twice: " + own.err());
    } finally {
      java.nio.file.Files.delete(folder);
    }
  }

  /**
   * A reader that closes the pipe early (`maxsim4j help | head -1`), or a named pipe's, ends the run quietly, not
   * as a failed write (Linux: the check reads /proc).
   */
  @Test
  void aPipeClosedByItsReaderEndsTheRunQuietly() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        java.nio.file.Files.isDirectory(java.nio.file.Path.of("/proc/self/fd")),
        "no /proc here: a closed pipe is reported as a failed write");
    String javaBin = java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classPath = System.getProperty("java.class.path");
    Process p = new ProcessBuilder(javaBin, "-cp", classPath, Main.class.getName(), "help").start();
    p.getInputStream().close(); // before the JVM has started: every write of the child meets a closed pipe
    assertQuiet(p);
    java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("fifo");
    try {
      // the reader's open returns once the child's standard output is open on the pipe; it then closes at once
      String script = "mkfifo \"$1/out\" && { (exec 3<\"$1/out\"; exec 3<&-) & exec \"$2\" -cp \"$3\" \"$4\" help"
          + " > \"$1/out\"; }";
      assertQuiet(new ProcessBuilder("bash", "-c", script, "fifo", dir.toString(), javaBin, classPath,
          Main.class.getName()).start());
    } finally {
      java.nio.file.Files.deleteIfExists(dir.resolve("out"));
      java.nio.file.Files.delete(dir);
    }
  }

  private static void assertQuiet(Process p) throws Exception {
    String err = new String(p.getErrorStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS), err);
    assertEquals(CommandRunner.CLOSED_PIPE, p.exitValue(), err);
    assertEquals("", err);
  }

  /**
   * A class that could not be loaded when the run needed it, though its file is on the class path now, is named with
   * the likeliest cause (a JVM out of file descriptors cannot open its jar): it read as an unexpected error.
   */
  @Test
  void aClassThereButNotLoadedNamesTheLikeliestCause() {
    java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
    Throwable wrapped = new java.util.concurrent.CompletionException(new NoClassDefFoundError("dev/maxsim4j/MaxSim"));
    int status = CommandRunner.run("maxsim4j", System.out, new java.io.PrintStream(err, true), () -> {
      throw (RuntimeException) wrapped;
    });
    assertEquals(1, status);
    assertEquals("maxsim4j: error: the class dev/maxsim4j/MaxSim could not be loaded when the run needed it, though it"
        + " is there: most often too many open files (raise ulimit -n)", err.toString().strip());
  }

  @Test
  void anErrorFromLoadingCodeIsOneLineNotAStackTrace() {
    // a class or native library that cannot be loaded escaped as the JVM's own stack trace
    for (Error error : new Error[] {new NoClassDefFoundError("jdk/incubator/vector/FloatVector"),
        new UnsatisfiedLinkError("no maxsim4j_cuda in java.library.path"), new AssertionError("broken")}) {
      java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
      int status = CommandRunner.run("maxsim4j", System.out, new java.io.PrintStream(err, true), () -> {
        throw error;
      });
      assertTrue(status == 1 && err.toString().lines().count() == 1, err.toString());
      assertTrue(err.toString().startsWith("maxsim4j: error: unexpected " + error), err.toString());
    }
  }

  @Test
  void aWrappedFileFailureIsWordedAsTheSameFailureUnwrapped() {
    // an UncheckedIOException printed its cause's class name: "java.nio.file.NoSuchFileException: gone.txt"
    java.io.IOException[] failures = {new java.nio.file.NoSuchFileException("gone.txt"),
        new java.nio.file.AccessDeniedException("locked.txt")};
    for (java.io.IOException failure : failures) {
      String[] lines = new String[2];
      for (int wrapped = 0; wrapped < 2; wrapped++) {
        boolean wrap = wrapped == 1;
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        int status = CommandRunner.run("maxsim4j", System.out, new java.io.PrintStream(err, true), () -> {
          if (wrap) {
            throw new java.io.UncheckedIOException(failure);
          }
          throw failure;
        });
        assertTrue(status == 1, err.toString());
        lines[wrapped] = err.toString();
      }
      assertTrue(lines[0].equals(lines[1]) && !lines[1].contains("Exception"), lines[0] + " / " + lines[1]);
    }
  }
}
