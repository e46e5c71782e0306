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

  @Test
  void anImpossibleAllocationIsAnExceptionNotACrash() {
    try (CudaDevice device = new CudaDevice(0)) {
      CudaException e = assertThrows(CudaException.class, () -> device.allocate(1L << 50));
      assertEquals("CUDA_ERROR_OUT_OF_MEMORY", e.errorName());
      assertTrue(e.isOutOfMemory());
    }
  }
}
