package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.MaxSim;
import org.junit.jupiter.api.Test;

/** Which GPUs maxsim4j.cuda.devices names, and why none is usable. */
class CudaDevicesTest {
  private static final String EXPECTED = "; expected comma-separated ordinals of distinct visible devices, 0 .. 1"
      + " (the driver reports 2 devices), e.g. 0,1";

  @Test
  void namesDistinctVisibleOrdinalsInTheirOrder() {
    assertArrayEquals(new int[] {0, 1}, CudaDevices.parse("0,1", 2));
    assertArrayEquals(new int[] {1, 0}, CudaDevices.parse(" 1 , 0 ", 2));
    assertArrayEquals(new int[] {3}, CudaDevices.parse("3", 8));
  }

  @Test
  void anythingElseIsRefusedNamingTheProperty() {
    String[][] cases = {
        {"", " holds '', not an ordinal"},
        {"0,", " holds '', not an ordinal"},
        {"0;1", " holds '0;1', not an ordinal"},
        {"+1", " holds '+1', not an ordinal"},
        {"\u0661", " holds '\u0661', not an ordinal"},
        {"2", " names device 2, which is not visible"},
        {"-1", " names device -1, which is not visible"},
        {"1,1", " names device 1 twice"}};
    for (String[] c : cases) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CudaDevices.parse(c[0], 2));
      assertEquals("system property maxsim4j.cuda.devices = '" + c[0] + "'" + c[1] + EXPECTED, e.getMessage());
    }
    IllegalArgumentException one = assertThrows(IllegalArgumentException.class, () -> CudaDevices.parse("1", 1));
    assertEquals("system property maxsim4j.cuda.devices = '1' names device 1, which is not visible; expected"
        + " comma-separated ordinals of distinct visible devices, 0 .. 0 (the driver reports 1 device), e.g. 0,1",
        one.getMessage());
  }

  /** One usable GPU makes the backend available, whichever ordinal it has; none names the first one's reason. */
  @Test
  void oneUsableGpuIsEnoughAndNoneNamesTheFirstReason() {
    String old = "GPU 0 (Old) has compute capability 6.1; maxsim4j needs 7.5 or newer";
    assertEquals(java.util.Optional.empty(), CudaDevice.noneUsable(2,
        o -> o == 0 ? java.util.Optional.of(old) : java.util.Optional.empty()));
    assertEquals(java.util.Optional.of(old), CudaDevice.noneUsable(1, o -> java.util.Optional.of(old)));
    assertEquals(java.util.Optional.of("none of the 3 visible GPUs can run maxsim4j's kernels: " + old
        + ", and the others alike or worse"), CudaDevice.noneUsable(3, o -> java.util.Optional.of(old)));
  }

  /**
   * auto refuses malformed CUDA settings where no GPU is visible too, where it scores on the CPU: they were read only
   * beside a GPU, so a mistake passed every CPU-only machine (found by a hostile tester).
   */
  @Test
  void autoRefusesMalformedCudaSettingsWithOrWithoutAGpu() {
    String[][] settings = {{CudaDevices.PROPERTY, "0,,1"}, {MemoryBudget.PROPERTY, "2g"}};
    for (String[] setting : settings) {
      String previous = System.getProperty(setting[0]);
      System.setProperty(setting[0], setting[1]);
      try {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> MaxSim.builder().backend("auto").threads(1).build().close());
        assertTrue(e.getMessage().contains(setting[0] + " = '" + setting[1] + "'"), e.getMessage());
      } finally {
        if (previous == null) {
          System.clearProperty(setting[0]);
        } else {
          System.setProperty(setting[0], previous);
        }
      }
    }
    MaxSim.builder().backend("auto").threads(1).build().close();
  }
}
