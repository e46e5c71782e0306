// Asynchronous copies into shared memory (cp.async, sm_80+) and the NaN-keeping max of the inference
// epilogues, shared by the streaming kernels (maxsim_forward_stream.cu, maxsim_forward_wgmma.cu, the compressed
// kernels).
#pragma once
#include <stdint.h>

namespace maxsim4j {

// 16 bytes from global memory to shared memory `slot`; zeros instead when !present (src is then not read,
// but must still be a valid address). PREFETCH (0 or 128): the L2 prefetch-size hint, so that a miss
// fetches the aligned 128 bytes from DRAM rather than the 32-byte sectors the copy touches (the 256-byte
// hint measured less good on the streaming kernel; see docs/design/kernel-selection.md, section 17).
template <int PREFETCH = 0>
__device__ __forceinline__ void copyAsync16(uint32_t slot, const void* src, bool present) {
  static_assert(PREFETCH == 0 || PREFETCH == 128, "prefetch sizes: 0, 128");
  if constexpr (PREFETCH == 128) {
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(slot), "l"(src),
                 "r"(present ? 16 : 0));
  } else {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(slot), "l"(src), "r"(present ? 16 : 0));
  }
}
// 4 or 8 bytes from global to shared (.ca: these sizes are not allowed with .cg); zeros where !present.
template <int BYTES>
__device__ __forceinline__ void copyAsyncSmall(uint32_t slot, const void* src, bool present) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(slot), "l"(src), "n"(BYTES),
               "r"(present ? BYTES : 0));
}

__device__ __forceinline__ void commitGroup() { asm volatile("cp.async.commit_group;\n" ::); }
// Waits until at most PENDING of this thread's commit groups are still in flight.
template <int PENDING>
__device__ __forceinline__ void waitGroups() { asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING)); }

// max that keeps NaN (fmaxf drops it): one instruction.
__device__ __forceinline__ float maxKeepNaN(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;\n" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

}  // namespace maxsim4j
