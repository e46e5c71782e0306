package dev.maxsim4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.internal.BackendSelector;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bench's commands: results as JSON and charts, bad values one line, found before the work. */
class BenchCommandsTest {
  @TempDir Path dir;

  private String p(String name) {
    return dir.resolve(name).toString();
  }

  @Test
  void helpListsTheBenchCommandsAndSpeaksOfGoalsNotIssues() {
    BenchRun help = BenchRun.of("help");
    assertEquals(0, help.status(), help.err());
    for (String command : new String[] {"gpu ", "cpu ", "plot speedup", "plot memory", "plot goals"}) {
      assertTrue(help.out().contains(command), command + " in " + help.out());
    }
    String text = help.out().toLowerCase(Locale.ROOT);
    assertFalse(text.contains("issue") || text.contains("target"), help.out());
    assertEquals(2, BenchRun.of().status(), "no command is a usage error");
    assertTrue(BenchRun.of("frobnicate").refusedWith("unknown command 'frobnicate'"));
    assertTrue(BenchRun.of("cpu", "--bogus").refusedWith("unknown option '--bogus' (see ./maxsim4j bench help)"));
  }

  @Test
  void eachCommandPrintsItsOwnUsageOnHelp() {
    for (String command : new String[] {"gpu", "gpu-scale", "gpu-fde", "cpu", "plot", "quality", "retrieval"}) {
      for (String flag : new String[] {"--help", "-h"}) {
        BenchRun help = BenchRun.of(command, flag);
        assertEquals(0, help.status(), command + " " + flag + ": " + help.err());
        assertTrue(help.out().startsWith("usage: ./maxsim4j bench " + command), command + ": " + help.out());
        assertTrue(help.err().isEmpty(), help.err());
      }
      BenchRun named = BenchRun.of("help", command);
      assertEquals(0, named.status(), "help " + command + ": " + named.err());
      assertTrue(named.out().startsWith("usage: ./maxsim4j bench " + command), command + ": " + named.out());
    }
    assertTrue(BenchRun.of("help", "frobnicate").refusedWith("expected help or help COMMAND"));
    // a value that reads "-h" is the value: the command runs (here refusing the plot kind), it does not print help
    assertEquals(2, BenchRun.of("plot", "speedup", "--title", "-h").status());
  }

  /**
   * A hostile tester's findings: plot -h printed its second and third forms at the margin, not under the first,
   * and help -h x printed the overview, ignoring x, where maxsim4j help -h x refuses it.
   */
  @Test
  void usagesLineTheirFormsUpAndHelpTakesNoStrayWord() {
    for (String[] argv : new String[][] {{"plot", "-h"}, {"help", "plot"}}) {
      BenchRun help = BenchRun.of(argv);
      assertEquals(0, help.status(), help.err());
      List<String> lines = help.out().lines().toList();
      assertEquals("usage: ./maxsim4j bench plot speedup --in BENCH.json --out CHART.svg [--title TEXT]", lines.get(0));
      assertEquals("       ./maxsim4j bench plot memory --in TRAIN.json --out CHART.svg [--lq 48] [--ld 300]"
          + " [--title TEXT]", lines.get(1));
      assertEquals("       ./maxsim4j bench plot goals --in GPU.json --out CHART.svg [--title TEXT]", lines.get(2));
      assertTrue(lines.get(3).startsWith("  SVG charts") && help.out().endsWith(".\n"), help.out());
    }
    // a form's continued options stay under its options
    List<String> retrieval = BenchRun.of("retrieval", "--help").out().lines().toList();
    assertEquals(retrieval.get(0).indexOf("[--translations"), retrieval.get(1).indexOf("[--lucene"), retrieval.get(1));
    assertTrue(retrieval.get(3).startsWith("       ./maxsim4j bench retrieval --prepare FILE"), retrieval.get(3));
    for (String[] argv : new String[][] {{"help", "-h", "x"}, {"help", "--help", "plot"}, {"help", "-h", "-h"}}) {
      BenchRun stray = BenchRun.of(argv);
      assertTrue(stray.refusedWith("help " + argv[1] + " " + argv[2] + ": expected help or help COMMAND"),
          String.join(" ", argv) + ": " + stray.err());
      assertTrue(stray.out().isEmpty(), stray.out());
    }
    assertEquals(0, BenchRun.of("help", "-h").status(), "help -h alone is the overview");
    BenchRun helpHelp = BenchRun.of("help", "help");
    assertEquals(0, helpHelp.status(), helpHelp.err());
    assertTrue(helpHelp.out().contains("commands:"), "help help is the overview, as maxsim4j's: " + helpHelp.out());
  }

