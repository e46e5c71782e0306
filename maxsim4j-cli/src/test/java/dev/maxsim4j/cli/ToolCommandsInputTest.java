package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** bench, plot and train-example: bad values and outputs are one line, found before the work, never half-written. */
class ToolCommandsInputTest {
  @TempDir Path dir;

  private static void assertUsage(CliRun r, String fragment) {
    assertEquals(2, r.status(), r.err());
    assertEquals(1, r.err().lines().count(), r.err());
    assertTrue(r.err().contains(fragment), r.err());
  }

  @Test
  void benchChecksEveryShapeAndItsJsonOutputBeforeRunning() {
    CliRun huge = CliRun.of("bench", "--shape", "99999,99999,99999,99999,99999", "--iterations", "1");
    assertUsage(huge, "must each be at most");
    CliRun second = CliRun.of("bench", "--shape", "1,1,1,1,1", "--shape", "1,2", "--iterations", "1");
    assertUsage(second, "--shape '1,2'");
    assertFalse(second.out().contains("1,1,1,1,1"), "nothing ran before the bad shape was found: " + second.out());
    CliRun missing = CliRun.of("bench", "--shape", "1,1,1,1,1", "--iterations", "1", "--json",
        dir.resolve("nope/b.json").toString());
    assertTrue(missing.failedCleanly() && missing.err().contains("does not exist"), missing.err());
    assertEquals("", missing.out(), "refused before the benchmark ran");
  }

  @Test
  void plotRefusesItsInputAsOutputAndNamesABadInput() throws IOException {
    Path rows = Files.writeString(dir.resolve("rows.json"), "[{\"a\": 1}]");
    CliRun same = CliRun.of("plot", "speedup", "--in", rows.toString(), "--out", rows.toString());
    assertTrue(same.failedCleanly() && same.err().contains("is also the input"), same.err());
    assertEquals("[{\"a\": 1}]", Files.readString(rows));
    CliRun noShape = CliRun.of("plot", "memory", "--in", rows.toString(), "--out", dir.resolve("m.svg").toString());
    assertTrue(noShape.failedCleanly() && noShape.err().contains("row 0 has no \"shape\""), noShape.err());
    Path binary = Files.write(dir.resolve("b.json"), new byte[] {(byte) 0x93, 'N', 'U', 'M'});
    CliRun notText = CliRun.of("plot", "speedup", "--in", binary.toString(), "--out", dir.resolve("s.svg").toString());
    assertTrue(notText.failedCleanly() && notText.err().contains(binary + " is not UTF-8 text"), notText.err());
    CliRun folder = CliRun.of("plot", "speedup", "--in", dir.toString(), "--out", dir.resolve("s.svg").toString());
    assertTrue(folder.failedCleanly() && folder.err().contains(dir + " is a directory"), folder.err());
    Path json = Files.writeString(dir.resolve("bad.json"), "[{\"shape\": [1, 2");
    CliRun badJson = CliRun.of("plot", "speedup", "--in", json.toString(), "--out", dir.resolve("s.svg").toString());
    assertTrue(badJson.failedCleanly() && badJson.err().contains(json.toString()), badJson.err());
  }

  @Test
  void trainExampleTakesOnlyAFinitePositiveLearningRate() {
    assertUsage(CliRun.of("train-example", "--lr", "abc"), "--lr = 'abc'; expected a number");
    for (String lr : new String[] {"NaN", "-1", "0", "Infinity"}) {
      assertUsage(CliRun.of("train-example", "--lr", lr, "--steps", "1"), "expected a finite number > 0");
    }
  }
}
