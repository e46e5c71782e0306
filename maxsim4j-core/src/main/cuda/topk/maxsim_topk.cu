// Top-k on the device: per-segment selection by bitonic sort in shared memory, repeated until each query
// keeps k candidates. Only Nq x k (score, index) pairs ever leave the device.
//
// Keys. A candidate is one 64-bit key: high word = the score's fp32 bits mapped to an unsigned order that
// matches Java's Float.compare (NaN above +inf, -0 below +0), low word = ~documentIndex. So a larger key
// means a higher score, and among equal scores a lower document index: the library's ranking, with no
// separate tie-break. Key 0 is below every real key and pads short segments.
#include <stdint.h>

namespace maxsim4j {

constexpr int TOPK_THREADS = 1024;
constexpr int SEGMENT = 2 * TOPK_THREADS;  // candidates sorted per block

__device__ __forceinline__ uint64_t scoreKey(float score, int index) {
  uint32_t bits = score != score ? 0x7fc00000u : __float_as_uint(score);  // one canonical NaN
  uint32_t ordered = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
  return ((uint64_t)ordered << 32) | (uint32_t)~(uint32_t)index;
}

// Sorts SEGMENT keys descending in shared memory (bitonic network, all threads take part).
__device__ void sortDescending(uint64_t* keys) {
  for (int size = 2; size <= SEGMENT; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      __syncthreads();
      int t = threadIdx.x;
      int i = 2 * t - (t & (stride - 1));  // first element of this thread's pair
      int j = i + stride;
      bool descending = (i & size) == 0;
      uint64_t a = keys[i], b = keys[j];
      if ((a < b) == descending) {
        keys[i] = b;
        keys[j] = a;
      }
    }
  }
  __syncthreads();
}

}  // namespace maxsim4j

using namespace maxsim4j;

// scores [queries][width] of documents docOffset .. docOffset + width - 1 -> for each (query, segment), its
// k best keys at out[query * outStride + outOffset + segment * k ...]. grid = (segments, queries).
extern "C" __global__ void __launch_bounds__(TOPK_THREADS) maxsim_topk_from_scores(
    const float* scores, int width, int docOffset, int k, uint64_t* out, long long outStride, long long outOffset) {
  __shared__ uint64_t keys[SEGMENT];
  int query = blockIdx.y;
  int first = blockIdx.x * SEGMENT;
  for (int e = threadIdx.x; e < SEGMENT; e += TOPK_THREADS) {
    int c = first + e;
    keys[e] = c < width ? scoreKey(scores[(size_t)query * width + c], docOffset + c) : 0ull;
  }
  sortDescending(keys);
  for (int r = threadIdx.x; r < k; r += TOPK_THREADS) {
    out[query * outStride + outOffset + (long long)blockIdx.x * k + r] = keys[r];
  }
}

// in[query * inStride + 0 .. count) -> for each (query, segment of SEGMENT keys), its k best, sorted, at
// out[query * outStride + segment * k ...]. grid = (segments, queries).
extern "C" __global__ void __launch_bounds__(TOPK_THREADS) maxsim_topk_from_keys(
    const uint64_t* in, long long inStride, long long count, int k, uint64_t* out, long long outStride) {
  __shared__ uint64_t keys[SEGMENT];
  int query = blockIdx.y;
  long long first = (long long)blockIdx.x * SEGMENT;
  for (int e = threadIdx.x; e < SEGMENT; e += TOPK_THREADS) {
    long long c = first + e;
    keys[e] = c < count ? in[query * inStride + c] : 0ull;
  }
  sortDescending(keys);
  for (int r = threadIdx.x; r < k; r += TOPK_THREADS) {
    out[query * outStride + (long long)blockIdx.x * k + r] = keys[r];
  }
}
