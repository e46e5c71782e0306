package dev.maxsim4j.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@code gpu --dtype int8|fp8|binary|binary-sym}: bad combinations are refused before any GPU work. */
class GpuCompressedCommandTest {

  @Test
  void queryTypesGoWithCompressedDocumentsOnly() {
    assertTrue(BenchRun.of("gpu", "--query-dtype", "fp8").refusedWith(
        "gpu: --query-dtype goes with a compressed --dtype (int8, fp8, binary, binary-sym); saw --dtype bf16"));
    assertTrue(BenchRun.of("gpu", "--dtype", "int8", "--query-dtype", "binary-sym").refusedWith(
        "gpu: --query-dtype binary-sym is unknown; expected fp32, fp16, bf16, int8, fp8 or binary"));
    assertTrue(BenchRun.of("gpu", "--dtype", "int4").refusedWith("dtype 'int4' is unknown"));
  }

  @Test
  void compressedDocumentsAreTimedForInferenceOnly() {
    assertTrue(BenchRun.of("gpu", "--dtype", "fp8", "--train").refusedWith(
        "gpu: --dtype fp8 times inference only; expected no --train or --compare"));
    assertTrue(BenchRun.of("gpu", "--dtype", "binary-sym", "--compare", "x.json").refusedWith(
        "gpu: --dtype binary-sym times inference only"));
  }
}