  @Test
  void cpuWritesJsonThatPlotDrawsAsSpeedup() throws IOException {
    BenchRun b = BenchRun.of("cpu", "--shape", "1,20,8,30,16", "--dtype", "bf16", "--iterations", "2", "--json",
        p("b.json"));
    assertEquals(0, b.status(), b.err());
    String json = Files.readString(dir.resolve("b.json"));
    for (String key : new String[] {"\"shape\": [1, 20, 8, 30, 16]", "\"dtype\": \"bfloat16\"", "\"device\": \"cpu\"",
        "\"fused_ms\"", "\"naive_ms\"", "\"gflops\""}) {
      assertTrue(json.contains(key), key + " in " + json);
    }
    BenchRun plot = BenchRun.of("plot", "speedup", "--in", p("b.json"), "--out", p("b.svg"));
    assertEquals(0, plot.status(), plot.err());
    String svg = Files.readString(dir.resolve("b.svg"));
    assertTrue(svg.startsWith("<svg") && svg.contains("1×20×8×30×16") && svg.contains("×</text>"), svg);
    BenchRun noTrain = BenchRun.of("plot", "memory", "--in", p("b.json"), "--out", p("m.svg"));
    assertEquals(1, noTrain.status());
    assertTrue(noTrain.err().contains("plot memory: --in " + p("b.json") + ": no B×B row with Lq = 48 and Ld = 300"
        + " (--lq, --ld); expected the JSON that gpu --train --json writes"), noTrain.err());
  }

  @Test
  void chartsLeaveOutRowsWhoseTimesAreNotPositive() throws IOException {
    // a speedup axis of 0 (an infinite or negative fused time) stepped by 0 and drew ticks until out of memory
    Files.writeString(dir.resolve("z.json"), "[{\"shape\": [1, 2, 3, 4, 5], \"fused_ms\": -1, \"naive_ms\": 2},"
        + " {\"shape\": [1, 2, 3, 4, 6], \"fused_ms\": 1e400, \"naive_ms\": 2}]");
    BenchRun none = BenchRun.of("plot", "speedup", "--in", p("z.json"), "--out", p("z.svg"));
    assertTrue(none.failedCleanly() && none.err().contains("each a positive time"), none.err());
    Files.writeString(dir.resolve("n.json"), "[{\"shape\": [1, 2, 3, 4, 7], \"fused_ms\": -1, \"naive_ms\": -3}]");
    BenchRun negative = BenchRun.of("plot", "speedup", "--in", p("n.json"), "--out", p("n.svg"));
    assertTrue(negative.failedCleanly() && negative.err().contains("each a positive time"), negative.err());
    Files.writeString(dir.resolve("g.json"), "[{\"shape\": [1, 10000, 32, 300, 128], \"call_resident_queries_ms\": -0.2,"
        + " \"async_resident_queries_ms\": 0.1710}]");
    BenchRun goals = BenchRun.of("plot", "goals", "--in", p("g.json"), "--out", p("g.svg"));
    assertTrue(goals.failedCleanly() && goals.err().contains("each a positive time"), goals.err());
  }

