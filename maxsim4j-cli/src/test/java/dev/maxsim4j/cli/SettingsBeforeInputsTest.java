package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * score refuses a bad library setting before it reads its inputs: read first, gigabytes of them failed in a heap too
 * small for them, and the out-of-memory line hid the setting's mistake (found by a hostile tester).
 */
class SettingsBeforeInputsTest {
  @TempDir Path dir;

  @Test
  void aBadThreadsPropertyIsNamedBeforeTheInputsAreRead() {
    String previous = System.getProperty("maxsim4j.threads");
    System.setProperty("maxsim4j.threads", "0");
    try {
      for (String docs : new String[] {dir.resolve("missing.npy").toString(), dir.toString()}) {
        CliRun r = CliRun.of("score", "--queries", dir.resolve("q.npy").toString(), "--docs", docs, "--out",
            dir.resolve("s.npy").toString());
        assertTrue(r.status() == 1 && r.err().contains("maxsim4j.threads") && !r.err().contains("no such file"),
            docs + ": " + r.err());
      }
    } finally {
      if (previous == null) {
        System.clearProperty("maxsim4j.threads");
      } else {
        System.setProperty("maxsim4j.threads", previous);
      }
    }
  }
}
