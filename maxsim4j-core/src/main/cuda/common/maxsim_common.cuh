// Shared pieces of the maxsim4j kernels: how token batches are described, element loads for each
// dtype, and the NaN-keeping (value, index) max that every kernel reduces with.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace maxsim4j {

// A batch of token sets as the Java side lays it out (see internal/Tokens.java): row r owns the stored
// tokens rowStart[r] .. rowStart[r] + rowLength[r] - 1, each `dim` elements; mask (nullable) flags each
// stored token valid (1) or not (0).
struct Rows {
  const int* rowStart;
  const int* rowLength;
  const uint8_t* mask;
};

__device__ __forceinline__ bool isValid(const Rows& r, int token) {
  return r.mask == nullptr || r.mask[token] != 0;
}

// The token index a running max starts with: no valid token has beaten -inf yet.
constexpr int NO_TOKEN = 0x7fffffff;

// The argmax a row's running max leaves with (a final one or a slice's partial): its own, or where no valid token's
// product beat the start (each was -inf) the document's first valid token before tEnd, the lowest index among the
// equal maxima, as the CPU gives; NO_TOKEN where none is (a slice's partial: the merge takes another slice's).
// NO_TOKEN itself would index past the document in the backward; this runs only for such rows.
__device__ __forceinline__ int argmaxOrFirstValid(int index, const Rows& dRows, int dStart, int tEnd) {
  if (index != NO_TOKEN) return index;
  for (int t = 0; t < tEnd; t++) {
    if (isValid(dRows, dStart + t)) return t;
  }
  return NO_TOKEN;
}

__device__ __forceinline__ float widen(float v) { return v; }
__device__ __forceinline__ float widen(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float widen(__half v) { return __half2float(v); }

// Running max with the library's contract: NaN is never dropped (fmaxf would drop it), and a strict >
// keeps the earlier (lower) index on ties when candidates arrive in index order.
__device__ __forceinline__ void maxUpdate(float& best, int& bestIndex, float v, int index) {
  if (v > best || (v != v && best == best)) {
    best = v;
    bestIndex = index;
  }
}

// Combines two partial maxima that may come in any order: larger value wins, a tie goes to the lower
// index, NaN dominates.
__device__ __forceinline__ void maxMerge(float& best, int& bestIndex, float v, int index) {
  bool vNan = v != v;
  bool bNan = best != best;
  if (bNan && !vNan) return;
  if ((vNan && !bNan) || v > best || (v == best && index < bestIndex) || (vNan && bNan && index < bestIndex)) {
    best = v;
    bestIndex = index;
  }
}

// Pair p of a launch: all pairs (query p / perQuery, document p % perQuery), or listed pairs, pairwise and
// candidates (query p / perQuery, document p). The Java side's PairLayout, code for code (KernelCodesTest).
enum PairMode { ALL_PAIRS = 0, LISTED_PAIRS = 1 };

constexpr float EMPTY_DOCUMENT_SCORE = -1e9f;

// Query slots past a query's length (ragged queries in a buffer strided by the longest) have no argmax:
// -1, as on the CPU. Called once per pair by every thread of the block.
__device__ __forceinline__ void clearArgmaxTail(int* argmax, long long pair, int argmaxStride, int queryLength,
                                                int threads) {
  if (argmax == nullptr) return;
  for (int s = queryLength + (int)threadIdx.x; s < argmaxStride; s += threads) argmax[pair * argmaxStride + s] = -1;
}

// The launch's dynamic shared memory in bytes: kernels whose layout the host sizes check it (and trap) first.
__device__ __forceinline__ uint32_t dynamicSharedBytes() {
  uint32_t bytes;
  asm("mov.u32 %0, %%dynamic_smem_size;\n" : "=r"(bytes));
  return bytes;
}

}  // namespace maxsim4j