  /**
   * A hostile tester's findings: two positive times whose ratio overflowed were reported as missing, and a shape
   * entry of 1e400 was drawn as "Infinity×2×3×4×5".
   */
  @Test
  void speedupsPastADoubleAndShapesOfNoWholeNumbersAreNamed() throws IOException {
    Files.writeString(dir.resolve("max.json"), "[{\"shape\": [1, 2, 3, 4, 5], \"fused_ms\": 1e-300,"
        + " \"naive_ms\": 1e300}]");
    BenchRun max = BenchRun.of("plot", "speedup", "--in", p("max.json"), "--out", p("max.svg"));
    assertTrue(max.failedCleanly() && max.err().contains("row 1×2×3×4×5 has naive_ms 1.0E300 and fused_ms 1.0E-300,"
        + " a speedup of Infinity (past the range of a double)"), max.err());
    assertTrue(Files.notExists(dir.resolve("max.svg")));
    Files.writeString(dir.resolve("min.json"), "[{\"shape\": [1, 2, 3, 4, 5], \"fused_ms\": 1e300,"
        + " \"naive_ms\": 1e-300}]");
    BenchRun min = BenchRun.of("plot", "speedup", "--in", p("min.json"), "--out", p("min.svg"));
    assertTrue(min.failedCleanly() && min.err().contains("a speedup of 0.0"), min.err());
    for (String entry : new String[] {"1e400", "2.5", "0", "-3", "1e300"}) {
      Files.writeString(dir.resolve("s.json"), "[{\"shape\": [1, 1, 1, 1, 1], \"fused_ms\": 1, \"naive_ms\": 2},"
          + " {\"shape\": [" + entry + ", 2, 3, 4, 5], \"fused_ms\": 1, \"naive_ms\": 2}]");
      for (String chart : new String[] {"speedup", "memory", "goals"}) {
        BenchRun bad = BenchRun.of("plot", chart, "--in", p("s.json"), "--out", p("s.svg"));
        assertTrue(bad.failedCleanly() && bad.err().contains(": row 1 has the shape entry ")
            && bad.err().contains("; expected whole numbers from 1 to"), entry + " " + chart + ": " + bad.err());
        assertTrue(Files.notExists(dir.resolve("s.svg")));
      }
    }
    Files.writeString(dir.resolve("w.json"), "[{\"shape\": [1, 2.0, 3, 4, 5], \"fused_ms\": 1, \"naive_ms\": 2}]");
    assertEquals(0, BenchRun.of("plot", "speedup", "--in", p("w.json"), "--out", p("w.svg")).status(),
        "2.0 is a whole number");
  }

  /**
   * A hostile tester's findings: plot memory drew NaN bars for a row without op_mib and an "OOM" for eager where
   * eager was never measured; a control character in a title made the SVG no XML; --json --help wrote a file
   * named --help; an interrupted cpu --json run replaced an earlier result with a partial one.
   */
  @Test
  void memoryChartsOnlyMeasuredMemoryAndOutputsStayWhole() throws IOException {
    Files.writeString(dir.resolve("no-op.json"), "[{\"shape\": [2, 2, 48, 300, 128], \"fused_ms\": 1}]");
    BenchRun noOp = BenchRun.of("plot", "memory", "--in", p("no-op.json"), "--out", p("m.svg"));
    assertTrue(noOp.failedCleanly() && noOp.err().contains("op_mib null; expected a positive number"), noOp.err());
    assertTrue(Files.notExists(dir.resolve("m.svg")));
    Files.writeString(dir.resolve("t.json"), "[{\"shape\": [2, 2, 48, 300, 64], \"dtype\": \"fp16\", \"op_mib\": 5},"
        + " {\"shape\": [4, 4, 48, 300, 64], \"dtype\": \"fp16\", \"op_mib\": 9, \"eager_mib\": null}]");
    BenchRun plot = BenchRun.of("plot", "memory", "--in", p("t.json"), "--out", p("t.svg"), "--title", "a\u0001b");
    assertEquals(0, plot.status(), plot.err());
    String svg = Files.readString(dir.resolve("t.svg"));
    assertEquals(1, svg.split(">OOM<", -1).length - 1, "OOM only where eager ran out of memory: " + svg);
    assertTrue(svg.contains("d = 64, fp16") && svg.contains("a\ufffdb") && !svg.contains("\u0001"), svg);
    assertTrue(BenchRun.of("cpu", "--shape", "1,2,2,4,8", "--json", "--help")
        .refusedWith("--json needs a value, not the option --help"));
    assertTrue(Files.notExists(Path.of("--help")));
    Files.writeString(dir.resolve("kept.json"), "[]\n");
    BenchRun cpu = BenchRun.of("cpu", "--shape", "1,2,2,4,8", "--iterations", "1", "--rounds", "1", "--json",
        p("kept.json"));
    assertEquals(0, cpu.status(), cpu.err());
    assertTrue(Files.readString(dir.resolve("kept.json")).contains("\"shape\": [1, 2, 2, 4, 8]"));
    assertTrue(Files.notExists(dir.resolve("kept.json.partial")), "the partial file goes once the run ends");
  }

