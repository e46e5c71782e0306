// Split-Ld, shared by the block kernels that support it (maxsim_forward_mma.cu, maxsim_forward_wgmma.cu).
#pragma once
#include "common/maxsim_common.cuh"

namespace maxsim4j {

// Few pairs with long documents leave most SMs idle (16 x 32 pairs of 8192 tokens: 512 blocks that each
// walk 8192 tokens). Then the launch has gridDim.y = slices > 1: block (x, y) scans tokens
// [y * sliceTokens, (y + 1) * sliceTokens) of its pair's document and, instead of a score, leaves each query
// row's (max, argmax) of that slice in the partial buffers, at ((pair * slices + y) * partialStride + row).
// maxsim_merge_slices (maxsim_merge.cu) then merges the slices in order and sums the rows.
//
// Split passes (maxsim_forward_wgmma.cu only, passSplit = 1): a query longer than one pass of rows has its
// passes spread over gridDim.y instead, block (x, y) scanning whole documents with pass y's rows only, so
// a block loads its rows once (a reload drains the copy ring) and the passes of a pair run side by side,
// reading the document from L2. Each leaves its rows' (max, argmax) as partials of one slice,
// (pair * partialStride + row), and the same merge sums the rows.
struct Split {
  int sliceTokens;  // tokens per slice, a multiple of every scan step; unused unless the document is sliced
  float* partialMax;
  int* partialArgmax;
  int partialStride;  // rows per (pair, slice): the longest query
  int passSplit;      // 1: gridDim.y spreads passes, not slices
};

// Whether blocks leave partials for maxsim_merge_slices rather than scores (either split).
__device__ __forceinline__ bool isSliced() { return gridDim.y > 1; }

// Whether block (x, y) scans only slice y of the document.
__device__ __forceinline__ bool slicesDocument(const Split& split) { return gridDim.y > 1 && !split.passSplit; }

__device__ __forceinline__ size_t partialAt(const Split& split, long long pair, int row) {
  if (split.passSplit) return (size_t)pair * split.partialStride + row;
  return ((size_t)pair * gridDim.y + blockIdx.y) * split.partialStride + row;
}

}  // namespace maxsim4j
