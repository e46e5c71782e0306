package dev.maxsim4j.bench.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.ResidentBatch;
import dev.maxsim4j.TokenBatch;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The kernel timer reaches the backend through the internal bridge, and refuses one that has no device timer. */
class KernelTimerTest {
  @Test
  void aCpuMaxSimHasNoDeviceAndNoKernelTimer() {
    TokenBatch q = TokenBatch.ofFloats(new float[8], 1, 2, 4);
    try (MaxSim maxSim = MaxSim.builder().backend("cpu").threads(1).build();
        ResidentBatch d = maxSim.upload(TokenBatch.ofFloats(new float[8], 1, 2, 4))) {
      assertEquals("", KernelTimer.device(maxSim));
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> KernelTimer.allPairsKernelMillis(maxSim, q, List.of(d), 1, 1, 1));
      assertTrue(e.getMessage().contains("expected the cuda backend"), e.getMessage());
      assertThrows(IllegalArgumentException.class,
          () -> KernelTimer.trainingStepMillis(maxSim, d, d, true, true, 1, 1, 1, new long[2]));
    }
  }

  @Test
  void aClosedMaxSimIsRefusedAsClosed() {
    MaxSim maxSim = MaxSim.builder().backend("cpu").threads(1).build();
    maxSim.close();
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> KernelTimer.device(maxSim));
    assertEquals("MaxSim is closed", e.getMessage());
  }
}