  /**
   * A hostile tester's findings: under a locale that cannot decode it a non-ASCII title was drawn as U+FFFD; sizes
   * written 1000.0 or 1e4 were drawn as such and found no per-call goal; plot memory drew rows of another d or
   * dtype under the first row's.
   */
  @Test
  void titlesSizesAndSubtitlesAreDrawnAsMeant() throws IOException {
    Files.writeString(dir.resolve("g.json"), "[{\"shape\": [1, 1e4, 32, 300, 128],"
        + " \"call_resident_queries_ms\": 0.2066, \"async_resident_queries_ms\": 0.1710},"
        + " {\"shape\": [1, 1000.0, 32, 1024, 128],"
        + " \"call_resident_queries_ms\": 0.2, \"async_resident_queries_ms\": 0.1}]");
    BenchRun goals = BenchRun.of("plot", "goals", "--in", p("g.json"), "--out", p("g.svg"));
    assertEquals(0, goals.status(), goals.err());
    String chart = Files.readString(dir.resolve("g.svg"));
    assertTrue(chart.contains(">1×10000×32×300×128<") && chart.contains(">1×1000×32×1024×128<"), chart);
    String encoding = System.getProperty("sun.jnu.encoding");
    System.setProperty("sun.jnu.encoding", "ANSI_X3.4-1968");
    try {
      BenchRun title = BenchRun.of("plot", "goals", "--in", p("g.json"), "--out", p("t.svg"), "--title", "f\uFFFDr");
      assertTrue(title.refusedWith("plot: --title holds characters this locale's encoding (ANSI_X3.4-1968) cannot"
          + " read"), title.err());
      assertTrue(Files.notExists(dir.resolve("t.svg")));
    } finally {
      System.setProperty("sun.jnu.encoding", encoding);
    }
    Files.writeString(dir.resolve("mix.json"), "[{\"shape\": [8, 8, 48, 300, 128], \"dtype\": \"bfloat16\","
        + " \"op_mib\": 100}, {\"shape\": [16, 16, 48, 300, 64], \"dtype\": \"bfloat16\", \"op_mib\": 50}]");
    BenchRun mixed = BenchRun.of("plot", "memory", "--in", p("mix.json"), "--out", p("m.svg"));
    assertTrue(mixed.failedCleanly() && mixed.err().contains(": rows 8×8×48×300×128 (bfloat16) and 16×16×48×300×64"
        + " (bfloat16) both have Lq = 48 and Ld = 300; expected one d and one dtype"), mixed.err());
    assertTrue(Files.notExists(dir.resolve("m.svg")));
    Files.writeString(dir.resolve("null.json"), "[{\"shape\": [8, 8, 48, 300, 128], \"dtype\": \"bfloat16\","
        + " \"op_mib\": 100}, {\"shape\": [16, 16, 48, 300, 128], \"dtype\": null, \"op_mib\": 50}]");
    BenchRun nulled = BenchRun.of("plot", "memory", "--in", p("null.json"), "--out", p("m.svg"));
    assertTrue(nulled.failedCleanly() && nulled.err().contains("(null) both have Lq = 48"), nulled.err());
  }

  @Test
  void goalsChartsTheGpuRowsAgainstTheirPerCallGoals() throws IOException {
    // a CPU bench's rows have no call columns
    Files.writeString(dir.resolve("c.json"), "[{\"shape\": [1, 20, 8, 30, 16], \"fused_ms\": 0.1}]");
    BenchRun noCalls = BenchRun.of("plot", "goals", "--in", p("c.json"), "--out", p("t.svg"));
    assertTrue(noCalls.failedCleanly() && noCalls.err().contains("no row of a shape with a per-call goal"),
        noCalls.err());
    Files.writeString(dir.resolve("g.json"), "[{\"shape\": [1, 10000, 32, 300, 128], \"call_resident_queries_ms\": 0.2066, "
        + "\"async_resident_queries_ms\": 0.1710}]");
    BenchRun goals = BenchRun.of("plot", "goals", "--in", p("g.json"), "--out", p("t.svg"));
    assertEquals(0, goals.status(), goals.err());
    String chart = Files.readString(dir.resolve("t.svg"));
    assertTrue(chart.contains("1×10000×32×300×128") && chart.contains(">1.04<") && chart.contains(">0.86<"), chart);
    assertFalse(chart.contains("target") || chart.contains("issue"), chart);
    assertTrue(BenchRun.of("plot", "targets", "--in", p("g.json"), "--out", p("t.svg"))
        .refusedWith("expected 'plot speedup', 'plot memory' or 'plot goals'"));
  }

