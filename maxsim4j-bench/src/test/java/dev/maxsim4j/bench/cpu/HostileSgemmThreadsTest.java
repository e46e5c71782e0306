package dev.maxsim4j.bench.cpu;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.bench.BenchRun;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * --sgemm with more --threads than the OpenBLAS build runs: OpenBLAS capped them silently while the header said
 * "all pairs on N OpenBLAS threads", and the per-pair pool started N platform threads (32767 failed after 40 s).
 */
class HostileSgemmThreadsTest {
  @Test
  void threadsBeyondWhatOpenBlasRunsAreRefusedBeforeAnyShapeRuns() {
    OpenBlas blas;
    try {
      blas = OpenBlas.load();
    } catch (RuntimeException | LinkageError e) {
      return; // no OpenBLAS on this host: --sgemm is refused anyway
    }
    int before = blas.threads();
    blas.threads(1000);
    int most = blas.threads();
    blas.threads(before);
    if (most >= 1000) {
      return; // this OpenBLAS takes 1000 threads: nothing to refuse
    }
    BenchRun run = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> BenchRun.of("cpu", "--sgemm", "--threads",
        "1000", "--shape", "1,2,3,4,5", "--iterations", "1", "--rounds", "1"));
    assertTrue(run.refusedWith("cpu: --threads = 1000 with --sgemm"), run.err());
    assertTrue(run.err().contains("at most " + most), run.err());
    assertTrue(run.out().isEmpty(), run.out());
  }
}
