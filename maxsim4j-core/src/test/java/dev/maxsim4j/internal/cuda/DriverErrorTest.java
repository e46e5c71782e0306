package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.CudaException;
import dev.maxsim4j.GpuTest;
import org.junit.jupiter.api.Test;

/** A failing driver call becomes a CudaException carrying the driver's own error name and text. */
@GpuTest
class DriverErrorTest {

  @Test
  void errorsCarryTheDriversName() {
    CudaException e = assertThrows(CudaException.class, () -> Driver.check(2, "cuMemAlloc(huge)"));
    assertEquals("CUDA_ERROR_OUT_OF_MEMORY", e.errorName());
    assertEquals(2, e.errorCode());
    assertTrue(e.isOutOfMemory());
    assertFalse(assertThrows(CudaException.class, () -> Driver.check(1, "cuMemcpy")).isOutOfMemory());
    assertTrue(e.getMessage().startsWith("cuMemAlloc(huge) failed: CUDA_ERROR_OUT_OF_MEMORY (2): "), e.getMessage());
  }

  /** The codes CudaException counts as a failed kernel are the driver's own for those errors. */
  @Test
  void theFaultsThatLoseTheContextAreTheDriversOwn() {
    String[] names = {"ILLEGAL_ADDRESS", "LAUNCH_TIMEOUT", "ASSERT", "HARDWARE_STACK_ERROR", "ILLEGAL_INSTRUCTION",
        "MISALIGNED_ADDRESS", "INVALID_ADDRESS_SPACE", "INVALID_PC", "LAUNCH_FAILED", "TENSOR_MEMORY_LEAK"};
    int[] codes = {700, 702, 710, 714, 715, 716, 717, 718, 719, 721};
    for (int i = 0; i < codes.length; i++) {
      int code = codes[i];
      CudaException e = assertThrows(CudaException.class, () -> Driver.check(code, "cuStreamSynchronize"));
      assertEquals("CUDA_ERROR_" + names[i], e.errorName());
      assertTrue(e.isContextLost(), e.getMessage());
    }
    assertFalse(assertThrows(CudaException.class, () -> Driver.check(701, "cuLaunchKernel")).isContextLost());
  }

  @Test
  void anImpossibleAllocationIsAnExceptionNotACrash() {
    try (CudaDevice device = new CudaDevice(0)) {
      CudaException e = assertThrows(CudaException.class, () -> device.allocate(1L << 50));
      assertEquals("CUDA_ERROR_OUT_OF_MEMORY", e.errorName());
      assertTrue(e.isOutOfMemory());
    }
  }
}
