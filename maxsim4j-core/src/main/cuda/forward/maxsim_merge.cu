// The second pass of split-Ld (see Split in maxsim_forward_mma.cu): each (pair, slice) left one (max, argmax)
// per query row; this merges the slices in slice order (ties keep the lower document slot, NaN dominates),
// drops masked query rows, and sums the rest in a fixed order, so the result does not depend on which
// slice finished first. One warp per pair.
#include "common/maxsim_common.cuh"

namespace maxsim4j {

constexpr int MERGE_WARPS = 8;

__device__ void mergeSlices(const float* __restrict__ partialMax, const int* __restrict__ partialArgmax, int slices,
                            int sliceTokens, int partialStride, Rows qRows, const int* __restrict__ dLength,
                            const int* __restrict__ dValid, int query, int doc, long long pair, float* scores,
                            int* argmax, int argmaxStride) {
  const int lane = threadIdx.x % 32;
  const int qStart = qRows.rowStart[query], qLength = qRows.rowLength[query];
  const bool empty = dValid[doc] == 0;
  const int written = min(slices, (dLength[doc] + sliceTokens - 1) / sliceTokens);  // slices past the end wrote nothing
  float sum = 0.f;
  for (int s0 = 0; s0 < max(qLength, argmaxStride); s0 += 32) {
    int s = s0 + lane;
    int index = -1;
    if (s < qLength && !empty && isValid(qRows, qStart + s)) {
      float v = -INFINITY;
      index = NO_TOKEN;
      for (int y = 0; y < written; y++) {
        size_t at = ((size_t)pair * slices + y) * partialStride + s;
        maxMerge(v, index, partialMax[at], partialArgmax[at]);
      }
      sum += v;
    }
    if (argmax != nullptr && s < argmaxStride) argmax[pair * argmaxStride + s] = index;
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (lane == 0) scores[pair] = empty ? EMPTY_DOCUMENT_SCORE : sum;
}

}  // namespace maxsim4j

using namespace maxsim4j;

// Pairs as in maxsim_forward_* (mode, perQuery, docOffset); grid = ceil(pairs / MERGE_WARPS) blocks of
// MERGE_WARPS warps.
extern "C" __global__ void __launch_bounds__(MERGE_WARPS * 32)
    maxsim_merge_slices(const float* partialMax, const int* partialArgmax, int slices, int sliceTokens,
                        int partialStride, const int* qStart, const int* qLength, const uint8_t* qMask,
                        const int* dLength, const int* dValid, int mode,
                        int perQuery, int docOffset, float* scores, int* argmax, int argmaxStride, long long pairs) {
  long long pair = (long long)blockIdx.x * MERGE_WARPS + threadIdx.x / 32;
  if (pair >= pairs) return;
  int query = (int)(pair / perQuery);
  int doc = mode == ALL_PAIRS ? docOffset + (int)(pair % perQuery) : (int)pair;
  mergeSlices(partialMax, partialArgmax, slices, sliceTokens, partialStride, Rows{qStart, qLength, qMask}, dLength,
              dValid, query, doc, pair, scores, argmax, argmaxStride);
}
