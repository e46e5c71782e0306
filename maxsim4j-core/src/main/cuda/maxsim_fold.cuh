// The online max of the wgmma forwards (maxsim_forward_wgmma.cu, maxsim_forward_wgmma_ws.cu): one tile of
// a warpgroup's fp32 accumulators folded into each row's running max (and argmax, for training).
#pragma once
#include "maxsim_async.cuh"
#include "maxsim_common.cuh"
#include "maxsim_mma.cuh"

namespace maxsim4j {

// v[0] = the max.NaN of v[0 .. 2 WIDTH - 1], by halves (WIDTH a power of two, a constant at every level,
// so the loops unroll and v stays in registers).
template <int WIDTH, int M>
__device__ __forceinline__ void foldHalves(float (&v)[M]) {
#pragma unroll
  for (int i = 0; i < WIDTH; i++) v[i] = maxKeepNaN(v[i], v[i + WIDTH]);
  if constexpr (WIDTH > 1) foldHalves<WIDTH / 2>(v);
}

// The max of row h's N / 4 accumulators in this thread (tokens 8j + 2 tig + c of a tile), every token
// valid: a tree of max.NaN, 5 levels for N = 128, not a chain of 31 with a select before each (the chain
// and its selects were ~290 instructions a warp per tile, most of the consumer's issue slots in the
// warp-specialized kernel: docs/benchmarks.md v23). max.NaN is exact and NaN wins, so the order is free.
template <int N>
__device__ __forceinline__ float wholeTileMax(const float (&acc)[N / 2], int h) {
  float v[N / 4];
#pragma unroll
  for (int j = 0; j < N / 8; j++) {
    v[2 * j] = acc[4 * j + 2 * h];
    v[2 * j + 1] = acc[4 * j + 2 * h + 1];
  }
  foldHalves<N / 8>(v);
  return v[0];
}

// Online max over one tile's accumulators (tokens t0 .. t0 + N - 1 of the document): this thread's rows
// g and g + 8 of its warp, tokens t0 + 8j + 2 tig + {0, 1}. The value is one max.NaN per element; with
// TREE, a tile whose tokens are all valid (no mask, inside the document: all but a ragged document's
// last) takes the tree above, others a select per token. The argmax (training) is found in a second pass
// only when the tile's max beats the running one (strictly, or NaN arriving first): on most tiles of a
// long document it does not, so the index costs little. A tie with an earlier tile keeps the earlier
// token; within a tile the first equal token in order wins: the lowest index, as maxUpdate would give.
// TREE = false keeps the select per token on whole tiles too (the wgmma kernel): there the tree measured
// no faster where the fold's cost shows (Lq = 128: 0.0680 against 0.0670 ms per call in flight) and
// slower where it does not (d = 1024: 0.076 -> 0.087, its registers 144 -> 177; docs/benchmarks.md, v24c).
template <bool ARGMAX, int N, bool TREE>
__device__ __forceinline__ void foldTile(float (&best)[2], int (&bestIndex)[2], const float (&acc)[N / 2],
                                         const Rows& dRows, int dStart, int t0, int tEnd, int tig) {
  const bool whole = t0 + N <= tEnd && dRows.mask == nullptr;
  float tileMax[2] = {-INFINITY, -INFINITY};
  if (TREE && whole) {
#pragma unroll
    for (int h = 0; h < 2; h++) tileMax[h] = wholeTileMax<N>(acc, h);
  } else {
#pragma unroll
    for (int j = 0; j < N / 8; j++) {
#pragma unroll
      for (int c = 0; c < 2; c++) {
        const int t = t0 + 8 * j + 2 * tig + c;
        const bool valid = whole || (t < tEnd && isValid(dRows, dStart + t));
#pragma unroll
        for (int h = 0; h < 2; h++) tileMax[h] = maxKeepNaN(tileMax[h], valid ? acc[4 * j + 2 * h + c] : -INFINITY);
      }
    }
  }
#pragma unroll
  for (int h = 0; h < 2; h++) {
    const float m = tileMax[h];
    const bool mNaN = m != m;
    if constexpr (ARGMAX) {
      if (m > best[h] || (mNaN && best[h] == best[h])) {
        int index = 0x7fffffff;
        if (whole && !mNaN) {
          // every token valid and m one of them: the first k with acc == m, a compare and a select each
          // (the general loop below costs ~4x that, and on a long document some row of a warp beats its
          // running max on most tiles: v26)
          int k = 0;
#pragma unroll
          for (int j = N / 8 - 1; j >= 0; j--)
#pragma unroll
            for (int c = 1; c >= 0; c--)
              if (acc[4 * j + 2 * h + c] == m) k = 2 * j + c;
          index = t0 + 8 * (k >> 1) + 2 * tig + (k & 1);
        } else {
#pragma unroll
          for (int j = N / 8 - 1; j >= 0; j--) {  // backwards: the first match in token order is written last
#pragma unroll
            for (int c = 1; c >= 0; c--) {
              const int t = t0 + 8 * j + 2 * tig + c;
              const float v = acc[4 * j + 2 * h + c];
              const bool valid = whole || (t < tEnd && isValid(dRows, dStart + t));
              if (valid && (v == m || (mNaN && v != v))) index = t;
            }
          }
        }
        bestIndex[h] = index;
        best[h] = m;
      }
    } else {
      best[h] = maxKeepNaN(best[h], m);
    }
  }
}

// A row's running (max, argmax) across the quad of lanes that holds it (epilogue 1): the index too with
// ARGMAX (ties to the lower token), else the max alone.
template <bool ARGMAX>
__device__ __forceinline__ void quadMax(float& v, int& i) {
  if constexpr (ARGMAX) {
    quadMerge(v, i);
  } else {
    for (int offset = 1; offset < 4; offset *= 2) v = maxKeepNaN(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
}

}  // namespace maxsim4j
