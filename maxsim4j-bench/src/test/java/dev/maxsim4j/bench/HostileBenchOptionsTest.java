package dev.maxsim4j.bench;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Hostile options of the bench commands: a --shape without its value, comma and colon lists with an empty entry
 * (which String.split dropped when last), and shapes whose scores or inputs cannot fit, each refused as one line
 * before any data is made.
 */
class HostileBenchOptionsTest {
  @Test
  void aShapeWithoutItsValueIsNamedAsSuch() {
    for (String command : new String[] {"cpu", "gpu"}) {
      BenchRun last = BenchRun.of(command, "--shape");
      assertTrue(last.refusedWith(command + ": --shape needs a value"), last.err());
      BenchRun option = BenchRun.of(command, "--shape", "--dtype", "fp16");
      assertTrue(option.refusedWith(command + ": --shape needs a value, not the option --dtype"), option.err());
    }
  }

  /** bench cpu times the CPU: a backend that would take a GPU where one is present is refused, not timed. */
  @Test
  void theCpuBenchRefusesBackendsThatAreNotTheCpus() {
    for (String backend : new String[] {"cuda", "auto"}) {
      BenchRun run = BenchRun.of("cpu", "--backend", backend, "--shape", "1,2,2,2,8");
      assertTrue(run.refusedWith("cpu: --backend " + backend + " is not a CPU backend; expected one of cpu, vector,"),
          run.err());
      assertTrue(run.out().isEmpty(), run.out());
    }
  }

  @Test
  void listsWithAnEmptyEntryAreRefusedWhereverItIs() {
    for (String shape : new String[] {"1,1,1,1,1,", "1,1,1,1,1,,", ",1,1,1,1,1"}) {
      BenchRun run = BenchRun.of("cpu", "--shape", shape, "--iterations", "1", "--rounds", "1");
      assertTrue(run.refusedWith("--shape '" + shape + "'"), shape + ": " + run.err() + run.out());
    }
    // Integer.parseInt took a sign, a leading zero and other scripts' digits
    for (String shape : new String[] {"1,1,1,1,+8", "1,1,1,1,08", "1,1,1,1,\u0668"}) {
      BenchRun run = BenchRun.of("cpu", "--shape", shape, "--iterations", "1", "--rounds", "1");
      assertTrue(run.refusedWith("is not an integer"), shape + ": " + run.err() + run.out());
    }
    for (String batches : new String[] {"1,8,", "1,,8", ","}) {
      BenchRun run = BenchRun.of("gpu-scale", "--batches", batches);
      assertTrue(run.refusedWith("--batches = '" + batches + "'"), batches + ": " + run.err());
    }
    for (String fde : new String[] {"5:20:8,", ",", "5:20:8:", "5:20:8,,3:8:16"}) {
      BenchRun run = BenchRun.of("gpu-fde", "--fde", fde);
      assertTrue(run.refusedWith("gpu-fde: --fde '" + fde + "'"), fde + ": " + run.err());
    }
  }

  @Test
  void scoresThatNoArrayHoldsAreRefusedBeforeAnyShapeRuns() {
    BenchRun run = assertTimeoutPreemptively(Duration.ofSeconds(30),
        () -> BenchRun.of("cpu", "--shape", "1,2,3,4,5", "--shape", "50000,50000,1,1,1", "--iterations", "1"));
    assertTrue(run.refusedWith("--shape '50000,50000,1,1,1'"), run.err());
    assertTrue(run.out().isEmpty(), "nothing timed before the refusal: " + run.out());
    assertTrue(BenchRun.of("gpu", "--shape", "50000,50000,1,1,1").refusedWith("Nq x Nd"));
  }

  @Test
  void inputsLargerThanTheHeapAreRefusedBeforeTheyAreMade() {
    // two fp32 batches of 2^30 values: 8 GiB, more than the tests' heap (and any heap below it)
    long heap = Runtime.getRuntime().maxMemory();
    if (heap >= 8L << 30) {
      return;
    }
    BenchRun run = assertTimeoutPreemptively(Duration.ofSeconds(30),
        () -> BenchRun.of("cpu", "--shape", "1,1,1,1,1073741824", "--iterations", "1", "--rounds", "1"));
    assertTrue(run.refusedWith("cpu: --shape '1,1,1,1,1073741824' needs at least"), run.err());
    assertTrue(run.err().contains("-Xmx"), run.err());
    assertTrue(run.out().isEmpty(), run.out());
    BenchRun gpu = assertTimeoutPreemptively(Duration.ofSeconds(30),
        () -> BenchRun.of("gpu", "--shape", "1,2,3,4,5", "--shape", "1,1,1,1,1073741824"));
    assertTrue(gpu.refusedWith("gpu: --shape '1,1,1,1,1073741824' needs at least"), gpu.err());
    assertTrue(gpu.out().isEmpty(), gpu.out());
  }

  /**
   * A hostile tester's finding: fp16 documents whose fp32 values fit the heap but not beside their fp16 copy passed
   * the check before the run and ran out of memory in it, naming no shape. The copies are counted now.
   */
  @Test
  void typedCopiesOfTheInputsCountAgainstTheHeap() {
    long heap = Runtime.getRuntime().maxMemory();
    // fp32 documents of 80% of the heap: they alone would pass; with their fp16 copy they are 120% of it
    long documents = heap * 8 / 10 / (128L * 128 * Float.BYTES);
    org.junit.jupiter.api.Assumptions.assumeTrue(documents >= 1 && documents * 128 * 128 <= Shapes.MAX_ELEMENTS,
        "a heap whose 80% in fp32 documents of 128 x 128 one array holds");
    String shape = "1," + documents + ",1,128,128";
    BenchRun run = assertTimeoutPreemptively(Duration.ofSeconds(30),
        () -> BenchRun.of("cpu", "--shape", shape, "--dtype", "fp16", "--iterations", "1", "--rounds", "1"));
    assertTrue(run.refusedWith("cpu: --shape '" + shape + "' needs at least"), run.err());
    assertTrue(run.err().contains("the inputs' copies in the benchmarked types"), run.err());
    assertTrue(run.out().isEmpty(), run.out());
  }

