package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What a CPU kernel holds for a call is counted as that kernel holds it, in a JVM of a small heap: a reviewer found
 * calls the kernels run refused (1-bit documents read through tables counted as widened to fp32 for each thread,
 * fp32 rows on the heap of one masked run counted as copied) and one that ran out of memory instead (a mapped bf16
 * document staged whole on the heap beside its fp32 copy, now staged in pieces).
 */
class KernelWorkingMemoryTest {
  @Test
  void callsTheKernelsRunAreNotRefusedAndNoneRunsOutOfMemory() throws Exception {
    String out = ChildJvm.run(List.of("-Xmx128m"), Calls.class, 300);
    assertTrue(out.contains("tables on 8 threads, masked rows in place on 8 threads, a mapped bf16 document"), out);
  }

  static final class Calls {
    public static void main(String[] args) {
      long heap = Runtime.getRuntime().maxMemory();
      int dim = 128;
      TokenBatch query = TokenBatch.ofFloats(new RandomBatches().floats(32 * dim), 1, 32, dim);
      try (MaxSim m = MaxSim.builder().backend("vector").threads(8).build()) {
        // 8 threads widening 1-bit documents of this length to fp32 would take 0.6 of the heap beside them
        int bits = (int) (heap * 0.6 / 8 / (4L * dim));
        m.scores(query, TokenBatch.ofBytes(DType.BINARY, new byte[8 * bits * dim / 8], null, 8, bits, dim));
        // fp32 documents of 0.45 of the heap, each row's last token masked: one run a row, read where it lies
        int length = (int) (heap * 0.45 / 8 / (4L * dim));
        boolean[][] mask = new boolean[8][length];
        for (boolean[] row : mask) {
          java.util.Arrays.fill(row, 0, length - 1, true);
        }
        m.scores(query, TokenBatch.ofFloats(new float[8 * length * dim], 8, length, dim).withMask(mask));
      }
      // one mapped bf16 document whose fp32 copy takes 0.6 of the heap: staged whole beside it, 0.9
      int tokens = (int) (heap * 0.6 / (4L * dim));
      try (Arena arena = Arena.ofShared(); MaxSim m = MaxSim.builder().backend("vector").threads(1).build()) {
        MemorySegment bf16 = arena.allocate(ValueLayout.JAVA_SHORT, (long) tokens * dim);
        m.scores(query, TokenBatch.fromMemorySegment(bf16, DType.BFLOAT16, 1, tokens, dim));
      }
      System.out.println("tables on 8 threads, masked rows in place on 8 threads, a mapped bf16 document");
    }
  }
}
