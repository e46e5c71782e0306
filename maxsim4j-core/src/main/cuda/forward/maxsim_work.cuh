// Work handed out at run time to the warps of the persistent streaming kernels (maxsim_forward_stream.cu, the
// compressed ones) and to the bulk-copy kernel's producers (maxsim_forward_quant_tma.cu).
// Memory serves some SMs faster than others, so with a static split the last warps finish well after the
// first (CallPhasesProbe shows it); taking work one unit at a time lets the fast ones take more. (The
// wgmma kernel's blocks, which keep far more bytes in flight each, gained nothing from it: rule 4 of
// docs/design/kernel-selection.md.)
#pragma once

namespace maxsim4j {

// Two 64-bit counters in device memory: work[0] counts units taken beyond the first `base` ones (which
// the workers split among themselves statically), work[1] the workers that found none left. The last of those zeroes both, so the
// next launch on the stream starts from zero; the host zeroes them once, when it allocates them.
struct WorkCounters {
  unsigned long long* work;

  // The next unit past the first `base` (one thread calls it).
  __device__ __forceinline__ long long take(long long base) const {
    return (long long)atomicAdd(&work[0], 1ull) + base;
  }

  // Called once by one thread of every worker, after its last unit.
  __device__ __forceinline__ void finish(long long workers) const {
    __threadfence();  // this worker's takes come before its count
    if (atomicAdd(&work[1], 1ull) == (unsigned long long)workers - 1) {
      work[0] = 0;
      work[1] = 0;
    }
  }
};

}  // namespace maxsim4j