  @Test
  void theNaivePathIsSkippedWhereTheHeapCannotHoldItsCopiesNotRunIntoOutOfMemory() {
    // 2 GiB of fp32 documents: the inputs fit the tests' 4 GiB heap, but not again as the naive path's copy
    long heap = Runtime.getRuntime().maxMemory();
    if (heap >= 9L << 29 || heap < 5L << 29) {
      return;
    }
    BenchRun run = BenchRun.of("cpu", "--shape", "1,4000,32,1000,128", "--iterations", "1", "--rounds", "1");
    assertTrue(run.status() == 0, run.err());
    String row = run.out().lines().filter(l -> l.startsWith("1,4000,")).findFirst().orElseThrow();
    assertTrue(row.matches(".* - +- .*"), "naive ms and speedup are '-': " + row);
  }

  @Test
  void sgemmOfAllPairsIsSkippedWhereItsOutputDoesNotFitTheHeap() {
    // 1 x 60000 x 32 x 1000: an all-pairs product of 1.92e9 floats, one array but 7.2 GiB
    if (Runtime.getRuntime().maxMemory() >= 7L << 30) {
      return;
    }
    BenchRun run = BenchRun.of("cpu", "--sgemm", "--shape", "1,60000,32,1000,1", "--iterations", "1", "--rounds",
        "1");
    if (run.refusedWith("--sgemm needs OpenBLAS")) {
      return; // no OpenBLAS on this host: --sgemm is refused (a usage error, status 2), as it should be
    }
    assertTrue(run.status() == 0, run.err());
    String row = run.out().lines().filter(l -> l.startsWith("1,60000,")).findFirst().orElseThrow();
    assertTrue(row.matches(".* - .*"), "sgemm all is '-': " + row);
  }

  @Test
  void perPairSgemmProductsThatCannotBeHeldAreRefusedBeforeAnyShapeRuns() {
    // Lq x Ld past 2^31 wrapped the per-thread product array's int size; under it, threads x 6.4 GB passed the heap
    for (String shape : new String[] {"1,1,50000,50000,1", "1,2,40000,40000,1"}) {
      BenchRun run = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> BenchRun.of("cpu", "--sgemm", "--shape",
          "1,2,3,4,5", "--shape", shape, "--threads", "2", "--iterations", "1", "--rounds", "1"));
      if (run.refusedWith("--sgemm needs OpenBLAS")) {
        return; // no OpenBLAS on this host
      }
      assertTrue(run.refusedWith("cpu: --sgemm with --shape '" + shape + "'"), shape + ": " + run.err());
      assertTrue(run.out().isEmpty(), run.out());
    }
  }

  @Test
  void optionsAreReadBeforeTheGpuIsLookedForAndBeforeAnyWork() {
    // read only after the GPU was found, --single-documents x passed on a host without one as "no GPU"
    assertTrue(BenchRun.of("gpu-scale", "--single-documents", "x").refusedWith("--single-documents = 'x'"));
    // random documents of up to 256 x 128 values, one array: more of them overflowed as "integer overflow"
    BenchRun quality = BenchRun.of("quality", "--random-docs", "1000000");
    assertTrue(quality.refusedWith("quality: --random-docs = 1000000"), quality.err());
    // a device given no document would allocate 0 bytes, a driver error after the others' shards are generated
    assertTrue(BenchRun.of("gpu-scale", "--devices", "0,1,2", "--documents", "2")
        .refusedWith("gpu-scale: --documents 2 split across 3 GPUs; expected at least one document a GPU"));
    assertTrue(BenchRun.of("gpu-scale", "--devices", "0,1", "--single-documents", "1")
        .refusedWith("gpu-scale: --single-documents 1 split across 2 GPUs"));
    // the largest count this heap holds (about 220 KB each) is accepted, up to the array's 65535
    long most = Math.min(65535, Runtime.getRuntime().maxMemory() / (3L * 144 * 128 * 4));
    BenchRun largest = BenchRun.of("quality", "--random-docs", Long.toString(most), "--translations", "/nonexistent");
    assertTrue(largest.failedCleanly() && largest.err().contains("--translations"), largest.err());
  }

  @Test
  void optionsTheRunWouldNotReadAreRefusedNotIgnored() {
    String[][] cases = {
        {"gpu-scale", "--single-documents", "5"},
        {"gpu-scale", "--devices", "0,1", "--stream-documents", "5"},
        {"gpu-scale", "--devices", "0,1", "--stream-cap-gb", "1"},
        {"gpu-scale", "--devices", "0,1", "--check-documents", "5"},
        {"gpu-scale", "--devices", "0,1", "--skip-stream"},
        {"gpu-scale", "--skip-resident", "--skip-stream"},
        {"gpu", "--train", "--threads", "2"},
        {"plot", "speedup", "--in", "x.json", "--out", "y.svg", "--lq", "48"},
        {"plot", "goals", "--in", "x.json", "--out", "y.svg", "--ld", "300"}};
    for (String[] argv : cases) {
      BenchRun run = BenchRun.of(argv);
      assertTrue(run.status() == 2 && run.err().lines().count() == 1 && run.err().contains(argv[argv.length - 1]
          .matches("[0-9,]+") ? argv[argv.length - 2] : argv[argv.length - 1]), String.join(" ", argv) + ": "
          + run.err());
    }
  }
}