  @Test
  void benchesCheckEveryShapeAndTheirJsonOutputBeforeRunning() {
    assertTrue(BenchRun.of("cpu", "--shape", "99999,99999,99999,99999,99999", "--iterations", "1")
        .refusedWith("must each be at most"));
    BenchRun second = BenchRun.of("cpu", "--shape", "1,1,1,1,1", "--shape", "1,2", "--iterations", "1");
    assertTrue(second.refusedWith("cpu: --shape '1,2'"), second.err());
    assertFalse(second.out().contains("1,1,1,1,1"), "nothing ran before the bad shape was found: " + second.out());
    BenchRun missing = BenchRun.of("cpu", "--shape", "1,1,1,1,1", "--iterations", "1", "--json", p("nope/b.json"));
    assertTrue(missing.failedCleanly() && missing.err().contains("does not exist"), missing.err());
    assertEquals("", missing.out(), "refused before the benchmark ran");
    assertTrue(BenchRun.of("gpu", "--shape", "1,2,3").refusedWith("gpu: --shape '1,2,3'; expected Nq,Nd,Lq,Ld,d"));
    assertTrue(BenchRun.of("gpu", "--device", "cuda").refusedWith("unknown option '--device'"));
  }

  @Test
  void gpuSaysSoWhenThereIsNoGpu() {
    if (BackendSelector.cudaUnavailableReason().isPresent()) {
      BenchRun r = BenchRun.of("gpu", "--shape", "1,2,3,4,8");
      assertTrue(r.failedCleanly() && r.err().contains("no usable GPU here"), r.err());
    }
  }

  @Test
  void plotRefusesItsInputAsOutputAndNamesABadInput() throws IOException {
    Path rows = Files.writeString(dir.resolve("rows.json"), "[{\"a\": 1}]");
    BenchRun same = BenchRun.of("plot", "speedup", "--in", rows.toString(), "--out", rows.toString());
    assertTrue(same.failedCleanly() && same.err().contains("is also the input"), same.err());
    assertEquals("[{\"a\": 1}]", Files.readString(rows));
    BenchRun noShape = BenchRun.of("plot", "memory", "--in", rows.toString(), "--out", p("m.svg"));
    assertTrue(noShape.failedCleanly() && noShape.err().contains("row 0 has no \"shape\""), noShape.err());
    Path binary = Files.write(dir.resolve("b.json"), new byte[] {(byte) 0x93, 'N', 'U', 'M'});
    BenchRun notText = BenchRun.of("plot", "speedup", "--in", binary.toString(), "--out", p("s.svg"));
    assertTrue(notText.failedCleanly() && notText.err().contains(binary + " is not UTF-8 text"), notText.err());
    // a missing file was "no such file: x.json", naming neither --in nor what it takes
    BenchRun missing = BenchRun.of("plot", "speedup", "--in", p("x.json"), "--out", p("s.svg"));
    assertTrue(missing.failedCleanly() && missing.err().contains("plot: --in " + p("x.json") + ": no such file;"
        + " expected the JSON that cpu --json"), missing.err());
    BenchRun folder = BenchRun.of("plot", "speedup", "--in", dir.toString(), "--out", p("s.svg"));
    assertTrue(folder.failedCleanly() && folder.err().contains(dir + " is a directory"), folder.err());
    Path json = Files.writeString(dir.resolve("bad.json"), "[{\"shape\": [1, 2");
    BenchRun badJson = BenchRun.of("plot", "speedup", "--in", json.toString(), "--out", p("s.svg"));
    assertTrue(badJson.failedCleanly() && badJson.err().contains(json.toString()), badJson.err());
    // a pipe blocked until a writer came, /dev/zero was read until the heap ran out (found by a hostile test)
    Path fifo = dir.resolve("rows-pipe.json");
    boolean made;
    try {
      made = new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor() == 0;
    } catch (IOException | InterruptedException noMkfifo) {
      made = false;
    }
    for (String device : made ? List.of(fifo.toString(), "/dev/zero") : List.of("/dev/zero")) {
      BenchRun r = assertTimeoutPreemptively(Duration.ofSeconds(60),
          () -> BenchRun.of("plot", "speedup", "--in", device, "--out", p("s.svg")));
      assertTrue(r.failedCleanly() && r.err().contains(device + " is not a regular file"), r.err());
    }
  }
}
