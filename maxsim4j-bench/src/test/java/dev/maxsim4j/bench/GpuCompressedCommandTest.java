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
        "gpu: --query-dtype 'binary-sym' is unknown; expected fp32, fp16, bf16, int8, fp8 or binary"));
    assertTrue(BenchRun.of("gpu", "--dtype", "int4").refusedWith(
        "gpu: --dtype 'int4' is unknown; expected fp32, fp16, bf16, int8, fp8, binary or binary-sym"));
    assertTrue(BenchRun.of("gpu", "--dtype", "binary-sym", "--query-dtype", "int8").refusedWith(
        "gpu: --dtype binary-sym times 1-bit queries, but --query-dtype is int8"));
    assertTrue(BenchRun.of("gpu-fde", "--dtype", "int8").refusedWith(
        "gpu-fde: --dtype 'int8' is not a type gpu-fde takes; expected fp32, fp16 or bf16"));
    // the names of every bench command are one table: case and aliases as the CPU bench takes them (read as
    // compressed types, so --train is refused after them: on a GPU the command would otherwise run its bench)
    for (String name : new String[] {"INT8", "i8", "e4m3", "Binary-Sym"}) {
      assertTrue(BenchRun.of("gpu", "--dtype", name, "--train").refusedWith(
          "gpu: --dtype " + name + " times inference only"), name);
    }
  }

  @Test
  void compressedDocumentsAreTimedForInferenceOnly() {
    assertTrue(BenchRun.of("gpu", "--dtype", "fp8", "--train").refusedWith(
        "gpu: --dtype fp8 times inference only; expected no --train or --compare"));
    assertTrue(BenchRun.of("gpu", "--dtype", "binary-sym", "--compare", "x.json").refusedWith(
        "gpu: --dtype binary-sym times inference only"));
  }
}
