package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.maxsim4j.cli.io.Npy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A run in this JVM unmaps its inputs when it ends, whether it succeeds or fails, not when the collector runs. */
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
}
