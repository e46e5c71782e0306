// Work handed out at run time to the warps of the persistent streaming kernels (maxsim_forward_stream.cu, the
// compressed ones) and to the bulk-copy kernel's producers (maxsim_forward_quant_tma.cu).
// Memory serves some SMs faster than others, so with a static split the last warps finish well after the
// first; taking work one unit at a time lets the fast ones take more. (The
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

// The pairs warp `w` of `warps` takes, in order: a contiguous run, so that with several queries most of a
// warp's pairs share the query fragments it holds; DYNAMIC: a run of half an even share (at least one pair:
// no atomic to start), then one pair at a time from the counters (docs/design/kernel-selection.md, rule 4).
template <bool DYNAMIC>
struct PairSplit {
  long long begin, end;
  long long dynamicBase;  // pairs from here on are taken at run time
  long long pairs;
  WorkCounters counters;
  long long next;

  __device__ PairSplit(long long pairs, long long warps, long long w, unsigned long long* work)
      : pairs(pairs), counters{work} {
    const long long staticRun = DYNAMIC ? max(1LL, pairs / (2 * warps)) : 0;
    begin = DYNAMIC ? w * staticRun : pairs * w / warps;
    end = DYNAMIC ? begin + staticRun : pairs * (w + 1) / warps;
    dynamicBase = DYNAMIC ? warps * staticRun : pairs;
    next = begin;
  }

  // The next pair, the same in every lane of the warp; one at or past `pairs` once none is left.
  __device__ __forceinline__ long long take(int lane) {
    if (next < end) return next++;
    if (dynamicBase >= pairs) return pairs;
    long long p = 0;
    if (lane == 0) p = counters.take(dynamicBase);
    return __shfl_sync(0xffffffffu, p, 0);
  }

  // After the warp's last pair: only launches that took from the counters count their warps out.
  __device__ __forceinline__ void finish(int lane, long long warps) const {
    if (dynamicBase < pairs && lane == 0) counters.finish(warps);
  }
};

}  // namespace maxsim4j
