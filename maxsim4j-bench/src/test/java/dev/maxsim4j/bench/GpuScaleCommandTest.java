package dev.maxsim4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.internal.BackendSelector;
import org.junit.jupiter.api.Test;

/** {@code gpu-scale}: its options are checked before any GPU work, and without a GPU it says so in one line. */
class GpuScaleCommandTest {

  @Test
  void helpListsIt() {
    BenchRun help = BenchRun.of("help");
    assertEquals(0, help.status());
    assertTrue(help.out().contains("gpu-scale [--documents N]"), help.out());
    assertTrue(help.out().contains("[--devices 0,1 [--single-documents N]]"), help.out());
  }

  @Test
  void badSizesAreRefusedBeforeAnyWork() {
    assertTrue(BenchRun.of("gpu-scale", "--batches", "1,x").refusedWith(
        "gpu-scale: --batches = '1,x'; expected query counts >= 1 separated by commas, e.g. 1,8,32"));
    assertTrue(BenchRun.of("gpu-scale", "--batches", "0").refusedWith("gpu-scale: --batches = '0'"));
    assertTrue(BenchRun.of("gpu-scale", "--stream-cap-gb", "-4").refusedWith(
        "gpu-scale: --stream-cap-gb = -4; expected a finite number > 0"));
    assertTrue(BenchRun.of("gpu-scale", "--documents", "10000000", "--length", "300").refusedWith(
        "gpu-scale: 10000000 documents of 300 tokens is 3000000000 tokens; expected at most 2147483647"));
    assertTrue(BenchRun.of("gpu-scale", "--k", "0").refusedWith("gpu-scale: --k = 0; expected 1 <= --k"));
    for (String devices : new String[] {"0,0", "1,x", "-1", "0,"}) {
      assertTrue(BenchRun.of("gpu-scale", "--devices", devices).refusedWith("gpu-scale: --devices = '" + devices
          + "'; expected distinct GPU ordinals separated by commas, e.g. 0,1"), devices);
    }
    assertTrue(BenchRun.of("gpu-scale", "--check-documents", "10000000", "--length", "300").refusedWith(
        "gpu-scale: 10000000 documents of 300 tokens is 3000000000 tokens; expected at most 2147483647"));
  }

  /** A hostile tester's finding: a batch and a dimension near 2^31 wrapped their product and passed the check. */
  @Test
  void sizesWhoseProductPassesALongAreRefusedToo() {
    assertTrue(BenchRun.of("gpu-scale", "--batches", "2147483647", "--dim", "2147483647").refusedWith(
        "gpu-scale: a batch of 2147483647 queries of 32 x 2147483647 values is more than one Java array holds"));
    assertTrue(BenchRun.of("gpu-fde", "--documents", "2147483647", "--length", "2147483647").refusedWith(
        "gpu-fde: 2147483647 rows of 2147483647 x 128 values is more than one Java array holds"));
    assertTrue(BenchRun.of("gpu-scale", "--stream-cap-gb", "1e30").refusedWith(
        "gpu-scale: --stream-cap-gb = 1.0E30 is 1.00e+39 bytes; expected at least 1 byte and below 2^63"));
  }

  @Test
  void aQueryBatchLargerThanAJavaArrayIsRefused() {
    assertTrue(BenchRun.of("gpu-scale", "--batches", "1,100000000", "--dim", "128").refusedWith(
        "gpu-scale: a batch of 100000000 queries of 32 x 128 values is more than one Java array holds; expected at"
            + " most 524287 queries per batch"));
  }

  @Test
  void aMemoryCapThatRoundsToNoBytesIsRefusedNotTakenAsNoCap() {
    assertTrue(BenchRun.of("gpu-scale", "--stream-cap-gb", "1e-10").refusedWith(
        "gpu-scale: --stream-cap-gb = 1.0E-10 is 0 bytes; expected at least 1 byte and below 2^63"));
    assertTrue(BenchRun.of("gpu-scale", "--stream-cap-gb", "1e300").refusedWith("expected at least 1 byte"));
  }

  @Test
  void withoutAGpuItFailsInOneLine() {
    if (BackendSelector.cudaUnavailableReason().isEmpty()) {
      return; // a GPU is here: the command would run
    }
    BenchRun run = BenchRun.of("gpu-scale", "--documents", "100", "--length", "4", "--dim", "16");
    assertTrue(run.failedCleanly(), run.err());
    assertTrue(run.err().contains("gpu-scale: no usable GPU here ("), run.err());
  }
}
