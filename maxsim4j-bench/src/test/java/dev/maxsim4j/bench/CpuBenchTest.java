package dev.maxsim4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Files;
import java.nio.file.Path;
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
