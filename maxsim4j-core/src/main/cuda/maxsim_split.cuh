// Split-Ld, shared by the block kernels that support it (maxsim_forward_mma.cu, maxsim_forward_wgmma.cu).
#pragma once
#include "maxsim_common.cuh"

namespace maxsim4j {

// Few pairs with long documents leave most SMs idle (16 x 32 pairs of 8192 tokens: 512 blocks that each
// walk 8192 tokens). Then the launch has gridDim.y = slices > 1: block (x, y) scans tokens
// [y * sliceTokens, (y + 1) * sliceTokens) of its pair's document and, instead of a score, leaves each query
// row's (max, argmax) of that slice in the partial buffers, at ((pair * slices + y) * partialStride + row).
// maxsim_merge_slices (maxsim_merge.cu) then merges the slices in order and sums the rows.
struct Split {
  int sliceTokens;  // tokens per slice, a multiple of every scan step; unused when gridDim.y == 1
  float* partialMax;
  int* partialArgmax;
  int partialStride;  // rows per (pair, slice): the longest query
};

__device__ __forceinline__ bool isSliced() { return gridDim.y > 1; }

__device__ __forceinline__ size_t partialAt(const Split& split, long long pair, int row) {
  return ((size_t)pair * gridDim.y + blockIdx.y) * split.partialStride + row;
}

}  // namespace maxsim4j
