// The online max of the wgmma forwards (maxsim_forward_wgmma.cu, maxsim_forward_wgmma_ws.cu): one tile of
// a warpgroup's accumulators folded into each row's running max (and argmax, for training), scaled first
// where a side holds compressed tokens.
#pragma once
#include "common/maxsim_async.cuh"
#include "common/maxsim_common.cuh"
#include "common/maxsim_mma.cuh"

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
// and its selects took most of the consumer's issue slots in the warp-specialized kernel). max.NaN is
// exact and NaN wins, so the order is free.
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

// Whether a tile's max m (of this thread's values in a row) beats the running max: strictly, or NaN
// arriving first (a tie keeps the earlier tile's token).
__device__ __forceinline__ bool beats(float m, float best) { return m > best || (m != m && best == best); }

// The token of row h's first value (in token order: value k is token t0 + 8 (k / 2) + 2 tig + k % 2) that
// equals m, or of its first NaN when m is NaN (max.NaN makes m NaN exactly when one is), on a whole tile:
// a compare and a select per value.
template <int N>
__device__ __forceinline__ int firstMatch(const float (&acc)[N / 2], int h, float m, int t0, int tig) {
  int k = 0;
  if (m == m) {
#pragma unroll
    for (int j = N / 8 - 1; j >= 0; j--)  // backwards: the first match in token order is written last
#pragma unroll
      for (int c = 1; c >= 0; c--)
        if (acc[4 * j + 2 * h + c] == m) k = 2 * j + c;
  } else {
#pragma unroll
    for (int j = N / 8 - 1; j >= 0; j--)
#pragma unroll
      for (int c = 1; c >= 0; c--)
        if (acc[4 * j + 2 * h + c] != acc[4 * j + 2 * h + c]) k = 2 * j + c;
  }
  return t0 + 8 * (k >> 1) + 2 * tig + (k & 1);
}

// Online max and argmax over a whole tile (every token valid: no mask, inside the document; all but a
// ragged document's last tile): each row's max as a tree of max.NaN and, where the tile beats the running
// max, the index of its first match. A path of its own, with no per-token validity in it: shared with the
// general path below, ptxas computed 64 validity predicates per tile before branching and packed them
// into a register, on every tile of a training forward.
template <int N>
__device__ __forceinline__ void foldWholeTileArgmax(float (&best)[2], int (&bestIndex)[2],
                                                    const float (&acc)[N / 2], int t0, int tig) {
#pragma unroll
  for (int h = 0; h < 2; h++) {
    const float m = wholeTileMax<N>(acc, h);
    if (beats(m, best[h])) {
      bestIndex[h] = firstMatch<N>(acc, h, m, t0, tig);
      best[h] = m;
    }
  }
}

