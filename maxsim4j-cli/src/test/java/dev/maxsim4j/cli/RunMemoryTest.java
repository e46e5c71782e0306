package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.maxsim4j.cli.io.MappedFiles;
import dev.maxsim4j.cli.io.Npy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run in this JVM unmaps its inputs when it ends, whether it succeeds or fails, not when the collector runs; what a
 * run reports and the files it mapped are its own, apart from runs on other threads.
 */
class RunMemoryTest {
  private static final Path MAPS = Path.of("/proc/self/maps");
  @TempDir Path dir;

  private static boolean mapped(Path file) throws IOException {
    return Files.readAllLines(MAPS).stream().anyMatch(l -> l.endsWith(file.toAbsolutePath().toString()));
  }

  @Test
  void inputsAreUnmappedWhenTheRunEnds() throws IOException {
    assumeTrue(Files.isReadable(MAPS), "a Linux /proc to read the mappings from");
    SplittableRandom rnd = new SplittableRandom(5);
    float[] docs = new float[600 * 4 * 128]; // 1.2 MB: mapped, not read onto the heap
    for (int i = 0; i < docs.length; i++) {
      docs[i] = (float) rnd.nextGaussian();
    }
    Path d = dir.resolve("d.npy");
    Npy.writeFloats(d, docs, 600, 4, 128);
    Npy.writeFloats(dir.resolve("q.npy"), new float[2 * 128], 1, 2, 128);
    CliRun ok = CliRun.of("score", "--queries", dir.resolve("q.npy").toString(), "--docs", d.toString(), "--out",
        dir.resolve("s.npy").toString());
    assertEquals(0, ok.status(), ok.err());
    assertFalse(mapped(d), "unmapped after a run that succeeded");
    Npy.writeFloats(dir.resolve("q3.npy"), new float[2 * 3], 1, 2, 3);
    CliRun failed = CliRun.of("score", "--queries", dir.resolve("q3.npy").toString(), "--docs", d.toString(),
        "--out", dir.resolve("t.npy").toString());
    assertEquals(1, failed.status(), failed.err());
    assertFalse(mapped(d), "unmapped after a run that failed");
  }

  @Test
  void concurrentRunsKeepTheirOwnReportsAndMappedFiles() throws Exception {
    Npy.writeFloats(dir.resolve("q.npy"), new float[2 * 8], 1, 2, 8);
    Npy.writeFloats(dir.resolve("d.npy"), new float[3 * 4 * 8], 3, 4, 8);
    for (int round = 0; round < 20; round++) {
      java.util.concurrent.CompletableFuture<CliRun> verbose = java.util.concurrent.CompletableFuture.supplyAsync(
          () -> CliRun.of("score", "--queries", dir.resolve("q.npy").toString(), "--docs",
              dir.resolve("d.npy").toString(), "--out", dir.resolve("s.npy").toString(), "--verbose"));
      CliRun help = CliRun.of("help", "score");
      CliRun scored = verbose.join();
      assertEquals(0, scored.status(), scored.err());
      assertTrue(scored.err().contains("maxsim4j: backend "), "the verbose run's own report: " + scored.err());
      assertFalse(help.err().contains("maxsim4j: backend "), "none in the other run's: " + help.err());
    }
    // the files each run mapped, by which a run names an input that changed under it, are its own
    Path big = dir.resolve("big.npy");
    Npy.writeFloats(big, new float[300 * 1024], 300, 1024);
    java.util.Map<Path, MappedFiles.Snapshot> mine = new java.util.concurrent.ConcurrentHashMap<>();
    java.util.Map<Path, MappedFiles.Snapshot> other = new java.util.concurrent.ConcurrentHashMap<>();
    MappedFiles.recordedIn(mine, () -> Npy.read(big));
    MappedFiles.recordedIn(other, () -> CliRun.of("help"));
    assertEquals(java.util.Set.of(big.toAbsolutePath()), mine.keySet());
    assertTrue(other.isEmpty(), other.toString());
  }

  /** A run on a thread whose interrupt is pending fails in words, not with a channel exception's class name. */
  @Test
  void aRunOnAnInterruptedThreadSaysSo() throws IOException {
    Npy.writeFloats(dir.resolve("q.npy"), new float[2 * 8], 1, 2, 8);
    Npy.writeFloats(dir.resolve("d.npy"), new float[3 * 4 * 8], 3, 4, 8);
    Thread.currentThread().interrupt();
    CliRun r;
    try {
      r = CliRun.of("score", "--queries", dir.resolve("q.npy").toString(), "--docs", dir.resolve("d.npy").toString(),
          "--out", dir.resolve("s.npy").toString());
    } finally {
      Thread.interrupted();
    }
    assertEquals(1, r.status(), r.err());
    assertTrue(r.err().contains("interrupted"), r.err());
    assertFalse(r.err().contains("Exception"), r.err());
  }
}
