package dev.maxsim4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code bench cpu} with compressed types and the sgemm yardstick: the columns, the JSON, bad values. */
class CpuBenchTest {
  @TempDir Path dir;

  @Test
  void eachDocumentTypeIsTimedBesideFp32() throws IOException {
    for (String type : new String[] {"int8", "fp8", "binary", "binary-sym"}) {
      Path json = dir.resolve(type + ".json");
      BenchRun b = BenchRun.of("cpu", "--shape", "1,20,8,30,33", "--dtype", type, "--iterations", "2", "--rounds", "1",
          "--no-naive", "--json", json.toString());
      assertEquals(0, b.status(), b.err());
      assertTrue(b.out().contains("vs fp32"), b.out());
      String text = Files.readString(json);
      String query = type.equals("binary-sym") ? "binary" : "float32";
      String docs = switch (type) {
        case "int8" -> "int8";
        case "fp8" -> "float8_e4m3";
        default -> "binary";
      };
      for (String key : new String[] {"\"dtype\": \"" + docs + "\"", "\"query_dtype\": \"" + query + "\"",
          "\"fp32_ms\": ", "\"gbps\""}) {
        assertTrue(text.contains(key), key + " in " + text);
      }
      assertTrue(!text.contains("\"fp32_ms\": null"), text);
    }
  }

  @Test
  void int8QueriesAreTakenFromTheCommandLine() {
    BenchRun b = BenchRun.of("cpu", "--shape", "2,3,4,5,16", "--dtype", "fp8", "--query-dtype", "int8", "--iterations",
        "2", "--rounds", "1", "--no-naive");
    assertEquals(0, b.status(), b.err());
    assertTrue(b.out().lines().anyMatch(l -> l.startsWith("2,3,4,5,16") && l.contains(" fp8   int8 ")), b.out());
  }

  /** Backend names in any case and padding, as the library and the other commands read them. */
  @Test
  void aBackendNameInAnotherCaseIsTheSameBackend() {
    BenchRun b = BenchRun.of("cpu", "--shape", "1,3,4,5,16", "--backend", " Vector", "--iterations", "1", "--rounds",
        "1", "--no-naive");
    assertEquals(0, b.status(), b.err());
  }

  /** A backend that does not open prints nothing but its one error line: no table header first. */
  @Test
  void anUnknownBackendPrintsNoTable() {
    BenchRun b = BenchRun.of("cpu", "--shape", "2,3,4,5,16", "--backend", "foo", "--iterations", "1");
    assertTrue(b.refusedWith("cpu: --backend = foo; expected one of auto, cpu"), b.status() + " " + b.err());
    assertTrue(b.out().isEmpty(), "printed before the error: " + b.out());
  }

  @Test
  void anUnknownTypeIsOneLine() {
    assertTrue(BenchRun.of("cpu", "--dtype", "int4").refusedWith("cpu: --dtype 'int4' is unknown; expected fp32"));
    assertTrue(BenchRun.of("cpu", "--query-dtype", "binary-sym")
        .refusedWith("cpu: --query-dtype 'binary-sym' is unknown"));
    assertTrue(BenchRun.of("cpu", "--dtype", "BINARY-SYM", "--query-dtype", "int8")
        .refusedWith("cpu: --dtype BINARY-SYM times 1-bit queries, but --query-dtype is int8"));
  }

  /** A hostile tester's finding: --rounds 2147483647 ran for years, silently, where --iterations is capped. */
  @Test
  void roundsAreCappedAsIterationsAre() {
    for (String rounds : new String[] {"2147483647", "101"}) {
      BenchRun b = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> BenchRun.of("cpu", "--shape", "1,1,1,1,1",
          "--no-naive", "--iterations", "1", "--rounds", rounds));
      assertTrue(b.refusedWith("cpu: --rounds = " + rounds + "; expected 1 <= --rounds <= 100"), b.err());
      assertTrue(b.out().isEmpty(), b.out());
    }
    assertTrue(BenchRun.of("cpu", "--iterations", "1000001").refusedWith("--iterations <= 1000000"));
    assertTrue(BenchRun.of("cpu", "--help").out().contains("--rounds (default 3, at\n  most 100)"));
  }

  /**
   * A hostile tester's finding: the FILE.partial that --json keeps while the run goes was checked only once the
   * first shape had been measured; a folder there, or a name made too long by ".partial", is refused before.
   */
  @Test
  void theJsonSideFileIsCheckedBeforeAnyShapeRuns() throws IOException {
    Path json = Files.writeString(dir.resolve("r.json"), "[]\n");
    Files.createDirectory(dir.resolve("r.json.partial"));
    BenchRun folder = BenchRun.of("cpu", "--shape", "1,2,3,4,5", "--iterations", "1", "--rounds", "1", "--json",
        json.toString());
    assertTrue(folder.refusedWith("--json " + json + ": its side file " + json + ".partial is a directory"),
        folder.err());
    assertTrue(folder.out().isEmpty(), "refused before the header and the first shape: " + folder.out());
    assertEquals("[]\n", Files.readString(json), "an earlier result survives");
    // 255 characters: a name the file system takes, but not with ".partial" after it
    Path longName = dir.resolve("r".repeat(250) + ".json");
    try (Stream<Path> before = Files.list(dir)) {
      List<Path> files = before.sorted().toList();
      BenchRun tooLong = BenchRun.of("cpu", "--shape", "1,2,3,4,5", "--iterations", "1", "--rounds", "1", "--json",
          longName.toString());
      assertTrue(tooLong.failedCleanly() && tooLong.err().contains(": its side file ")
          && tooLong.err().contains(".partial: file name too long"), tooLong.err());
      assertTrue(tooLong.out().isEmpty(), tooLong.out());
      try (Stream<Path> after = Files.list(dir)) {
        assertEquals(files, after.sorted().toList(), "nothing left behind");
      }
    }
  }

  @Test
  void sgemmRunsWhereOpenBlasIsInstalledAndIsOneLineWhereNot() {
    BenchRun b = BenchRun.of("cpu", "--shape", "2,3,4,5,16", "--sgemm", "--iterations", "2", "--rounds", "1",
        "--no-naive");
    if (openBlasPresent()) {
      assertEquals(0, b.status(), b.err());
      assertTrue(b.out().startsWith("sgemm: OpenBLAS "), b.out());
      assertTrue(b.out().lines().anyMatch(l -> l.startsWith("2,3,4,5,16") && l.endsWith("x")), b.out());
    } else {
      assertTrue(b.refusedWith("--sgemm needs OpenBLAS (libopenblas.so.0)"), b.err());
    }
  }

  private static boolean openBlasPresent() {
    try {
      SymbolLookup.libraryLookup("libopenblas.so.0", Arena.global());
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }
}
