package dev.maxsim4j.bench.gpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.bench.BenchRun;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * --compare's baseline is parsed and checked before any GPU work: a file that is no baseline, a value that is no
 * time, or a baseline of none of the run's shapes is one line naming the file, where it read as an empty baseline
 * (eager '-' on every row) or failed as "multiple points".
 */
class EagerBaselineTest {
  private static final List<String> SHAPE = List.of("1,1000,32,300,128");

  @Test
  void aBaselineIsReadByItsShapesSizes(@TempDir Path dir) throws Exception {
    Path inference = Files.writeString(dir.resolve("eager.json"),
        "{\"1,1000,32,300,128\": 0.26262, \"1,1000,32,1024,128\": null}");
    Map<List<Integer>, double[]> eager = EagerBaseline.read(inference, false, List.of(" 1,1000,32,300,128"));
    assertArrayEquals(new double[] {0.26262}, eager.get(List.of(1, 1000, 32, 300, 128)));
    assertTrue(Double.isNaN(eager.get(List.of(1, 1000, 32, 1024, 128))[0]), "null: out of memory");
    // spaces inside a run's shape, which --shape allows: the run's rows found no baseline (a hostile tester's finding)
    assertArrayEquals(new double[] {0.26262}, EagerBaseline.read(inference, false, List.of("1, 1000, 32, 300, 128"))
        .get(EagerBaseline.key("1, 1000, 32, 300, 128")));
    Path training = Files.writeString(dir.resolve("train.json"),
        "{\"128,128,32,300,128\": {\"ms\": 1.5, \"mib\": 600}, \"256,256,32,300,128\": {\"ms\": null, \"mib\": null}}");
    Map<List<Integer>, double[]> train = EagerBaseline.read(training, true, List.of("128,128,32,300,128"));
    assertArrayEquals(new double[] {1.5, 600}, train.get(List.of(128, 128, 32, 300, 128)));
  }

  @Test
  void whatIsNoBaselineIsOneLineNamingTheFile(@TempDir Path dir) throws Exception {
    String[][] cases = {
        {"this is not json at all", ""},
        {"{\"1,1000,32,300,128\": 0.26262, ", ""},
        {"{\"1,1000,32,300,128\": 0.1.2}", ""},
        {"{\"1,1000,32,300,128\": -0.5}", "holds -0.5"},
        {"{\"1,1000,32,300,128\": 0}", "holds 0"},
        {"{\"1,1000,32,300,128\": \"fast\"}", "holds fast"},
        {"{\"01,1000,32,300,128\": 0.2}", "has the key \"01,1000,32,300,128\""},
        {"{\"1,1000,32,300\": 0.2}", "has the key"},
        {"[1, 2]", "is not a non-empty JSON object"},
        {"{}", "is not a non-empty JSON object"},
        {"{\"1,1000,32,1024,128\": 0.7}", "holds none of the run's shapes (1,1000,32,300,128)"},
        {"{\"1,1000,32,300,128\": {\"ms\": 1.5, \"mib\": 600}}", "holds {"},
    };
    for (String[] c : cases) {
      Path f = Files.writeString(dir.resolve("c.json"), c[0]);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> EagerBaseline.read(f, false, SHAPE), c[0]);
      assertTrue(e.getMessage().startsWith("--compare " + f) && e.getMessage().contains(c[1]), c[0] + ": "
          + e.getMessage());
    }
    Path inferenceForTraining = Files.writeString(dir.resolve("i.json"), "{\"128,128,32,300,128\": 0.2}");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> EagerBaseline.read(inferenceForTraining, true, List.of("128,128,32,300,128")));
    assertTrue(e.getMessage().contains("expected {\"Nq,Nd,Lq,Ld,d\": {\"ms\": M, \"mib\": B}"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> EagerBaseline.read(dir, false, SHAPE));
  }

  /** From the command line, on any machine: the file is checked before the GPU is looked for. */
  @Test
  void theCommandRefusesABadBaselineBeforeLookingForAGpu(@TempDir Path dir) throws Exception {
    Path f = Files.writeString(dir.resolve("c.json"), "not json");
    BenchRun run = BenchRun.of("gpu", "--shape", "1,10,32,30,128", "--compare", f.toString());
    assertEquals(1, run.status(), run.err());
    assertTrue(run.failedCleanly() && run.err().contains("--compare " + f), run.err());
  }
}
