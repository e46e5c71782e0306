package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The deterministic document-gradient kernel's shared memory: 16 x d bytes at least, so from d = 3073 it passes
 * the default 48 KB (the launch opts in), and past the GPU's per-block limit (d = 65,536 on any GPU) the call is
 * refused naming d rather than failing at launch. Runs on the CPU.
 */
class OwnedBackwardTest {
  private static final int H200_OPT_IN = 232448;

  @Test
  void sharedBytesFollowTheKernelsTokensPerWarp() {
    assertEquals(4 * 4 * 16 * 128, OwnedBackward.sharedBytes(128, H200_OPT_IN));
    assertEquals(4 * 4 * 32, OwnedBackward.sharedBytes(1, H200_OPT_IN), "32 tokens per warp at most");
    assertEquals(48 * 1024, OwnedBackward.sharedBytes(3072, H200_OPT_IN), "the widest d within the default");
    assertTrue(OwnedBackward.sharedBytes(3073, H200_OPT_IN) > ForwardPlan.DEFAULT_SHARED_BYTES, "opts in");
    assertEquals(16 * 14528, OwnedBackward.sharedBytes(14528, H200_OPT_IN));
  }

  @Test
  void aDPastTheGpusLimitIsRefusedNamingDTheBytesAndTheWayOut() {
    for (int dim : new int[] {14529, 65536, Integer.MAX_VALUE}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> OwnedBackward.sharedBytes(dim, H200_OPT_IN));
      assertTrue(e.getMessage().startsWith("d = " + dim + ": the deterministic GPU backward"), e.getMessage());
      assertTrue(e.getMessage().contains("expected d <= 14528 on this GPU, or MaxSim.builder().deterministic(false)"),
          e.getMessage());
      assertTrue(e.getMessage().contains(" " + 16L * dim + " bytes"), e.getMessage());
    }
  }

  @Test
  void theConstantsAreTheKernels() throws IOException {
    String source = Files.readString(Path.of("src/main/cuda/train/maxsim_backward.cu"));
    assertEquals(OwnedBackward.WARPS, constant(source, "OWNED_WARPS"));
    assertEquals(OwnedBackward.FLOATS_PER_WARP, constant(source, "OWNED_FLOATS_PER_WARP"));
    assertTrue(source.contains("const int tokens = max(1, min(32, OWNED_FLOATS_PER_WARP / dim));"),
        "the kernel's tokens per warp, as tokensPerWarp computes them");
  }

  private static int constant(String source, String name) {
    Matcher m = Pattern.compile("constexpr int " + name + " = (\\d+);").matcher(source);
    assertTrue(m.find(), name);
    return Integer.parseInt(m.group(1));
  }
}