// Online max over one tile's accumulators (tokens t0 .. t0 + N - 1 of the document): this thread's rows
// g and g + 8 of its warp, tokens t0 + 8j + 2 tig + {0, 1}. The value is one max.NaN per element; with
// TREE, a whole tile takes the tree, others a select per token; with ARGMAX and SEPARATE_WHOLE a whole tile
// takes foldWholeTileArgmax instead. (Not with two row groups in the warp-specialized kernel: there it makes
// ptxas spill registers, so those keep the shared path.) The argmax (training) is found in a
// second pass only when the tile's max beats the running one: the first valid token in order equal to
// it (or the first NaN), the lowest index, as maxUpdate would give; a tie with an earlier tile keeps the
// earlier token. TREE = false keeps the select per token on whole tiles too (the wgmma kernel): there the
// tree measured no faster where the fold's cost shows and slower, with more registers, where it does not
// (docs/design/kernel-selection.md, section 17).
template <bool ARGMAX, int N, bool TREE, bool SEPARATE_WHOLE = false>
__device__ __forceinline__ void foldTile(float (&best)[2], int (&bestIndex)[2], const float (&acc)[N / 2],
                                         const Rows& dRows, int dStart, int t0, int tEnd, int tig) {
  const bool whole = t0 + N <= tEnd && dRows.mask == nullptr;
  if constexpr (ARGMAX && TREE && SEPARATE_WHOLE) {
    if (whole) {
      foldWholeTileArgmax<N>(best, bestIndex, acc, t0, tig);
      return;
    }
  }
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
    if constexpr (ARGMAX) {
      if (beats(m, best[h])) {
        int index;
        if (whole) {  // m is one of the values: as in foldWholeTileArgmax
          index = firstMatch<N>(acc, h, m, t0, tig);
        } else {
          const bool mNaN = m != m;
          index = 0x7fffffff;
#pragma unroll
          for (int j = N / 8 - 1; j >= 0; j--) {  // backwards: the first match in token order is written last
#pragma unroll
            for (int c = 1; c >= 0; c--) {
              const int t = t0 + 8 * j + 2 * tig + c;
              const float v = acc[4 * j + 2 * h + c];
              const bool valid = t < tEnd && isValid(dRows, dStart + t);
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

// The running max of one row over a tile of compressed tokens (int8 or e4m3 documents): each dot product of
// the raw values (exact in s32 for int8 on both sides, else fp32 over the exactly expanded values) times its
// document token's scale (the tile's 128, in shared memory at
// `scales`), negated where the row's query scale is negative (FLIP), over the valid tokens (every token of a
// WHOLE tile); rowScaled then applies the query scale. Four partial maxima per row keep the max.NaN chains short.
// PAIRED: `scales` is 8-byte aligned, so each thread's two adjacent scales are one load.
template <int N, bool WHOLE, bool FLIP, typename Acc, bool PAIRED = true>
__device__ __forceinline__ void foldScaledRows(float (&tileMax)[2], const Acc (&acc)[N / 2], const bool (&flip)[2],
                                               uint32_t scales, const Rows& dRows, int dStart, int t0, int tEnd,
                                               int tig) {
  float part[2][4];
#pragma unroll
  for (int h = 0; h < 2; h++)
#pragma unroll
    for (int p = 0; p < 4; p++) part[h][p] = -INFINITY;
#pragma unroll
  for (int j = 0; j < N / 8; j++) {
    float s[2];
    const uint32_t at = scales + 4 * (8 * j + 2 * tig);
    if constexpr (PAIRED) {
      asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(s[0]), "=f"(s[1]) : "r"(at));
    } else {
      asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(s[0]) : "r"(at));
      asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(s[1]) : "r"(at + 4));
    }
#pragma unroll
    for (int c = 0; c < 2; c++) {
      const int t = t0 + 8 * j + 2 * tig + c;
      const bool valid = WHOLE || (t < tEnd && isValid(dRows, dStart + t));
#pragma unroll
      for (int h = 0; h < 2; h++) {
        float v = (float)acc[4 * j + 2 * h + c] * s[c];
        if constexpr (FLIP) v = flip[h] ? -v : v;
        float& m = part[h][(2 * j + c) % 4];
        m = maxKeepNaN(m, valid ? v : -INFINITY);
      }
    }
  }
#pragma unroll
  for (int h = 0; h < 2; h++)
    tileMax[h] = maxKeepNaN(maxKeepNaN(part[h][0], part[h][1]), maxKeepNaN(part[h][2], part[h][3]));
}

// Online max over one scaled tile's accumulators (tokens t0 .. t0 + N - 1, as foldTile): rows of a negative
// query scale keep the max of the negated products, so rowScaled gives the max of the fully scaled ones.
// Whole tiles and rows of non-negative scales, the common case, take loops without a select per value.
template <int N, typename Acc>
__device__ __forceinline__ void foldScaledTile(float (&best)[2], const Acc (&acc)[N / 2], const bool (&flip)[2],
                                               uint32_t scales, const Rows& dRows, int dStart, int t0, int tEnd,
                                               int tig) {
  const bool whole = t0 + N <= tEnd && dRows.mask == nullptr;
  float tileMax[2];
  if (flip[0] || flip[1]) {
    foldScaledRows<N, false, true>(tileMax, acc, flip, scales, dRows, dStart, t0, tEnd, tig);
  } else if (whole) {
    foldScaledRows<N, true, false>(tileMax, acc, flip, scales, dRows, dStart, t0, tEnd, tig);
  } else {
    foldScaledRows<N, false, false>(tileMax, acc, flip, scales, dRows, dStart, t0, tEnd, tig);
  }
#pragma unroll
  for (int h = 0; h < 2; h++) best[h] = maxKeepNaN(best[h], tileMax[h]);
}

// Online max over one tile of products of float query rows with expanded compressed document tokens (rule 21): each
// times its document token's scale (the tile's, from shared memory at `scales`, 4-byte aligned only: the scales are
// copied from the unit holding the tile's first), over the valid tokens. No query scale, so no row flips.
template <int N>
__device__ __forceinline__ void foldDocumentScaledTile(float (&best)[2], const float (&acc)[N / 2], uint32_t scales,
                                                       const Rows& dRows, int dStart, int t0, int tEnd, int tig) {
  const bool flip[2] = {false, false};
  float tileMax[2];
  if (t0 + N <= tEnd && dRows.mask == nullptr) {
    foldScaledRows<N, true, false, float, false>(tileMax, acc, flip, scales, dRows, dStart, t0, tEnd, tig);
  } else {
    foldScaledRows<N, false, false, float, false>(tileMax, acc, flip, scales, dRows, dStart, t0, tEnd, tig);
  }
#pragma unroll
  for (int h = 0; h < 2; h++) best[h] = maxKeepNaN(best[h], tileMax[h]);
}

// A row's max from foldScaledTile's m and its query scale qs: |qs| x m. Multiplying by a fixed qs, rounding
// included, is monotone (decreasing when qs < 0, hence the negated products), so this is the max over the
// document of qs x each product. A zero scale makes every product 0, but NaN stays NaN.
__device__ __forceinline__ float rowScaled(float m, float qs) { return qs == 0.f && m == m ? 0.f : fabsf(qs) * m; }

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
