// Deterministic pseudo-random bf16 tokens written on the device, so a benchmark corpus of tens of GB is made
// where it is scored, without a host copy. Element i of the corpus of a seed is a function of (seed, i) only:
// the same seed gives the same corpus whatever the launch shape, and a copy of it to the host equals it.
#include <cuda_bf16.h>
#include <stdint.h>

namespace maxsim4j {

// splitmix64's finaliser: every input bit flips about half the output bits
__device__ __forceinline__ uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace maxsim4j

using namespace maxsim4j;

// out[0 .. count) = bf16 of a uniform value in [-scale, scale), from (seed, index); a grid-stride loop, so any
// grid covers any count.
extern "C" __global__ void maxsim_fill_bf16(__nv_bfloat16* out, long long count, unsigned long long seed,
                                            float scale) {
  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += step) {
    uint64_t h = mix(seed * 0x9e3779b97f4a7c15ull + (uint64_t)i);
    float u = (float)(h >> 40) * (1.0f / 16777216.0f);  // 24 random bits: [0, 1)
    out[i] = __float2bfloat16_rn((2.f * u - 1.f) * scale);
  }
}
