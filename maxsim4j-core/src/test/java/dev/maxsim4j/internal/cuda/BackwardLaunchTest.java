package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.internal.cuda.plan.KernelConstantsTest;
import dev.maxsim4j.internal.cuda.plan.KernelGeometry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The backward kernels' launch shapes: the deterministic document-gradient kernel's shared memory is 16 x d bytes
 * at least, so from d = 3073 it passes the default 48 KB (the launch opts in), and past the GPU's per-block limit
 * (d = 65,536 on any GPU) the call is refused naming d; rows longer than 65,535 grid rows of blocks take are
 * refused naming the row, rather than failing at launch. Runs on the CPU.
 */
class BackwardLaunchTest {
  private static final int H200_OPT_IN = 232448;

  @Test
  void sharedBytesFollowTheKernelsTokensPerWarp() {
    assertEquals(4 * 4 * 16 * 128, BackwardLaunch.sharedBytes(128, H200_OPT_IN));
    assertEquals(4 * 4 * 32, BackwardLaunch.sharedBytes(1, H200_OPT_IN), "32 tokens per warp at most");
    assertEquals(48 * 1024, BackwardLaunch.sharedBytes(3072, H200_OPT_IN), "the widest d within the default");
    assertTrue(BackwardLaunch.sharedBytes(3073, H200_OPT_IN) > KernelGeometry.DEFAULT_SHARED_BYTES, "opts in");
    assertEquals(16 * 14528, BackwardLaunch.sharedBytes(14528, H200_OPT_IN));
  }

  @Test
  void aDPastTheGpusLimitIsRefusedNamingDTheBytesAndTheWayOut() {
    for (int dim : new int[] {14529, 65536, Integer.MAX_VALUE}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> BackwardLaunch.sharedBytes(dim, H200_OPT_IN));
      assertTrue(e.getMessage().startsWith("d = " + dim + ": the deterministic GPU backward"), e.getMessage());
      assertTrue(e.getMessage().contains("expected d <= 14528 on this GPU, or MaxSim.builder().deterministic(false)"),
          e.getMessage());
      assertTrue(e.getMessage().contains(" " + 16L * dim + " bytes"), e.getMessage());
    }
  }

  @Test
  void rowsPastTheGridsLimitAreRefusedNamingTheRow() {
    assertEquals(65535, BackwardLaunch.ownedGridRows(65535 * 64, 128), "64 tokens a block at d = 128");
    assertEquals(65535, BackwardLaunch.ownedGridRows(65535 * 4, 2048), "4 tokens a block from d = 2048");
    IllegalArgumentException owned = assertThrows(IllegalArgumentException.class,
        () -> BackwardLaunch.ownedGridRows(300_000, 2048));
    assertEquals("the longest document holds 300000 tokens; the deterministic GPU backward at d = 2048 takes at"
        + " most 262140 (65535 blocks of 4 tokens); expected shorter documents, or"
        + " MaxSim.builder().deterministic(false) (atomic, fp32 gradients) or backend(\"cpu\")", owned.getMessage());
    assertThrows(IllegalArgumentException.class, () -> BackwardLaunch.ownedGridRows(Integer.MAX_VALUE, 1));
    assertEquals(65535, BackwardLaunch.slotGridRows(65535 * 8));
    IllegalArgumentException slots = assertThrows(IllegalArgumentException.class,
        () -> BackwardLaunch.slotGridRows(65535 * 8 + 1));
    assertTrue(slots.getMessage().startsWith("the longest query holds 524281 tokens; the GPU backward takes at most"
        + " 524280"), slots.getMessage());
  }

  @Test
  void theConstantsAreTheKernels() throws IOException {
    String source = Files.readString(Path.of("src/main/cuda/train/maxsim_backward.cu"));
    Map<String, Integer> kernel = KernelConstantsTest.constants("train/maxsim_backward.cu");
    assertEquals(kernel.get("OWNED_WARPS"), BackwardLaunch.WARPS);
    assertEquals(kernel.get("OWNED_FLOATS_PER_WARP"), BackwardLaunch.FLOATS_PER_WARP);
    assertEquals(kernel.get("BACKWARD_WARPS"), BackwardLaunch.SLOT_WARPS);
    assertTrue(source.contains("const int tokens = max(1, min(32, OWNED_FLOATS_PER_WARP / dim));"),
        "the kernel's tokens per warp, as tokensPerWarp computes them");
  }
}
