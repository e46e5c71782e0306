package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** What a CudaException tells a caller apart, without a GPU: the driver's names are checked in DriverErrorTest. */
class CudaExceptionTest {
  @Test
  void aFaultedKernelSaysThatTheProcessMustRestart() {
    CudaException fault = new CudaException("cuStreamSynchronize", 700, "CUDA_ERROR_ILLEGAL_ADDRESS",
        "an illegal memory access was encountered");
    assertTrue(fault.isContextLost());
    assertFalse(fault.isOutOfMemory());
    assertTrue(fault.getMessage().startsWith("cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS (700): an"
        + " illegal memory access was encountered; a kernel failed on the device"), fault.getMessage());
    assertTrue(fault.getMessage().contains("until the process restarts"), fault.getMessage());
    for (int code : new int[] {702, 710, 714, 715, 716, 717, 718, 719, 721}) {
      assertTrue(new CudaException("cuMemcpyDtoH_v2", code, "E", "e").isContextLost(), "code " + code);
    }
  }

  @Test
  void otherFailuresLeaveTheContextUsable() {
    for (int code : new int[] {1, 2, 101, 201, 209, 701, 999}) {
      CudaException e = new CudaException("cuLaunchKernel", code, "E", "e");
      assertFalse(e.isContextLost(), "code " + code);
      assertFalse(e.getMessage().contains("restart"), e.getMessage());
    }
  }
}
