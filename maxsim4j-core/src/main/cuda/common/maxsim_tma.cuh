// Hopper's bulk copies (TMA, sm_90: by tensor map, or of contiguous bytes) and the shared-memory barriers they
// complete, as the warp-specialized forwards use them (maxsim_forward_wgmma_ws.cu, maxsim_forward_quant_tma.cu). See the PTX ISA, "Tensor Copy
// Instructions" and "Parallel Synchronization and Communication Instructions: mbarrier".
#pragma once
#include <stdint.h>

namespace maxsim4j {

// A CUtensorMap, filled on the host by the driver's cuTensorMapEncodeTiled and passed by value
// (__grid_constant__): 128 opaque bytes.
struct alignas(64) TensorMap {
  uint64_t opaque[16];
};

// Barriers with phases: `bar` is the shared address of an 8-byte-aligned barrier. A phase completes when
// `count` arrivals have happened and every byte announced by expect_tx has landed. Waiting names the
// parity of the phase awaited: 0 for the 1st, 3rd, ... completion, 1 for the 2nd, 4th, ...; on a fresh
// barrier a wait for parity 1 returns at once (the "previous" phase counts as complete).
__device__ __forceinline__ void mbarrierInit(uint32_t bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Makes initialised barriers visible to the asynchronous proxy (the TMA unit) before any copy names them.
__device__ __forceinline__ void fenceBarrierInit() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
__device__ __forceinline__ void mbarrierArrive(uint32_t bar) {
  asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(bar) : "memory");
}
// One arrival that also announces `bytes` of asynchronous copies: the phase completes when they have landed.
__device__ __forceinline__ void mbarrierExpectBytes(uint32_t bar, uint32_t bytes) {
  asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}\n" ::"r"(bar),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbarrierWait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\nWAIT:\nmbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n@!done bra WAIT;\n}\n" ::"r"(
          bar),
      "r"(parity)
      : "memory");
}
// The same wait for a thread that expects to wait long (a producer in front of a full ring): each try may suspend
// it for up to a millisecond (it resumes when the phase completes), where the default limit is short enough that
// its retries take issue slots from the warps that share its scheduler.
__device__ __forceinline__ void mbarrierWaitSuspended(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\nWAIT:\nmbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1, %2;\n@!done bra WAIT;\n}\n" ::"r"(
          bar),
      "r"(parity), "n"(1000000)
      : "memory");
}

// The box of a 2-D tensor map at element coordinates (column, row) into shared memory at `dst` (aligned
// as the map's swizzle requires), completing its bytes on barrier `bar`. Elements outside the tensor
// arrive as zeros, and count as bytes all the same.
__device__ __forceinline__ void tmaLoadBox(uint32_t dst, const TensorMap* map, int column, int row, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(column), "r"(row), "r"(bar)
      : "memory");
}

// `bytes` (a multiple of 16) of global memory at `src` into shared memory at `dst`, both 16-byte aligned, as
// one bulk copy completing on barrier `bar` (no tensor map: the bytes are contiguous).
__device__ __forceinline__ void bulkCopy(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
// An arrival on `bar` once this thread's earlier cp.async copies have landed; counted in the barrier's
// arrivals (.noinc), so the barrier's count includes it.
__device__ __forceinline__ void copyAsyncArrive(uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

}  // namespace maxsim4j
